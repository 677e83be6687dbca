/* Running configured skills (see skill.h). */
#include "skills/skill.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/glob.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "skills/builtin.h"
#include "skills/proc.h"

/* Which limit a signal means, for the note at the end of the output. */
static const char *limit_hint(const tnd_skill_config *skill,
                              const tnd_proc_result *res)
{
    static _Thread_local char hint[96];

    int sig = res->status == TND_PROC_SIGNALED ? res->signal
              /* a shell reports its child's signal as 128 + N */
              : res->status == TND_PROC_EXITED && res->exit_code > 128
                  ? res->exit_code - 128
                  : 0;

    hint[0] = '\0';
    if (sig == SIGXFSZ && skill->limits.file_bytes)
        snprintf(hint, sizeof(hint), "; a file grew past limits.file_mb %zu",
                 skill->limits.file_bytes >> 20);
    else if (sig == SIGXCPU && skill->limits.cpu_s)
        snprintf(hint, sizeof(hint), "; it used up limits.cpu_s %ld",
                 skill->limits.cpu_s);
    return hint;
}

bool tnd_skill_applies(const tnd_skill_config *skill,
                       const char *const *touched)
{
    if (!skill->paths || !skill->paths[0])
        return true;
    for (const char *const *t = touched; t && *t; t++)
        if (tnd_glob_match_any(skill->paths, *t))
            return true;
    return false;
}

void tnd_skill_skip(tnd_skill_result *out, const tnd_skill_config *skill,
                    const char *why)
{
    memset(out, 0, sizeof(*out));
    out->name = tnd_xstrdup(skill->name);
    out->required = skill->required;
    if (*skill->builtin)
        out->command = tnd_xasprintf("builtin: %s", skill->builtin);
    else
        out->command =
            tnd_xstrdup(skill->command.display ? skill->command.display : "");
    out->status = TND_SKILL_SKIPPED;
    out->exit_code = -1;
    out->output = tnd_xstrdup(why);
}

/* The captured output as valid UTF-8: a test that prints a Latin-1 name
 * or a binary record must not make the reply, the journal or a prompt
 * invalid. NUL bytes would cut the text short; they are replaced too.
 * A replacement takes three bytes, so the text is cut to cap again. What
 * was replaced is said at the end. Caller frees. */
static char *clean_output(const tnd_proc_result *res, size_t cap)
{
    size_t replaced = 0;
    char *text = tnd_utf8_clean(res->output ? res->output : "",
                                res->output ? res->output_len : 0, &replaced);
    char *with;

    if (!replaced)
        return text;
    if (strlen(text) > cap) {
        with = tnd_str_cut_middle(text, cap);
        free(text);
        text = with;
    }
    with =
        tnd_xasprintf("%s%s[tandem: %zu byte%s of this output that were "
                      "not valid UTF-8 are shown as U+FFFD]\n",
                      text, *text && text[strlen(text) - 1] != '\n' ? "\n" : "",
                      replaced, replaced == 1 ? "" : "s");
    free(text);
    return with;
}

void tnd_skill_run(tnd_skill_result *out, const tnd_skill_config *skill,
                   const tnd_skill_ctx *ctx)
{
    tnd_proc_spec spec;
    tnd_proc_result res;
    size_t cap = skill->output_cap;

    if (*skill->builtin) {
        tnd_builtin_run(out, skill, ctx->dir, ctx->diff);
        return;
    }
    memset(out, 0, sizeof(*out));
    memset(&res, 0, sizeof(res));
    out->name = tnd_xstrdup(skill->name);
    out->required = skill->required;
    out->command = tnd_xstrdup(skill->command.display);
    /* room in the reply for the failure lines proc keeps from an omitted
     * middle, the markers and the "[tandem: ...]" line */
    if (cap == 0 || cap > TND_BODY_MAX_OUTPUT - 4096 - TND_PROC_MIDDLE_MAX)
        cap = TND_BODY_MAX_OUTPUT - 4096 - TND_PROC_MIDDLE_MAX;

    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)skill->command.argv;
    spec.cwd = ctx->dir;
    spec.envp = (const char *const *)ctx->envp;
    spec.timeout_ms = (long)skill->timeout_s * 1000;
    spec.output_cap = cap;
    spec.merge_stderr = 1;
    spec.cancel = ctx->cancel;
    spec.rlimit_cpu_s = skill->limits.cpu_s;
    spec.rlimit_as_bytes = skill->limits.memory_bytes;
    spec.rlimit_fsize_bytes = skill->limits.file_bytes;
    spec.rlimit_nproc = skill->limits.processes;

    if (tnd_proc_run(&res, &spec) < 0) {
        out->status = TND_SKILL_ERROR;
        out->exit_code = -1;
        out->output = tnd_xstrdup(tnd_error_last());
        tnd_proc_result_free(&res);
        return;
    }
    out->duration_ms = res.duration_ms;
    out->output = clean_output(&res, cap);
    switch (res.status) {
    case TND_PROC_EXITED:
        out->exit_code = res.exit_code;
        out->status = res.exit_code == 0 ? TND_SKILL_PASS : TND_SKILL_FAIL;
        break;
    case TND_PROC_TIMEOUT:
        out->exit_code = -1;
        out->status = TND_SKILL_TIMEOUT;
        break;
    case TND_PROC_SIGNALED:
        out->exit_code = -1;
        out->status = TND_SKILL_FAIL;
        break;
    case TND_PROC_CANCELLED:
        out->exit_code = -1;
        out->status = TND_SKILL_ERROR;
        break;
    }
    if (res.status != TND_PROC_EXITED || res.exit_code != 0) {
        /* say how it ended at the end of the output, where people look */
        char *with = tnd_xasprintf(
            "%s%s[tandem: %s %s%s]\n", out->output,
            *out->output && out->output[strlen(out->output) - 1] != '\n' ? "\n"
                                                                         : "",
            skill->name, tnd_proc_describe(&res), limit_hint(skill, &res));
        free(out->output);
        out->output = with;
    }
    tnd_proc_result_free(&res);
}

const char *tnd_skill_summary(const tnd_skill_result *r)
{
    static _Thread_local char line[256];

    if (r->status == TND_SKILL_FAIL && r->exit_code >= 0)
        snprintf(line, sizeof(line), "%s: fail (exit %d, %.1fs)", r->name,
                 r->exit_code, r->duration_ms / 1000.0);
    else
        snprintf(line, sizeof(line), "%s: %s (%.1fs)", r->name,
                 tnd_skill_status_name(r->status), r->duration_ms / 1000.0);
    return line;
}
