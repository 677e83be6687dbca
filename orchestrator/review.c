/* Critique triggers, risky paths and skills that cannot run (see
 * review.h). */
#include "orchestrator/review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/glob.h"
#include "orchestrator/gate.h"
#include "skills/patch.h"

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
