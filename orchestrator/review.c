/* Critique triggers, risky paths and the quorum merge (see review.h). */
#include "orchestrator/review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/glob.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "orchestrator/gate.h"
#include "skills/patch.h"

/* Bytes of each member's summary in the merged one: 16 members fit the
 * protocol's 16 KiB for a summary. */
#define MEMBER_TEXT 900

/* The first required skill that did not pass, or NULL; a required
 * skill the reviewer did not report counts as not passing. */
static const char *failed_skill(const tnd_trigger_input *in)
{
    const tnd_skill_result *s;
    tnd_audit_reply none = {0};

    return tnd_gate_unmet(in->skills ? in->skills : &none, in->required, &s);
}

/* The first required skill that failed on the unmodified tree and
 * passes now, or NULL. */
static const char *fixed_skill(const tnd_trigger_input *in)
{
    if (!in->skills || !in->baseline)
        return NULL;
    for (size_t i = 0; i < in->skills->nskills; i++) {
        const tnd_skill_result *now = &in->skills->skills[i], *before;
        bool required = false;
        for (const char *const *r = in->required; r && *r && !required; r++)
            required = strcmp(*r, now->name) == 0;
        if (required && now->status == TND_SKILL_PASS &&
            (before = tnd_gate_before(in->baseline, now->name)) &&
            before->status != TND_SKILL_PASS)
            return now->name;
    }
    return NULL;
}

bool tnd_review_triggers(char *why, size_t size, const tnd_gate_config *cfg,
                         const tnd_trigger_input *in)
{
    const char *failed = failed_skill(in), *fixed = fixed_skill(in);
    bool big = in->changed_lines > (size_t)cfg->critique_diff_lines;
    bool doubt = in->last_confidence >= 0 &&
                 in->last_confidence < cfg->confidence_threshold;
    bool periodic = cfg->critique_every > 0 && in->ordinal > 0 &&
                    in->ordinal % cfg->critique_every == 0;
    tnd_buf b;

    if (cfg->critique != TND_CRITIQUE_ON_TRIGGER) {
        snprintf(why, size, "gate.critique is %s",
                 tnd_critique_mode_name(cfg->critique));
        return true;
    }
    if (!failed && !fixed && !in->risky && !in->checks && !big && !doubt &&
        !periodic) {
        snprintf(why, size, "no trigger fired (gate.critique: on_trigger)");
        return false;
    }
    /* the decision is made; the text only explains it (cut to fit) */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    if (failed)
        tnd_buf_printf(&b, "; required skill %s did not pass", failed);
    if (fixed)
        tnd_buf_printf(&b,
                       "; required skill %s failed on the unmodified tree "
                       "and passes now",
                       fixed);
    if (in->risky)
        tnd_buf_printf(&b, "; the change touches %s (gate.risk_paths)",
                       in->risky);
    if (in->checks)
        tnd_buf_printf(&b, "; the change touches %s", in->checks);
    if (big)
        tnd_buf_printf(&b,
                       "; the change has %zu changed lines "
                       "(gate.critique_diff_lines is %d)",
                       in->changed_lines, cfg->critique_diff_lines);
    if (doubt)
        tnd_buf_printf(&b,
                       "; the previous critique's confidence %.2f was below "
                       "gate.confidence_threshold %.2f",
                       in->last_confidence, cfg->confidence_threshold);
    if (periodic)
        tnd_buf_printf(&b,
                       "; task %ld is a periodic check "
                       "(gate.critique_every is %d)",
                       in->ordinal, cfg->critique_every);
    snprintf(why, size, "%s", tnd_buf_str(&b) + 2);
    tnd_buf_free(&b);
    return true;
}

const char *tnd_review_risky(char *buf, size_t size, char *const *globs,
                             const char *diff)
{
    tnd_patch patch;
    const char **paths = NULL;
    const char *found = NULL;

    if (!globs || !*globs || !diff || !*diff)
        return NULL;
    /* a diff naming too many files still has its first ones parsed */
    (void)tnd_patch_parse(&patch, diff, strlen(diff), NULL, NULL);
    paths = tnd_patch_paths(&patch);
    for (size_t i = 0; paths && paths[i] && !found; i++)
        if (tnd_glob_match_any(globs, paths[i])) {
            snprintf(buf, size, "%s", paths[i]);
            found = buf;
        }
    free(paths);
    tnd_patch_clear(&patch);
    return found;
}

/* Whether a word of line (split at blanks and the shell's punctuation)
 * is path, or "./" and path. */
static bool line_names(const char *line, const char *path)
{
    static const char seps[] = " \t\n;|&()<>'\"`=";
    size_t len = strlen(path);

    for (const char *p = line; *p;) {
        size_t n = strcspn(p, seps);
        const char *w = p;
        if (n > 2 && w[0] == '.' && w[1] == '/')
            w += 2, n -= 2;
        if (n == len && memcmp(w, path, len) == 0)
            return true;
        p = w + n;
        p += strspn(p, seps);
    }
    return false;
}

const char *tnd_review_checks(char *buf, size_t size, const tnd_config *cfg,
                              const char *diff)
{
    tnd_patch patch;
    const char **paths;
    const char *found = NULL;

    if (!diff || !*diff)
        return NULL;
    (void)tnd_patch_parse(&patch, diff, strlen(diff), NULL, NULL);
    paths = tnd_patch_paths(&patch);
    for (size_t i = 0; paths && paths[i] && !found; i++) {
        if (tnd_glob_match_any(cfg->gate.check_paths, paths[i])) {
            snprintf(buf, size, "%s, which defines checks (gate.check_paths)",
                     paths[i]);
            found = buf;
        }
        for (size_t k = 0; k < cfg->nskills && !found; k++) {
            const tnd_command *c = &cfg->skills[k].command;
            if (c->display && line_names(c->display, paths[i])) {
                snprintf(buf, size, "%s, which skill %s's command runs",
                         paths[i], cfg->skills[k].name);
                found = buf;
            }
        }
    }
    free(paths);
    tnd_patch_clear(&patch);
    return found;
}

size_t tnd_review_changed_lines(const char *diff)
{
    tnd_patch patch;
    size_t n;

    if (!diff)
        return 0;
    (void)tnd_patch_parse(&patch, diff, strlen(diff), NULL, NULL);
    n = patch.added + patch.removed;
    tnd_patch_clear(&patch);
    return n;
}

/* ---- the quorum merge --------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? tnd_xstrdup(s) : NULL;
}

static bool same_place(const tnd_issue *a, const tnd_issue *b)
{
    if (a->type != b->type || a->line != b->line)
        return false;
    if (!a->file || !b->file)
        return !a->file && !b->file;
    return strcmp(a->file, b->file) == 0;
}

/* Add member's issue to c, or fold it into the same one another member
 * raised; votes[i] counts the members that raised c's issue i. */
static void add_issue(tnd_critique *c, size_t *cap, size_t **votes,
                      size_t *vcap, const tnd_issue *is, bool *seen)
{
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *have = &c->issues[i];
        if (!same_place(have, is))
            continue;
        if (!seen[i]) {
            seen[i] = true;
            (*votes)[i]++;
        }
        if (is->severity > have->severity) {
            /* the graver reading wins, with its own words */
            free(have->description);
            free(have->evidence);
            free(have->suggested_fix);
            have->severity = is->severity;
            have->description = tnd_xstrdup(is->description);
            have->evidence = dup_or_null(is->evidence);
            have->suggested_fix = dup_or_null(is->suggested_fix);
        }
        return;
    }
    TND_GROW(c->issues, *cap, c->nissues + 1);
    TND_GROW(*votes, *vcap, c->nissues + 1);
    (*votes)[c->nissues] = 1;
    seen[c->nissues] = true;
    c->issues[c->nissues++] = (tnd_issue){
        .type = is->type,
        .severity = is->severity,
        .file = dup_or_null(is->file),
        .line = is->line,
        .description = tnd_xstrdup(is->description),
        .evidence = dup_or_null(is->evidence),
        .suggested_fix = dup_or_null(is->suggested_fix),
    };
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The middle value (the lower middle for an even count). */
static double median(double *v, size_t n)
{
    if (n > 1) /* qsort wants a pointer even for none */
        qsort(v, n, sizeof(*v), by_value);
    return v[(n - 1) / 2];
}

/* Under a majority quorum, an issue raised by no more than half of the
 * members is the minority's opinion: it stays as evidence, but minor. */
static void outvoted(tnd_critique *c, const size_t *votes, size_t n)
{
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *is = &c->issues[i];
        char *d;
        char note[96];
        size_t keep;
        if (votes[i] * 2 > n || is->severity == TND_SEVERITY_MINOR)
            continue;
        snprintf(note, sizeof(note),
                 " (%s, raised by %zu of %zu reviewers: outvoted)",
                 tnd_severity_name(is->severity), votes[i], n);
        /* the merged audit is journaled and read back by a resume under
         * the protocol's limits: a description at the limit has room made
         * for the note, at a character's boundary */
        keep = strlen(is->description);
        if (keep + strlen(note) > TND_BODY_MAX_NOTE)
            keep = tnd_utf8_whole(is->description,
                                  TND_BODY_MAX_NOTE - strlen(note));
        d = tnd_xasprintf("%.*s%s", (int)keep, is->description, note);
        free(is->description);
        is->description = d;
        is->severity = TND_SEVERITY_MINOR;
    }
}

/* Keep at most TND_BODY_MAX_ISSUES of c's issues, in their order: the
 * gravest first, so whatever blocks the change stays (the members' lists
 * add up to more than the protocol carries, and the journaled audit must
 * read back). Returns how many were left out. */
static size_t fit_issues(tnd_critique *c)
{
    size_t count[TND_SEVERITY_CRITICAL + 1] = {0}, kept = 0, room, dropped;
    int floor = TND_SEVERITY_CRITICAL;

    if (c->nissues <= TND_BODY_MAX_ISSUES)
        return 0;
    for (size_t i = 0; i < c->nissues; i++)
        count[c->issues[i].severity]++;
    /* the mildest severity kept whole, and the room left for the next */
    room = TND_BODY_MAX_ISSUES;
    while (floor > 0 && count[floor] <= room)
        room -= count[floor--];
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *is = &c->issues[i];
        bool keep = (int)is->severity > floor;
        if (!keep && (int)is->severity == floor && room > 0) {
            keep = true;
            room--;
        }
        if (keep) {
            c->issues[kept++] = *is;
            continue;
        }
        free(is->file);
        free(is->description);
        free(is->evidence);
        free(is->suggested_fix);
    }
    dropped = c->nissues - kept;
    c->nissues = kept;
    return dropped;
}

void tnd_review_merge(tnd_audit_reply *out, const tnd_audit_reply *members,
                      size_t n, bool majority)
{
    tnd_critique *c = tnd_xcalloc(1, sizeof(*c));
    double *conf = tnd_xcalloc(n + 1, sizeof(*conf));
    size_t approvals = 0, valid = 0, cap = 0, vcap = 0, total = 0, dropped;
    size_t *votes = NULL;
    bool *seen;
    tnd_buf summary;

    tnd_critique_destroy(&out->critique);
    free(out->critique_error);
    out->critique_error = NULL;
    memset(&out->usage, 0, sizeof(out->usage));
    for (size_t i = 0; i < n; i++)
        total += members[i].critique ? members[i].critique->nissues : 0;
    seen = tnd_xcalloc(total + 1, sizeof(*seen));
    tnd_buf_init(&summary, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++) {
        const tnd_critique *m = members[i].critique;
        tnd_usage_add(&out->usage, &members[i].usage);
        if (!m) {
            tnd_buf_printf(&summary, "%sreviewer %zu: no valid critique (%.*s)",
                           i ? "; " : "", i + 1, MEMBER_TEXT,
                           members[i].critique_error ? members[i].critique_error
                                                     : "none was given");
            continue;
        }
        conf[valid++] = m->confidence;
        if (m->verdict == TND_VERDICT_APPROVE)
            approvals++;
        memset(seen, 0, (total + 1) * sizeof(*seen));
        for (size_t k = 0; k < m->nissues; k++)
            add_issue(c, &cap, &votes, &vcap, &m->issues[k], seen);
        for (int k = 0; k < TND_CRITERIA; k++) {
            const tnd_criterion *mc = &m->criteria[k];
            tnd_criterion *cc = &c->criteria[k];
            if (!mc->present || (cc->present && cc->score <= mc->score))
                continue;
            free(cc->reason);
            cc->present = true;
            cc->score = mc->score;
            cc->reason = dup_or_null(mc->reason);
        }
        tnd_buf_printf(&summary, "%sreviewer %zu: %s %.2f: %.*s", i ? "; " : "",
                       i + 1, tnd_verdict_name(m->verdict), m->confidence,
                       MEMBER_TEXT, m->summary ? m->summary : "");
    }
    if (majority)
        outvoted(c, votes, n);
    if ((dropped = fit_issues(c)) > 0)
        tnd_buf_printf(&summary,
                       "; %zu issues left out (the %d gravest are kept)",
                       dropped, TND_BODY_MAX_ISSUES);
    if (valid == 0) {
        out->critique_error = tnd_xasprintf(
            "no reviewer gave a valid critique: %s", tnd_buf_str(&summary));
        tnd_critique_destroy(&c);
    } else {
        bool approve = majority ? approvals * 2 > n : approvals == n;
        double lowest = conf[0];
        for (size_t i = 1; i < valid; i++)
            if (conf[i] < lowest)
                lowest = conf[i];
        c->verdict = approve ? TND_VERDICT_APPROVE : TND_VERDICT_REVISE;
        c->confidence = majority ? median(conf, valid) : lowest;
        c->summary = tnd_xasprintf("%zu of %zu reviewers approve (quorum: "
                                   "%s): %s",
                                   approvals, n, majority ? "majority" : "all",
                                   tnd_buf_str(&summary));
        out->critique = c;
    }
    tnd_buf_free(&summary);
    free(conf);
    free(votes);
    free(seen);
}

const char *tnd_review_cannot_run(const tnd_skill_result *s)
{
    const char *p;

    if (s->status == TND_SKILL_ERROR)
        return "it could not start";
    if (s->status != TND_SKILL_FAIL)
        return NULL;
    if (s->exit_code == 127)
        return "its command was not found (exit 127)";
    if (s->exit_code == 126)
        return "its command cannot be executed (exit 126)";
    /* the target the command asked for, not a file a rule needs */
    for (p = s->output; (p = strstr(p, "No rule to make target ")); p++) {
        const char *name = p + strlen("No rule to make target ");
        const char *end;
        if (*name != '\'' && *name != '`')
            continue;
        end = strchr(name + 1, '\'');
        if (end && end[1] == '.')
            return "make has no rule for the target it names";
    }
    /* a bare make where the tree has no makefile at all */
    if (s->output && strstr(s->output, "No targets specified and no makefile "
                                       "found."))
        return "make found no Makefile in the tree";
    return NULL;
}
