/* The baseline (see loop.h, tnd_loop_baseline): the skills on the
 * unmodified tree before attempt 1, from the journal, another session's
 * run of the same tree, or the reviewer; and before any model is paid,
 * whether each required skill can run there at all, and whether the
 * sandbox the skills want can be made. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/loop.h"
#include "orchestrator/review.h"
#include "skills/bwrap.h"

static bool required(const run *r, const tnd_skill_result *s)
{
    return tnd_str_list_has((const char *const *)r->required, s->name) ||
           s->required;
}

/* The line of a skill's output that shows why it cannot run: the one
 * naming the cause, else the last that says something (make's directory
 * notes and the runner's own "[tandem: ...]" aside). Cut to max, into b. */
static bool noise(const char *line, size_t n)
{
    return n == 0 || strncmp(line, "[tandem: ", 9) == 0 ||
           (strncmp(line, "make[", 5) == 0 && memmem(line, n, "directory", 9));
}

static void cause_line(tnd_buf *b, const char *text, size_t max)
{
    static const char *const causes[] = {"No rule to make target", "not found",
                                         "Permission denied", "cannot run",
                                         NULL};
    const char *start = NULL, *last = NULL, *end;

    for (const char *const *c = causes; *c && !start; c++)
        if ((start = strstr(text, *c)))
            while (start > text && start[-1] != '\n')
                start--;
    for (const char *line = text; !start && *line;) {
        const char *next = strchr(line, '\n');
        if (!noise(line, next ? (size_t)(next - line) : strlen(line)))
            last = line;
        if (!next)
            break;
        line = next + 1;
    }
    if (!start)
        start = last;
    if (!start)
        return;
    end = strchr(start, '\n');
    if (!end)
        end = start + strlen(start);
    if ((size_t)(end - start) > max)
        end = start + max;
    tnd_buf_append(b, start, (size_t)(end - start));
}

/* Skills that cannot run for want of a sandbox (names, n of them), why
(where: "the reviewer's host" or "this host"; why: the first line of
what the probe said), and the fix, after sep. */
static void no_sandbox(tnd_buf *b, const char *const *names, size_t n,
                       const char *where, const char *why, const char *sep)
{
    tnd_buf_printf(b, "%sskill%s ", sep, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        tnd_buf_printf(b, "%s%s", i ? ", " : "", names[i]);
    tnd_buf_printf(b, " cannot run: %s sandboxed (the default), and on %s ",
                   n == 1 ? "it runs" : "they run", where);
    tnd_buf_append(b, why, strcspn(why, "\n"));
    tnd_buf_puts(b, "\n  fix: install bubblewrap (Debian: apt-get install "
                    "bubblewrap) where user namespaces are allowed, or run "
                    "unsandboxed with ");
    for (size_t i = 0; i < n; i++)
        tnd_buf_printf(b, "%sskills.%s.sandbox: none", i ? ", " : "", names[i]);
    tnd_buf_puts(b, " in agents.yaml");
}

/* The baseline's skills that did not run for want of a sandbox, with
 * the first one's reason (they share it). */
static void no_sandbox_in(tnd_buf *b, const tnd_audit_reply *base,
                          const char *sep)
{
    const char **names = tnd_xcalloc(base->nskills + 1, sizeof(*names));
    const char *why = "";
    size_t n = 0;

    for (size_t i = 0; i < base->nskills; i++)
        if (base->skills[i].sandbox == TND_ISOLATION_UNAVAILABLE) {
            if (!n)
                why = base->skills[i].output;
            names[n++] = base->skills[i].name;
        }
    no_sandbox(b, names, n, "the reviewer's host", why, sep);
    free(names);
}

/* tandem review and gate.baseline: false have no baseline to find
 * skills that cannot have their sandbox. The local reviewers run on this
 * host, so ask here, before any model is paid; remote ones (count 0)
 * answer for their own host when they run the skills. */
static int sandbox_here(run *r)
{
    const tnd_config *cfg = r->cfg;
    const char **names;
    const char *bwrap;
    size_t n = 0;
    tnd_buf why;
    int rc = 0;

    if (cfg->reviewer.count == 0)
        return 0;
    names = tnd_xcalloc(TND_CONFIG_MAX_SKILLS + 1, sizeof(*names));
    for (char **p = cfg->reviewer.skills; p && *p && n < TND_CONFIG_MAX_SKILLS;
         p++) {
        const tnd_skill_config *s = tnd_config_skill(cfg, *p);
        if (s && !*s->builtin && s->sandbox == TND_SANDBOX_BWRAP)
            names[n++] = s->name;
    }
    if (n && tnd_bwrap_check(&bwrap) < 0) {
        char *reason = tnd_xstrdup(tnd_error_last());
        tnd_buf_init(&why, 16 * 1024);
        no_sandbox(&why, names, n, "this host", reason, "");
        rc = tnd_error_config("%s\nno model was asked (tandem doctor "
                              "checks a configuration)",
                              tnd_buf_str(&why));
        tnd_buf_free(&why);
        free(reason);
    }
    free(names);
    return rc;
}

/* A skill that cannot run on the unmodified tree can never pass: a
 * required one is a configuration mistake, stopped before any model is
 * paid; an advisory one is a warning. A skill that wants a sandbox the
 * host cannot make stops the run whether required or not: no skill runs
 * unsandboxed unless the config says so, and the fix is the host's or
 * the config's, never the coder's. */
static int check_runnable(run *r, const tnd_audit_reply *base)
{
    /* the fix: a file's skill, or a file at all (the built-in defaults
     * run make and make test) */
    const char *const fix[2] = {
        r->builtin_config ? "write an agents.yaml whose skills fit this "
                            "repository (tandem init guesses one; skill "
                          : "fix skills.",
        r->builtin_config ? " is a built-in default)" : " in agents.yaml"};
    tnd_buf why;
    size_t bad = 0, unboxed = 0;
    int rc = 0;

    tnd_buf_init(&why, 16 * 1024);
    for (size_t i = 0; i < base->nskills; i++) {
        const tnd_skill_result *s = &base->skills[i];
        const char *cause = tnd_review_cannot_run(s);
        if (!cause)
            continue;
        if (s->sandbox == TND_ISOLATION_UNAVAILABLE) {
            unboxed++;
            continue;
        }
        if (!required(r, s)) {
            tnd_loop_say(r,
                         "baseline: advisory skill %s cannot run (%s); %s%s%s",
                         s->name, cause, fix[0], s->name, fix[1]);
            continue;
        }
        tnd_buf_printf(&why,
                       "%sskill %s cannot run on the unmodified tree: "
                       "%s\n  `%s`: ",
                       bad++ ? "\n" : "", s->name, cause, s->command);
        cause_line(&why, s->output, 300);
        tnd_buf_printf(&why, "\n  %s%s%s", fix[0], s->name, fix[1]);
    }
    if (unboxed)
        no_sandbox_in(&why, base, bad++ ? "\n" : "");
    if (bad)
        rc = tnd_error_config("%s\nno change could pass %s, so no model was "
                              "asked (tandem doctor checks a configuration)",
                              tnd_buf_str(&why),
                              bad == 1 && unboxed <= 1 ? "this check"
                                                       : "these checks");
    tnd_buf_free(&why);
    return rc;
}

int tnd_loop_baseline(run *r)
{
    tnd_audit_request ar = {
        .task_id = (char *)tnd_session_id(r->session),
        .attempt = 1,
        .task = (char *)r->opts.task,
        .workspace = (char *)tnd_workspace_path(r->ws),
        .diff = (char *)"",
        .baseline = true,
    };
    const char *service =
        tnd_config_quorum(r->cfg) > 1 ? "reviewer.1" : "reviewer";
    char key[160], *reply = NULL, *from = NULL;
    size_t reply_len = 0;
    bool replayed;
    tnd_buf line;
    int rc;

    if (r->opts.review || !r->gate.baseline)
        return sandbox_here(r);
    replayed = (reply = tnd_loop_journaled_reply(r, "baseline", 0,
                                                 &reply_len)) != NULL;
    if (replayed)
        from = tnd_loop_baseline_source(r);
    if (!replayed) {
        tnd_loop_phase(r, 0, "baseline");
        rc = tnd_loop_with_content(r, &ar, NULL);
        /* another session's on the same tree (tandem serve) */
        if (rc == 0)
            rc = tnd_loop_baseline_reuse(r, &ar, service, &reply, &reply_len,
                                         &from);
        if (rc == 0 && !reply) {
            tnd_loop_say(r, "baseline: running the skills on the unmodified "
                            "tree");
            snprintf(key, sizeof(key), "%s/0/baseline", ar.task_id);
            rc = tnd_loop_ask_clean(r, 0, "baseline", service, key, false, &ar,
                                    NULL, &reply, &reply_len, NULL);
        }
        if (rc < 0)
            tnd_loop_baseline_done(r, NULL, NULL, 0);
        if (rc == TND_ETIMEOUT && tnd_loop_budget_ran_out(r, 1, "start") == 0)
            return 1; /* a budget ran out: the session waits */
        if (rc < 0)
            return rc;
        if (from)
            tnd_loop_say(r, "baseline: reused from %s (same tree)", from);
    }
    rc = tnd_audit_reply_decode(&r->baseline, reply, reply_len);
    if (rc == 0)
        tnd_loop_keep_real_places(r, &r->baseline);
    if (rc == 0 && !replayed)
        rc = check_runnable(r, &r->baseline);
    /* journaled only when usable: a resumed run with a fixed config
     * runs it again */
    if (rc == 0 && !replayed)
        rc = tnd_loop_journal_baseline(r, reply, reply_len, from);
    /* the sessions waiting for this one's get it, when it can serve */
    if (!replayed)
        tnd_loop_baseline_done(r, rc == 0 ? &r->baseline : NULL, reply,
                               reply_len);
    free(reply);
    if (rc < 0) {
        free(from);
        return rc;
    }
    r->has_baseline = true;
    tnd_report_baseline(r->report, &r->baseline, from);
    tnd_buf_init(&line, 4096);
    tnd_loop_skills_line(&line, &r->baseline);
    tnd_loop_say(r, "baseline: %s, before any change%s", tnd_buf_str(&line),
                 replayed ? " (from the journal)" : "");
    tnd_buf_free(&line);
    /* what the baseline's build wrote must not serve attempt 1 (a
     * reused one ran in another session's workspace: this one is as
     * the snapshot made it) */
    rc = replayed || from ? 0 : tnd_workspace_reset(r->ws);
    free(from);
    return rc;
}
