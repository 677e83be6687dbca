/* report.json and the summary line (see report.h). */
#include "orchestrator/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/audit.h"
#include "proto/json.h"

struct tnd_report {
    json_object *baseline;  /* the skills before any change, or NULL */
    json_object *workspace; /* what the attempts' tree held, or NULL */
    char *session, *task, *repo, *config;
    int64_t started_wall;
    tnd_usage usage[2];
    json_object *attempts;
    json_object *round;       /* the coming attempt's critique round */
    json_object *context;     /* the coming attempt's coder context */
    json_object *unsandboxed; /* names of skills that ran with sandbox:
                                 none, each once */
    char *insecure;           /* a tcp:// endpoint open without CURVE */
    bool review;              /* tandem review, not tandem run */
    json_object *apply;       /* what --apply/--commit did, or NULL */
    json_object *answers;     /* a person's answers, in order */
    long critiques_asked, critiques_skipped, tokens_saved;
    long unanswered; /* calls in usage[] whose tokens are unknown */
    char *status, *reason, *final_diff, *last_diff;
    char *final_text;    /* the approved diff itself, or NULL */
    char *findings_text; /* what a review put on stdout, or NULL */
    int iterations;
    int64_t elapsed_ms;
};

tnd_report *tnd_report_new(const char *session, const char *task,
                           const char *repo, const char *config,
                           int64_t started_wall_ms)
{
    tnd_report *r = tnd_xcalloc(1, sizeof(*r));

    r->session = tnd_xstrdup(session);
    r->task = tnd_xstrdup(task);
    r->repo = tnd_xstrdup(repo);
    r->config = tnd_xstrdup(config);
    r->started_wall = started_wall_ms;
    r->attempts = json_object_new_array();
    r->unsandboxed = json_object_new_array();
    r->answers = json_object_new_array();
    r->status = tnd_xstrdup("failed");
    return r;
}

void tnd_report_destroy(tnd_report **self_p)
{
    tnd_report *r = self_p ? *self_p : NULL;

    if (!r)
        return;
    free(r->session);
    free(r->task);
    free(r->repo);
    free(r->config);
    json_object_put(r->attempts);
    json_object_put(r->baseline);
    json_object_put(r->workspace);
    json_object_put(r->round);
    json_object_put(r->context);
    json_object_put(r->unsandboxed);
    free(r->insecure);
    json_object_put(r->apply);
    json_object_put(r->answers);
    free(r->status);
    free(r->reason);
    free(r->final_diff);
    free(r->last_diff);
    free(r->final_text);
    free(r->findings_text);
    free(r);
    *self_p = NULL;
}

void tnd_report_usage(tnd_report *self, tnd_role role, const tnd_usage *u)
{
    tnd_usage_add(&self->usage[role], u);
}

void tnd_report_unanswered(tnd_report *self, tnd_role role, long calls)
{
    self->usage[role].calls += calls;
    self->unanswered += calls;
}

const tnd_usage *tnd_report_role(const tnd_report *self, tnd_role role)
{
    return &self->usage[role];
}

tnd_usage tnd_report_total(const tnd_report *self)
{
    tnd_usage total = self->usage[0];

    tnd_usage_add(&total, &self->usage[1]);
    return total;
}

/* Note the skills of a that ran unsandboxed. */
static void note_unsandboxed(tnd_report *self, const tnd_audit_reply *a)
{
    for (size_t i = 0; a && i < a->nskills; i++) {
        const char *name = a->skills[i].name;
        bool seen = false;
        if (a->skills[i].sandbox != TND_ISOLATION_NONE)
            continue;
        for (size_t k = 0;
             k < json_object_array_length(self->unsandboxed) && !seen; k++)
            seen = strcmp(json_object_get_string(
                              json_object_array_get_idx(self->unsandboxed, k)),
                          name) == 0;
        if (!seen)
            json_object_array_add(self->unsandboxed,
                                  json_object_new_string(name));
    }
}

/* Each skill's result; with a baseline, how it did before the change
 * and whether failing now is a regression. */
static json_object *skills_json(const tnd_audit_reply *a,
                                const tnd_audit_reply *baseline)
{
    json_object *list = json_object_new_array();

    for (size_t i = 0; a && i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        const tnd_skill_result *before = tnd_gate_before(baseline, s->name);
        json_object *j = tnd_skill_result_to_json(s, TND_SKILL_JSON_SUMMARY);
        if (before) {
            json_object_object_add(
                j, "before",
                json_object_new_string(tnd_skill_status_name(before->status)));
            json_object_object_add(
                j, "regression",
                json_object_new_boolean(before->status == TND_SKILL_PASS &&
                                        s->status != TND_SKILL_PASS &&
                                        s->status != TND_SKILL_SKIPPED));
        }
        json_object_array_add(list, j);
    }
    return list;
}

void tnd_report_baseline(tnd_report *self, const tnd_audit_reply *baseline,
                         const char *reused_from)
{
    note_unsandboxed(self, baseline);
    json_object_put(self->baseline);
    self->baseline = json_object_new_object();
    json_object_object_add(self->baseline, "skills",
                           skills_json(baseline, NULL));
    json_object_object_add(self->baseline, "reused_from",
                           tnd_json_str_or_null(reused_from));
}

void tnd_report_workspace(tnd_report *self, json_object *about)
{
    json_object_put(self->workspace);
    self->workspace = about;
}

void tnd_report_critique(tnd_report *self, bool asked, const char *why,
                         long tokens_saved, json_object *members)
{
    json_object *j = json_object_new_object();

    json_object_object_add(j, "asked", json_object_new_boolean(asked));
    json_object_object_add(j, "why", json_object_new_string(why));
    if (!asked)
        json_object_object_add(j, "tokens_saved_estimate",
                               json_object_new_int64(tokens_saved));
    if (members)
        json_object_object_add(j, "members", members);
    json_object_put(self->round);
    self->round = j;
    if (asked) {
        self->critiques_asked++;
    } else {
        self->critiques_skipped++;
        self->tokens_saved += tokens_saved;
    }
}

void tnd_report_context(tnd_report *self, const tnd_context_stats *st,
                        size_t budget, size_t request_bytes)
{
    json_object *j = json_object_new_object();

    json_object_object_add(j, "files",
                           json_object_new_int64((int64_t)st->files));
    json_object_object_add(j, "bytes",
                           json_object_new_int64((int64_t)st->bytes));
    json_object_object_add(j, "binary_files",
                           json_object_new_int64((int64_t)st->binary));
    json_object_object_add(j, "invalid_utf8_bytes",
                           json_object_new_int64((int64_t)st->replaced));
    json_object_object_add(j, "files_left_out",
                           json_object_new_int64((int64_t)st->left_out));
    json_object_object_add(j, "named_left_out",
                           json_object_new_int64((int64_t)st->named_out));
    json_object_object_add(j, "map_bytes",
                           json_object_new_int64((int64_t)st->map_bytes));
    json_object_object_add(j, "map_files_summed",
                           json_object_new_int64((int64_t)st->map_summed));
    json_object_object_add(j, "budget_bytes",
                           json_object_new_int64((int64_t)budget));
    json_object_object_add(j, "request_bytes",
                           json_object_new_int64((int64_t)request_bytes));
    json_object_object_add(j, "tokens_estimate",
                           json_object_new_int64((int64_t)request_bytes / 4));
    json_object_put(self->context);
    self->context = j;
}

void tnd_report_attempt(tnd_report *self, int attempt,
                        const tnd_code_reply *reply, const tnd_gate_input *in,
                        const tnd_gate_decision *decision,
                        const char *diff_path, uint64_t signature)
{
    json_object *j = json_object_new_object();
    char sig[32];

    note_unsandboxed(self, in->audit);
    json_object_object_add(j, "attempt", json_object_new_int(attempt));
    json_object_object_add(
        j, "decision",
        json_object_new_string(tnd_gate_action_name(decision->action)));
    json_object_object_add(j, "reason",
                           json_object_new_string(decision->reason));
    json_object_object_add(j, "diff", tnd_json_str_or_null(diff_path));
    json_object_object_add(j, "edits",
                           json_object_new_int(reply ? (int)reply->nedits : 0));
    json_object_object_add(
        j, "rationale", tnd_json_str_or_null(reply ? reply->rationale : NULL));
    json_object_object_add(j, "skills", skills_json(in->audit, in->baseline));
    json_object_object_add(j, "critique",
                           in->audit && in->audit->critique
                               ? tnd_critique_to_json(in->audit->critique)
                               : NULL);
    json_object_object_add(
        j, "critique_error",
        tnd_json_str_or_null(in->audit ? in->audit->critique_error : NULL));
    if (self->context) {
        json_object_object_add(j, "context", self->context);
        self->context = NULL;
    }
    if (self->round) {
        json_object_object_add(j, "critique_round", self->round);
        self->round = NULL;
    }
    snprintf(sig, sizeof(sig), "%016llx", (unsigned long long)signature);
    json_object_object_add(j, "failure_signature",
                           signature ? json_object_new_string(sig) : NULL);
    json_object_array_add(self->attempts, j);
}

static void replace(char **slot, const char *value)
{
    free(*slot);
    *slot = tnd_xstrdup(value);
}

void tnd_report_outcome(tnd_report *self, const char *status,
                        const char *reason, int iterations,
                        const char *final_diff, const char *last_diff,
                        int64_t elapsed_ms)
{
    replace(&self->status, status);
    replace(&self->reason, reason);
    replace(&self->final_diff, final_diff);
    replace(&self->last_diff, last_diff);
    self->iterations = iterations;
    self->elapsed_ms = elapsed_ms;
}

void tnd_report_review(tnd_report *self)
{
    self->review = true;
}

void tnd_report_insecure(tnd_report *self, const char *endpoint)
{
    free(self->insecure);
    self->insecure = endpoint ? tnd_xstrdup(endpoint) : NULL;
}

void tnd_report_apply(tnd_report *self, json_object *about)
{
    json_object_put(self->apply);
    self->apply = about;
}

void tnd_report_answer(tnd_report *self, int attempt, json_object *record)
{
    static const char *const strings[] = {"by",   "text", "via",
                                          "user", "key",  "address"};
    json_object *a = json_object_new_object();

    json_object_object_add(a, "attempt", json_object_new_int(attempt));
    json_object_object_add(
        a, "answer",
        json_object_new_string(tnd_json_str_or(record, "kind", "")));
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        json_object_object_add(
            a, strings[i],
            tnd_json_str_or_null(tnd_json_str_or(record, strings[i], NULL)));
    json_object_object_add(
        a, "iterations",
        json_object_new_int64(tnd_json_int_or(record, "iterations", 0)));
    json_object_object_add(
        a, "tokens",
        json_object_new_int64(tnd_json_int_or(record, "tokens", 0)));
    json_object_array_add(self->answers, a);
}

void tnd_report_approved(tnd_report *self, const char *diff)
{
    replace(&self->final_text, diff);
}

void tnd_report_findings(tnd_report *self, const char *text)
{
    replace(&self->findings_text, text);
}

char *tnd_report_json(const tnd_report *self)
{
    return tnd_report_json_kept(self, NULL);
}

char *tnd_report_json_kept(const tnd_report *self, json_object **kept)
{
    json_object *o = json_object_new_object();
    json_object *by_role = json_object_new_object();
    json_object *tokens = json_object_new_object();
    tnd_usage total = tnd_report_total(self);
    char when[40];
    char *text;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "session", json_object_new_string(self->session));
    json_object_object_add(
        o, "kind", json_object_new_string(self->review ? "review" : "run"));
    json_object_object_add(o, "status", json_object_new_string(self->status));
    json_object_object_add(o, "reason", tnd_json_str_or_null(self->reason));
    json_object_object_add(o, "task", json_object_new_string(self->task));
    json_object_object_add(o, "repo", json_object_new_string(self->repo));
    json_object_object_add(o, "config", tnd_json_str_or_null(self->config));
    tnd_clock_iso8601(when, sizeof(when), self->started_wall);
    json_object_object_add(o, "started", json_object_new_string(when));
    json_object_object_add(o, "elapsed_ms",
                           json_object_new_int64(self->elapsed_ms));
    json_object_object_add(o, "iterations",
                           json_object_new_int(self->iterations));
    json_object_object_add(o, "llm_calls", json_object_new_int64(total.calls));
    json_object_object_add(o, "calls_unanswered",
                           json_object_new_int64(self->unanswered));
    json_object_object_add(tokens, "prompt",
                           json_object_new_int64(total.prompt_tokens));
    json_object_object_add(tokens, "completion",
                           json_object_new_int64(total.completion_tokens));
    json_object_object_add(tokens, "estimated",
                           json_object_new_boolean(total.estimated));
    json_object_object_add(o, "tokens", tokens);
    json_object_object_add(
        by_role, "coder",
        tnd_usage_to_json(&self->usage[TND_ROLE_CODER], TND_USAGE_REPORT));
    json_object_object_add(
        by_role, "reviewer",
        tnd_usage_to_json(&self->usage[TND_ROLE_REVIEWER], TND_USAGE_REPORT));
    json_object_object_add(o, "by_role", by_role);
    json_object_object_add(o, "final_diff",
                           tnd_json_str_or_null(self->final_diff));
    json_object_object_add(o, "final_diff_text",
                           tnd_json_str_or_null(self->final_text));
    json_object_object_add(o, "last_diff",
                           tnd_json_str_or_null(self->last_diff));
    json_object_object_add(o, "findings_text",
                           tnd_json_str_or_null(self->findings_text));
    if (self->critiques_asked || self->critiques_skipped) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "asked",
                               json_object_new_int64(self->critiques_asked));
        json_object_object_add(c, "skipped",
                               json_object_new_int64(self->critiques_skipped));
        json_object_object_add(c, "tokens_saved_estimate",
                               json_object_new_int64(self->tokens_saved));
        json_object_object_add(o, "critiques", c);
    }
    json_object_object_add(o, "unsandboxed_skills",
                           json_object_get(self->unsandboxed));
    json_object_object_add(o, "insecure_endpoint",
                           tnd_json_str_or_null(self->insecure));
    json_object_object_add(o, "apply", json_object_get(self->apply));
    json_object_object_add(o, "workspace", json_object_get(self->workspace));
    json_object_object_add(o, "baseline", json_object_get(self->baseline));
    json_object_object_add(o, "attempts", json_object_get(self->attempts));
    json_object_object_add(o, "answers", json_object_get(self->answers));
    text = tnd_json_pretty(o);
    if (kept) {
        /* the object is the text only while no secret was redacted (in
         * the text: a string's escapes are the text's) */
        char *before = tnd_xstrdup(text);
        text = tnd_log_redact_json(text);
        *kept = strcmp(before, text) == 0 ? o : NULL;
        free(before);
        if (!*kept)
            json_object_put(o);
        return text;
    }
    json_object_put(o);
    return tnd_log_redact_json(text);
}

int tnd_report_emit(FILE *to, const char *text)
{
    size_t len = strlen(text);

    if (fwrite(text, 1, len, to) != len ||
        (len && text[len - 1] != '\n' && fputc('\n', to) == EOF) ||
        fflush(to) != 0)
        return tnd_error_set("cannot write the JSON document: %s",
                             strerror(errno));
    return 0;
}

/* 12345 -> "12,345" into buf. */
static const char *thousands(char *buf, size_t size, long n)
{
    char raw[32];
    size_t len, o = 0;

    snprintf(raw, sizeof(raw), "%ld", n);
    len = strlen(raw);
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        buf[o++] = raw[i];
        if (raw[i] != '-' && (len - i - 1) % 3 == 0 && i + 1 < len)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

char *tnd_report_summary(const tnd_report *self)
{
    tnd_usage total = tnd_report_total(self);
    size_t n = json_object_array_length(self->unsandboxed);
    char t[32], p[32], c[32], u[48] = "";
    tnd_buf b;

    if (self->unanswered)
        snprintf(u, sizeof(u), " (%ld unanswered)", self->unanswered);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(
        &b,
        "%s after %d iteration%s · %ld LLM call%s%s · %s tokens (%s prompt "
        "+ %s completion%s) · %.1fs",
        self->status, self->iterations, self->iterations == 1 ? "" : "s",
        total.calls, total.calls == 1 ? "" : "s", u,
        thousands(t, sizeof(t), total.prompt_tokens + total.completion_tokens),
        thousands(p, sizeof(p), total.prompt_tokens),
        thousands(c, sizeof(c), total.completion_tokens),
        /* one parenthesis: "tokens (estimated) (N prompt + ...)" read
         * as two remarks in a row */
        total.estimated ? ", estimated" : "", self->elapsed_ms / 1000.0);
    if (n) {
        tnd_buf_printf(&b, "\nunsandboxed: skill%s ", n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++)
            tnd_buf_printf(&b, "%s%s", i ? ", " : "",
                           json_object_get_string(json_object_array_get_idx(
                               self->unsandboxed, i)));
        tnd_buf_printf(&b, " ran with sandbox: none, with the host's files, "
                           "processes and network");
    }
    return tnd_buf_detach(&b, NULL);
}
