/* The gate's decision rules (see gate.h). */
#include "orchestrator/gate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"

const char *tnd_gate_action_name(tnd_gate_action a)
{
    switch (a) {
    case TND_GATE_APPROVE:
        return "approve";
    case TND_GATE_REVISE:
        return "revise";
    case TND_GATE_ESCALATE:
        return "escalate";
    }
    return "?";
}

static const tnd_skill_result *find_skill(const tnd_audit_reply *a,
                                          const char *name)
{
    for (size_t i = 0; i < a->nskills; i++)
        if (strcmp(a->skills[i].name, name) == 0)
            return &a->skills[i];
    return NULL;
}

/* Required by the configuration or marked so by the reviewer. */
static bool is_required(const char *const *required, const tnd_skill_result *s)
{
    for (const char *const *r = required; r && *r; r++)
        if (strcmp(*r, s->name) == 0)
            return true;
    return s->required;
}

const char *tnd_gate_unmet(const tnd_audit_reply *a,
                           const char *const *required,
                           const tnd_skill_result **result)
{
    *result = NULL;
    for (const char *const *r = required; r && *r; r++)
        if (!find_skill(a, *r))
            return *r;
    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        /* skipped: the change does not touch its paths, nothing to fail */
        if (is_required(required, s) && s->status != TND_SKILL_PASS &&
            s->status != TND_SKILL_SKIPPED) {
            *result = s;
            return s->name;
        }
    }
    return NULL;
}

const tnd_skill_result *tnd_gate_before(const tnd_audit_reply *baseline,
                                        const char *name)
{
    const tnd_skill_result *s = baseline ? find_skill(baseline, name) : NULL;

    return s && s->status != TND_SKILL_SKIPPED ? s : NULL;
}

/* What the baseline says of a skill that did not pass: the change broke
 * it, or it was broken before. */
static const char *since(const tnd_audit_reply *baseline,
                         const tnd_skill_result *s)
{
    const tnd_skill_result *before = tnd_gate_before(baseline, s->name);

    if (!before)
        return "";
    return before->status == TND_SKILL_PASS
               ? ": a regression, it passed before the change"
               : ": not fixed, it failed before the change too";
}

/* Why the change fails, or NULL when it passes every check. The
 * reviewer's confidence is left to the caller. */
static const char *failure(char *buf, size_t size, const tnd_gate_input *in)
{
    const tnd_audit_reply *a = in->audit;
    const tnd_skill_result *s;
    const tnd_critique *c;
    const char *name;

    if (in->apply_error) {
        snprintf(buf, size, "the proposal could not be applied: %s",
                 in->apply_error);
        return buf;
    }
    if (in->format_error) {
        snprintf(buf, size, "the coder's answer held no usable edits: %s",
                 in->format_error);
        return buf;
    }
    if (in->empty) {
        snprintf(buf, size, "the proposal changes nothing");
        return buf;
    }
    if (!a) {
        snprintf(buf, size, "the change was not audited");
        return buf;
    }
    if ((name = tnd_gate_unmet(a, in->required, &s))) {
        if (!s)
            snprintf(buf, size,
                     "required skill %s did not run (the reviewer did not "
                     "report it)",
                     name);
        else if (s->ended)
            snprintf(buf, size, "required skill %s: %s, %s%s", s->name,
                     tnd_skill_status_name(s->status), s->ended,
                     since(in->baseline, s));
        else if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
            snprintf(buf, size, "required skill %s failed (exit %d)%s", s->name,
                     s->exit_code, since(in->baseline, s));
        else
            snprintf(buf, size, "required skill %s: %s%s", s->name,
                     tnd_skill_status_name(s->status), since(in->baseline, s));
        return buf;
    }
    if (!(c = a->critique)) {
        if (in->critique_skipped)
            return NULL;
        snprintf(buf, size, "no valid critique: %s",
                 a->critique_error ? a->critique_error : "none was given");
        return buf;
    }
    for (size_t i = 0; i < c->nissues; i++) {
        const tnd_issue *is = &c->issues[i];
        if (is->severity < TND_SEVERITY_MAJOR)
            continue;
        if (is->file && is->line > 0)
            snprintf(buf, size, "the reviewer found a %s issue at %s:%ld: %s",
                     tnd_severity_name(is->severity), is->file, is->line,
                     is->description);
        else if (is->file)
            snprintf(buf, size, "the reviewer found a %s issue in %s: %s",
                     tnd_severity_name(is->severity), is->file,
                     is->description);
        else
            snprintf(buf, size, "the reviewer found a %s issue: %s",
                     tnd_severity_name(is->severity), is->description);
        return buf;
    }
    if (c->verdict != TND_VERDICT_APPROVE) {
        snprintf(buf, size, "the reviewer asks for a revision: %s",
                 *c->summary ? c->summary : "(no summary)");
        return buf;
    }
    return NULL;
}

/* A change that passed: approved, unless it touches a risky path. */
static void approve(tnd_gate_decision *out, const tnd_gate_input *in,
                    const char *why)
{
    out->passed = true;
    if (in->risky) {
        out->action = TND_GATE_ESCALATE;
        snprintf(out->reason, sizeof(out->reason),
                 "the change passes (%s), but it touches %s "
                 "(gate.risk_paths): a human must approve it",
                 why, in->risky);
        return;
    }
    out->action = TND_GATE_APPROVE;
    snprintf(out->reason, sizeof(out->reason), "%s", why);
}

/* What the skills said of a passing change: that they passed, or, with
 * none run (skills: [], or none listed for the reviewer), that nothing
 * but the critique checked it. */
static const char *skills_said(const tnd_gate_input *in)
{
    return in->audit->nskills > 0 ? "every required skill passed"
                                  : "no skill checked the change "
                                    "(agents.reviewer.skills lists none)";
}

void tnd_gate_decide(tnd_gate_decision *out, const tnd_gate_config *cfg,
                     const tnd_gate_input *in)
{
    char why[sizeof(out->reason)];
    const char *fail;

    memset(out, 0, sizeof(*out));
    if (in->repeats > 0) {
        out->action = TND_GATE_ESCALATE;
        snprintf(out->reason, sizeof(out->reason),
                 "stuck: attempt %d proposes exactly the change of attempt %d",
                 in->attempt, in->repeats);
        return;
    }
    /* human_review_below is at most confidence_threshold (the config
     * checks), so a passing change the reviewer is very unsure of goes to
     * a human; one it is merely unsure of goes back for another try. */
    fail = failure(why, sizeof(why), in);
    if (!fail && !in->audit->critique) {
        snprintf(why, sizeof(why),
                 "%s; no critique trigger fired (gate.critique: on_trigger)",
                 skills_said(in));
        approve(out, in, why);
        return;
    }
    if (!fail) {
        double confidence = in->audit->critique->confidence;
        if (confidence < cfg->human_review_below) {
            out->passed = true;
            out->action = TND_GATE_ESCALATE;
            snprintf(out->reason, sizeof(out->reason),
                     "the change passes, but the reviewer's confidence %.2f "
                     "is below gate.human_review_below %.2f: a human should "
                     "look",
                     confidence, cfg->human_review_below);
            return;
        }
        if (confidence >= cfg->confidence_threshold) {
            snprintf(why, sizeof(why),
                     "%s and the reviewer approves (confidence %.2f)",
                     skills_said(in), confidence);
            approve(out, in, why);
            return;
        }
        snprintf(why, sizeof(why),
                 "the reviewer's confidence %.2f is below "
                 "gate.confidence_threshold %.2f",
                 confidence, cfg->confidence_threshold);
        fail = why;
    }
    if (in->streak >= cfg->persistent_failure_threshold) {
        out->action = TND_GATE_ESCALATE;
        if (in->streak > 1)
            snprintf(out->reason, sizeof(out->reason),
                     "the same failure %d times in a row: %s", in->streak,
                     fail);
        else
            snprintf(out->reason, sizeof(out->reason),
                     "gate.persistent_failure_threshold is 1, so any failure "
                     "goes to a human: %s",
                     fail);
    } else if (in->attempt >= cfg->max_iterations) {
        out->action = TND_GATE_ESCALATE;
        snprintf(out->reason, sizeof(out->reason),
                 "gate.max_iterations (%d) reached; last failure: %s",
                 cfg->max_iterations, fail);
    } else {
        out->action = TND_GATE_REVISE;
        snprintf(out->reason, sizeof(out->reason), "%s", fail);
    }
}

char *tnd_gate_normalise(const char *s)
{
    char *out = tnd_xmalloc(strlen(s) + 1), *o = out;
    bool space = false;

    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '0' && (p[1] == 'x' || p[1] == 'X')) {
            p += 2;
            while (isxdigit((unsigned char)*p))
                p++;
            p--;
            *o++ = '#';
            continue;
        }
        if (isdigit(c)) {
            while (isdigit((unsigned char)p[1]))
                p++;
            *o++ = '#';
            continue;
        }
        if (c == '/' &&
            (strncmp(p, "/tmp/", 5) == 0 || strncmp(p, "/var/tmp/", 9) == 0)) {
            while (p[1] && !isspace((unsigned char)p[1]) && p[1] != ':' &&
                   p[1] != '\'' && p[1] != '"')
                p++;
            memcpy(o, "<tmp>", 5);
            o += 5;
            continue;
        }
        if (isspace(c)) {
            space = true;
            continue;
        }
        if (space) {
            *o++ = ' ';
            space = false;
        }
        *o++ = (char)c;
    }
    *o = '\0';
    return out;
}

/* Hash the last keep bytes of s normalised. Normalising first keeps the
 * part hashed the same when numbers earlier in s change length. */
static uint64_t hash_normalised(uint64_t h, const char *s, size_t keep)
{
    char *n = tnd_gate_normalise(s);
    size_t len = strlen(n), from = len > keep ? len - keep : 0;

    h = tnd_str_hash(h, n + from, len - from);
    free(n);
    return h;
}

uint64_t tnd_gate_signature(const tnd_gate_input *in)
{
    uint64_t h = TND_FNV_SEED;
    const tnd_audit_reply *a = in->audit;
    bool any = false;

    if (in->apply_error)
        return hash_normalised(tnd_str_hash(h, "apply", 5), in->apply_error,
                               SIZE_MAX);
    if (in->format_error)
        return hash_normalised(tnd_str_hash(h, "format", 6), in->format_error,
                               SIZE_MAX);
    if (in->empty)
        return tnd_str_hash(h, "empty", 5);
    if (!a)
        return 0;
    for (const char *const *r = in->required; r && *r; r++) {
        if (!find_skill(a, *r)) {
            h = tnd_str_hash(h, "missing", 7);
            h = tnd_str_hash(h, *r, strlen(*r));
            any = true;
        }
    }
    /* only what the gate counts: an optional skill that always fails
     * would make every later failure look like the same one */
    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        if (!is_required(in->required, s) || s->status == TND_SKILL_PASS ||
            s->status == TND_SKILL_SKIPPED)
            continue;
        h = tnd_str_hash(h, s->name, strlen(s->name));
        h = hash_normalised(h, s->output, 2048);
        any = true;
    }
    if (a->critique) {
        for (size_t i = 0; i < a->critique->nissues; i++) {
            const tnd_issue *is = &a->critique->issues[i];
            if (is->severity < TND_SEVERITY_MAJOR)
                continue;
            h = tnd_str_hash(h, &is->type, sizeof(is->type));
            if (is->file)
                h = tnd_str_hash(h, is->file, strlen(is->file));
            any = true;
        }
    } else if (a->critique_error && !in->critique_skipped) {
        /* a critique nobody asked for is not a failure */
        h = hash_normalised(tnd_str_hash(h, "critique", 8), a->critique_error,
                            SIZE_MAX);
        any = true;
    }
    return any ? h : 0;
}
