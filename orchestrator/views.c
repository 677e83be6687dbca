/* Session views derived from the journal (see views.h). */
#include "orchestrator/views.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/audit.h"
#include "proto/json.h"

/* First line of s, at most max bytes, into b. */
static void first_line(tnd_buf *b, const char *s, size_t max)
{
    size_t n = strcspn(s, "\n");

    if (n > max)
        n = max;
    tnd_buf_append(b, s, n);
    if (s[n] && s[n] != '\n')
        tnd_buf_puts(b, "...");
}

/* Who gave the answer record r, or NULL when it does not say (journaled
 * before tandem recorded it): "alice"; a served answer as its server
 * proved it: "build-host (CURVE key rq:rM>}U?@Ln)", "alice (on the
 * server's host)", "someone at 10.0.0.2 (no CURVE key)". */
static char *who_answered(json_object *r)
{
    const char *user = tnd_json_str_or(r, "user", NULL),
               *via = tnd_json_str_or(r, "via", ""),
               *key = tnd_json_str_or(r, "key", NULL),
               *address = tnd_json_str_or(r, "address", NULL);

    if (strcmp(via, "curve") == 0 && user)
        return key && strcmp(key, user) != 0
                   ? tnd_xasprintf("%s (CURVE key %s)", user, key)
                   : tnd_xasprintf("CURVE key %s", user);
    if (strcmp(via, "ipc") == 0 && user)
        return tnd_xasprintf("%s (on the server's host)", user);
    if (strcmp(via, "tcp") == 0)
        return tnd_xasprintf("someone at %s (no CURVE key)",
                             address ? address : "an unknown address");
    return user ? tnd_xstrdup(user) : NULL;
}

/* Who answered, and where: "By alice, on the terminal." */
static void answered_by(tnd_buf *b, json_object *answer)
{
    const char *by = tnd_json_str_or(answer, "by", NULL);
    bool served = *tnd_json_str_or(answer, "via", "");
    char *who = who_answered(answer);

    if (!who)
        return;
    tnd_buf_printf(b, "By %s%s.\n", who,
                   served                       ? ", through tandem serve"
                   : !by                        ? ""
                   : strcmp(by, "tty") == 0     ? ", on the terminal"
                   : strcmp(by, "command") == 0 ? ", with a tandem command"
                                                : "");
    free(who);
}

static void proposal_md(tnd_buf *b, json_object *reply)
{
    json_object *edits = tnd_json_array(reply, "edits"),
                *usage = tnd_json_field(reply, "usage");
    const char *why = tnd_json_str_or(reply, "rationale", NULL),
               *bad = tnd_json_str_or(reply, "format_error", NULL);
    size_t n = edits ? json_object_array_length(edits) : 0;

    tnd_buf_printf(b, "- Coder: %zu edit%s", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 8; i++)
        tnd_buf_printf(
            b, "%s%s", i ? ", " : " to ",
            tnd_json_str_or(json_object_array_get_idx(edits, i), "path", "?"));
    tnd_buf_printf(b, " (%ld + %ld tokens)\n",
                   tnd_json_int_or(usage, "prompt_tokens", 0),
                   tnd_json_int_or(usage, "completion_tokens", 0));
    if (bad) {
        tnd_buf_puts(b, "  - Unusable answer: ");
        first_line(b, bad, 300);
        tnd_buf_puts(b, "\n");
    }
    if (why && *why) {
        tnd_buf_puts(b, "  - Reasoning: ");
        first_line(b, why, 600);
        tnd_buf_puts(b, "\n");
    }
}

static void checks_md(tnd_buf *b, json_object *reply)
{
    json_object *skills = tnd_json_array(reply, "skills");

    tnd_buf_puts(b, "- Checks:");
    for (size_t i = 0; skills && i < json_object_array_length(skills); i++) {
        json_object *s = json_object_array_get_idx(skills, i);
        const char *status = tnd_json_str_or(s, "status", NULL);
        tnd_skill_status st = TND_SKILL_ERROR;
        tnd_buf_printf(b, "%s %s %s", i ? "," : "",
                       tnd_json_str_or(s, "name", "?"), status ? status : "?");
        if (tnd_json_str_or(s, "ended", NULL))
            tnd_buf_printf(b, " (%s)", tnd_json_str_or(s, "ended", NULL));
        else if (status && tnd_skill_status_parse(&st, status) == 0 &&
                 st == TND_SKILL_FAIL)
            tnd_buf_printf(b, " (exit %ld)",
                           tnd_json_int_or(s, "exit_code", 0));
    }
    if (!skills || json_object_array_length(skills) == 0)
        tnd_buf_puts(b, " none");
    tnd_buf_puts(b, "\n");
}

static void audit_md(tnd_buf *b, json_object *reply)
{
    json_object *crit = tnd_json_field(reply, "critique");
    json_object *issues = tnd_json_array(crit, "issues");

    checks_md(b, reply);
    if (!crit || json_object_is_type(crit, json_type_null)) {
        tnd_buf_printf(b, "- Critique: none (%s)\n",
                       tnd_json_str_or(reply, "critique_error", "not asked"));
        return;
    }
    tnd_buf_printf(b, "- Critique: %s, confidence %.2f: ",
                   tnd_json_str_or(crit, "verdict", "?"),
                   json_object_get_double(tnd_json_field(crit, "confidence")));
    first_line(b, tnd_json_str_or(crit, "summary", ""), 400);
    tnd_buf_puts(b, "\n");
    for (size_t i = 0; issues && i < json_object_array_length(issues); i++) {
        json_object *is = json_object_array_get_idx(issues, i);
        tnd_buf_printf(b, "  - [%s, %s] ", tnd_json_str_or(is, "severity", "?"),
                       tnd_json_str_or(is, "type", "?"));
        if (tnd_json_str_or(is, "file", NULL))
            tnd_buf_printf(b, "%s:%ld: ", tnd_json_str_or(is, "file", NULL),
                           tnd_json_int_or(is, "line", 0));
        first_line(b, tnd_json_str_or(is, "description", ""), 300);
        tnd_buf_puts(b, "\n");
    }
}

/* Record r's section of the reflection, if it has one, onto b: it
 * depends on r alone. */
static void reflection_section(tnd_buf *b, json_object *r)
{
    const char *type = tnd_journal_type(r);

    if (strcmp(type, "task") == 0) {
        tnd_buf_printf(
            b, "# Session %s\n\nTask: %s\n\nStarted %s in %s\n",
            tnd_json_str_or(r, "session", "?"), tnd_json_str_or(r, "task", "?"),
            tnd_json_str_or(r, "time", "?"), tnd_json_str_or(r, "repo", "?"));
    } else if (strcmp(type, "workspace") == 0) {
        tnd_buf_printf(b, "\nWorkspace: %ld files (%s)",
                       tnd_json_int_or(r, "files", 0),
                       strcmp(tnd_json_str_or(r, "source", ""), "git") == 0
                           ? "git-tracked"
                           : "the whole directory");
        if (tnd_json_bool_or(r, "include_untracked", false))
            tnd_buf_puts(b, ", untracked files included");
        else if (tnd_json_int_or(r, "untracked", 0))
            tnd_buf_printf(b, ", %ld untracked left out",
                           tnd_json_int_or(r, "untracked", 0));
        tnd_buf_puts(b, tnd_json_bool_or(r, "incremental", false)
                            ? "; incremental: build outputs stayed "
                              "between attempts\n"
                            : "; a fresh copy for every attempt\n");
    } else if (strcmp(type, "baseline") == 0) {
        tnd_buf_puts(b, "\n## Before any change\n\n");
        checks_md(b, tnd_json_field(r, "reply"));
    } else if (strcmp(type, "resume") == 0) {
        tnd_buf_printf(b, "\n_Resumed at %s._\n",
                       tnd_json_str_or(r, "time", "?"));
    } else if (strcmp(type, "proposal") == 0) {
        tnd_buf_printf(b, "\n## Attempt %ld\n\n",
                       tnd_json_int_or(r, "attempt", 0));
        proposal_md(b, tnd_json_field(r, "reply"));
    } else if (strcmp(type, "audit") == 0) {
        audit_md(b, tnd_json_field(r, "reply"));
    } else if (strcmp(type, "decision") == 0) {
        tnd_buf_printf(b, "- Decision: **%s**: %s\n",
                       tnd_json_str_or(r, "action", "?"),
                       tnd_json_str_or(r, "reason", "?"));
    } else if (strcmp(type, "escalation") == 0) {
        tnd_buf_printf(b, "\n## Needs a human\n\n%s\n",
                       tnd_json_str_or(r, "reason", "?"));
    } else if (strcmp(type, "answer") == 0) {
        tnd_buf_printf(b, "\n## A person answered: %s\n\n",
                       tnd_json_str_or(r, "kind", "?"));
        answered_by(b, r);
        if (tnd_json_str_or(r, "text", NULL))
            tnd_buf_printf(b, "> %s\n", tnd_json_str_or(r, "text", NULL));
        if (tnd_json_int_or(r, "iterations", 0))
            tnd_buf_printf(b, "%ld more attempt(s)\n",
                           tnd_json_int_or(r, "iterations", 0));
    } else if (strcmp(type, "finish") == 0) {
        tnd_buf_printf(b, "\n## Finished: %s\n\n%s\n",
                       tnd_json_str_or(r, "status", "?"),
                       tnd_json_str_or(r, "reason", ""));
    }
}

char *tnd_views_reflection(json_object *records)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < json_object_array_length(records); i++)
        reflection_section(&b, json_object_array_get_idx(records, i));
    return tnd_buf_detach(&b, NULL);
}

static char *decisions(json_object *records)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "# Decisions\n\n");
    for (size_t i = 0; i < json_object_array_length(records); i++) {
        json_object *r = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(r),
                   *when = tnd_json_str_or(r, "time", "?");
        if (strcmp(type, "decision") == 0)
            tnd_buf_printf(&b, "- %s attempt %ld: %s: %s\n", when,
                           tnd_json_int_or(r, "attempt", 0),
                           tnd_json_str_or(r, "action", "?"),
                           tnd_json_str_or(r, "reason", "?"));
        else if (strcmp(type, "escalation") == 0)
            tnd_buf_printf(&b, "- %s to a human (%s): %s\n", when,
                           tnd_json_str_or(r, "mode", "?"),
                           tnd_json_str_or(r, "reason", "?"));
        else if (strcmp(type, "answer") == 0) {
            tnd_buf_printf(&b, "- %s a person answered %s", when,
                           tnd_json_str_or(r, "kind", "?"));
            char *who = who_answered(r);
            if (who)
                tnd_buf_printf(&b, " (%s)", who);
            free(who);
            if (tnd_json_str_or(r, "text", NULL))
                tnd_buf_printf(&b, ": \"%s\"",
                               tnd_json_str_or(r, "text", NULL));
            tnd_buf_puts(&b, "\n");
        } else if (strcmp(type, "finish") == 0)
            tnd_buf_printf(&b, "- %s finished: %s\n", when,
                           tnd_json_str_or(r, "status", "?"));
    }
    return tnd_buf_detach(&b, NULL);
}

/* When a failure pattern was seen: the decision record r's time and
 * attempt, under the given keys of p. */
static void seen(json_object *p, const char *time_key, const char *attempt_key,
                 json_object *r)
{
    json_object_object_add(
        p, time_key, json_object_new_string(tnd_json_str_or(r, "time", "")));
    json_object_object_add(
        p, attempt_key,
        json_object_new_int64(tnd_json_int_or(r, "attempt", 0)));
}

static char *failures(json_object *records)
{
    json_object *root = json_object_new_object();
    json_object *attempts = json_object_new_array();
    json_object *patterns = json_object_new_array();
    char *text;

    for (size_t i = 0; i < json_object_array_length(records); i++) {
        json_object *r = json_object_array_get_idx(records, i), *a, *p = NULL;
        const char *sig = tnd_json_str_or(r, "signature", NULL);
        if (strcmp(tnd_journal_type(r), "decision") != 0 || !sig)
            continue;
        a = json_object_new_object();
        json_object_object_add(
            a, "attempt",
            json_object_new_int64(tnd_json_int_or(r, "attempt", 0)));
        json_object_object_add(a, "signature", json_object_new_string(sig));
        json_object_object_add(
            a, "reason",
            json_object_new_string(tnd_json_str_or(r, "reason", "")));
        json_object_object_add(
            a, "time", json_object_new_string(tnd_json_str_or(r, "time", "")));
        json_object_array_add(attempts, a);
        for (size_t k = 0; k < json_object_array_length(patterns); k++)
            if (strcmp(tnd_json_str_or(json_object_array_get_idx(patterns, k),
                                       "signature", NULL),
                       sig) == 0)
                p = json_object_array_get_idx(patterns, k);
        if (!p) {
            p = json_object_new_object();
            json_object_object_add(p, "signature", json_object_new_string(sig));
            json_object_object_add(p, "occurrences", json_object_new_int(0));
            seen(p, "first_seen", "first_attempt", r);
            json_object_object_add(
                p, "reason",
                json_object_new_string(tnd_json_str_or(r, "reason", "")));
            json_object_array_add(patterns, p);
        }
        json_object_object_add(
            p, "occurrences",
            json_object_new_int(1 + (int)tnd_json_int_or(p, "occurrences", 0)));
        seen(p, "last_seen", "last_attempt", r);
    }
    json_object_object_add(root, "attempts", attempts);
    json_object_object_add(root, "patterns", patterns);
    text = tnd_json_pretty(root);
    json_object_put(root);
    return text;
}

enum { REFLECTION = 1, DECISIONS = 2, FAILURES = 4, ALL_VIEWS = 7 };

/* The views a record of type can change: each is rebuilt only when its
 * text can differ (most steps leave decisions.md and failures.json as
 * they were). The first step, a resume and an answer (which a resume
 * with one journals instead) write all three, so each file exists from
 * the start, and one a crash left a step behind is mended. */
static unsigned touched_by(const char *type)
{
    static const struct {
        const char *type;
        unsigned views;
    } table[] = {
        {"task", ALL_VIEWS},
        {"resume", ALL_VIEWS},
        {"decision", ALL_VIEWS},
        {"escalation", REFLECTION | DECISIONS},
        {"answer", ALL_VIEWS}, /* what a resume with an answer journals */
        {"finish", REFLECTION | DECISIONS},
        {"workspace", REFLECTION},
        {"baseline", REFLECTION},
        {"proposal", REFLECTION},
        {"audit", REFLECTION},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(type, table[i].type) == 0)
            return table[i].views;
    return 0; /* a record no view shows */
}

/* The markdown views are for `cat` too: a task's or a model's escape
 * codes in them ran on the terminal (show filtered them; the files kept
 * them). Caller frees. */
static char *printable(const char *text)
{
    return tnd_str_printable(text, 3 * strlen(text) + 1);
}

void tnd_views_state_clear(tnd_views_state *state)
{
    tnd_buf_free(&state->reflection);
    memset(state, 0, sizeof(*state));
}

/* reflection.md's text: st's, with the sections of the records added
 * since put in, each made printable alone. That is the text made
 * printable whole, since each section ends its line: tnd_str_printable
 * takes a character at a time, and a line's end is one. A section that
 * does not (none so far) has it rebuilt whole from then on, as it is
 * without st. Caller frees. */
static char *reflection(json_object *records, tnd_views_state *st)
{
    size_t n = json_object_array_length(records);
    char *text, *clean;

    if (st && st->reflection.cap == 0) /* zeroed: nothing kept yet */
        tnd_buf_init(&st->reflection, TND_BUF_NOCAP);
    for (; st && !st->whole && st->records < n; st->records++) {
        tnd_buf raw;
        tnd_buf_init(&raw, TND_BUF_NOCAP);
        reflection_section(&raw,
                           json_object_array_get_idx(records, st->records));
        if (raw.len && raw.data[raw.len - 1] != '\n') {
            st->whole = true;
        } else if (raw.len) {
            text = printable(raw.data);
            tnd_buf_puts(&st->reflection, text);
            free(text);
        }
        tnd_buf_free(&raw);
    }
    if (st && !st->whole && st->records == n)
        return tnd_xstrndup(st->reflection.data ? st->reflection.data : "",
                            st->reflection.len);
    /* none kept, or records that are not the ones it was kept from */
    text = tnd_views_reflection(records);
    clean = printable(text);
    free(text);
    return clean;
}

int tnd_views_write(tnd_session *session, const tnd_journal *journal,
                    tnd_views_state *state)
{
    static const char *const names[3] = {"reflection.md", "decisions.md",
                                         "failures.json"};
    size_t count = tnd_journal_count(journal);
    unsigned views = count ? touched_by(tnd_journal_type(
                                 tnd_journal_record(journal, count - 1)))
                           : ALL_VIEWS;
    json_object *records = tnd_journal_records(journal); /* borrowed */
    int error = 0;

    /* each one, even when another could not be written: one left behind
     * waits for the next step that shows in it */
    for (int i = 0; i < 3; i++) {
        char *text;

        if (!(views & (1u << i)))
            continue;
        if (i == 0) {
            text = reflection(records, state);
        } else if (i == 1) {
            char *raw = decisions(records);
            text = printable(raw);
            free(raw);
        } else {
            text = failures(records);
        }
        if (tnd_session_write_view(session, names[i], text, strlen(text)) < 0)
            error = -1;
        free(text);
    }
    return error;
}
