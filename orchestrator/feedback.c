/* Feedback for the coder (see feedback.h). */
#include "orchestrator/feedback.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/excerpt.h"

/* Length of s cut to at most max bytes without splitting a UTF-8
 * sequence, for "%.*s". */
static int cut(const char *s, size_t max)
{
    size_t n = strnlen(s, max);

    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return (int)n;
}

/* A copy of s with every registered secret redacted ("" for NULL), to
 * cut: the feedback goes into the coder's prompt, which its transcript
 * and the journal keep redacted, but a key a model echoed, cut here,
 * leaves a head no later redaction recognises. Caller frees. */
static char *redacted(const char *s)
{
    return tnd_log_redact(tnd_xstrdup(s ? s : ""));
}

/* One failing skill: its command, how it ended, what it was before the
 * change (when known), and its output. before is the same skill on the
 * unmodified tree; its output lets the excerpt fold the warnings that
 * were there already. */
static void failed_skill(tnd_buf *b, const tnd_skill_result *s,
                         const tnd_skill_result *before)
{
    char *out, *whole;

    tnd_buf_printf(b, "\n### %s (`%s`): %s", s->name, s->command,
                   tnd_skill_status_name(s->status));
    if (s->ended)
        tnd_buf_printf(b, ", %s", s->ended);
    else if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
        tnd_buf_printf(b, ", exit %d", s->exit_code);
    if (before && before->status == TND_SKILL_PASS)
        tnd_buf_puts(b, ": a regression, it passed before the change");
    else if (before)
        tnd_buf_puts(b, ": not fixed, it failed before the change too");
    tnd_buf_puts(b, "\n");
    /* by relevance, not position: a build's warnings must not push the
     * line that says what failed out of the window */
    whole = redacted(s->output);
    out = tnd_excerpt(whole, before ? before->output : NULL,
                      TND_FEEDBACK_MAX_OUTPUT, NULL);
    free(whole);
    tnd_buf_printf(b, "```\n%s%s```\n", out,
                   *out && out[strlen(out) - 1] != '\n' ? "\n" : "");
    free(out);
}

static void skills_part(tnd_buf *b, const tnd_audit_reply *a,
                        const tnd_audit_reply *baseline)
{
    bool header = false;

    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        if (s->status == TND_SKILL_PASS || s->status == TND_SKILL_SKIPPED)
            continue;
        if (!header) {
            tnd_buf_puts(b, "\nChecks that failed:\n");
            header = true;
        }
        failed_skill(b, s, tnd_gate_before(baseline, s->name));
    }
}

char *tnd_feedback_baseline(const tnd_audit_reply *baseline)
{
    tnd_buf b;
    bool any = false;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < baseline->nskills; i++) {
        const tnd_skill_result *s = &baseline->skills[i];
        if (s->status == TND_SKILL_PASS || s->status == TND_SKILL_SKIPPED)
            continue;
        if (!any)
            tnd_buf_puts(&b, "Before any change, these checks already fail "
                             "on the repository as it is:\n");
        any = true;
        failed_skill(&b, s, NULL);
    }
    return tnd_buf_detach(&b, NULL);
}

/* Issues the feedback lists, at most: the gravest first. */
#define MAX_ISSUES 20

static void one_issue(tnd_buf *b, const tnd_issue *is)
{
    char *evidence = redacted(is->evidence);
    char *fix = redacted(is->suggested_fix);

    tnd_buf_printf(b, "- [%s, %s]", tnd_severity_name(is->severity),
                   tnd_issue_type_name(is->type));
    if (is->file && is->line > 0)
        tnd_buf_printf(b, " %s:%ld:", is->file, is->line);
    else if (is->file)
        tnd_buf_printf(b, " %s:", is->file);
    tnd_buf_printf(b, " %s\n", is->description);
    if (*evidence)
        tnd_buf_printf(b, "  Evidence: %.*s\n", cut(evidence, 600), evidence);
    if (*fix)
        tnd_buf_printf(b, "  Suggested fix: %.*s\n", cut(fix, 600), fix);
    free(evidence);
    free(fix);
}

/* The issues, critical first, then major, then minor, each in the
 * reviewer's order: a quorum's merged list puts member 1's nits before
 * member 2's critical issue, and taking the first MAX_ISSUES left out
 * what blocks the change. */
static void issues_part(tnd_buf *b, const tnd_critique *c)
{
    size_t shown = 0;

    if (c->nissues)
        tnd_buf_puts(b, "\nThe reviewer's issues:\n");
    for (int sev = TND_SEVERITY_CRITICAL; sev >= TND_SEVERITY_MINOR; sev--)
        for (size_t i = 0; i < c->nissues && shown < MAX_ISSUES; i++)
            if ((int)c->issues[i].severity == sev) {
                one_issue(b, &c->issues[i]);
                shown++;
            }
    if (c->nissues > shown)
        tnd_buf_printf(b, "(%zu more issue%s not shown)\n", c->nissues - shown,
                       c->nissues - shown == 1 ? "" : "s");
    if (c->summary && *c->summary) {
        char *summary = redacted(c->summary);
        tnd_buf_printf(b, "\nThe reviewer's summary: %.*s\n",
                       cut(summary, 1000), summary);
        free(summary);
    }
}

char *tnd_feedback_build(const tnd_gate_input *in,
                         const tnd_gate_decision *decision,
                         const char *const *history, const char *diff)
{
    tnd_buf b;
    char *text;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, "Attempt %d was not accepted: %s\n", in->attempt,
                   decision->reason);
    if (in->audit) {
        skills_part(&b, in->audit, in->baseline);
        if (in->audit->critique)
            issues_part(&b, in->audit->critique);
    }
    if (history && history[0]) {
        tnd_buf_puts(&b, "\nEarlier attempts:\n");
        for (const char *const *h = history; *h; h++) {
            char *line = redacted(*h);
            tnd_buf_printf(&b, "- %.*s\n", cut(line, 300), line);
            free(line);
        }
    }
    if (diff && *diff) {
        char *d = tnd_str_cut_middle(diff, TND_FEEDBACK_MAX_DIFF);
        tnd_buf_printf(&b,
                       "\nThe change of attempt %d (the files are back as "
                       "they were; propose the whole change again):\n"
                       "```diff\n%s%s```\n",
                       in->attempt, d,
                       *d && d[strlen(d) - 1] != '\n' ? "\n" : "");
        free(d);
    }
    if (in->streak >= 2)
        tnd_buf_printf(&b,
                       "\nThe same failure has now happened %d times in a "
                       "row. Do not repeat the same fix: find the real "
                       "cause and try a different approach.\n",
                       in->streak);
    text = tnd_log_redact(tnd_buf_detach(&b, NULL));
    if (strlen(text) > TND_FEEDBACK_MAX_TOTAL) {
        char *cut = tnd_str_cut_middle(text, TND_FEEDBACK_MAX_TOTAL);
        free(text);
        text = cut;
    }
    return text;
}
