/* Finding bubblewrap and asking it once for a sandbox (see bwrap.h). */
#include "skills/bwrap.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/proc.h"
#include "skills/sandbox.h"

/* How long the probe may take: a sandbox starts in milliseconds; a
 * host that takes longer is broken in a way worth reporting. */
#define PROBE_TIMEOUT_MS 10000

static bool runnable(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

int tnd_bwrap_find(char **out)
{
    const char *name = getenv("TANDEM_BWRAP");
    const char *path = getenv("PATH");

    *out = NULL;
    if (!name || !*name)
        name = "bwrap";
    if (strchr(name, '/')) {
        if (runnable(name)) {
            *out = tnd_xstrdup(name);
            return 0;
        }
        tnd_error_set("bubblewrap (bwrap) is not installed: %s (from "
                      "TANDEM_BWRAP) is not an executable file",
                      name);
        return -1;
    }
    for (const char *p = path ? path : "/bin:/usr/bin", *end;; p = end + 1) {
        char *cand;
        end = strchr(p, ':');
        if (!end)
            end = p + strlen(p);
        if (end > p) {
            cand = tnd_xasprintf("%.*s/%s", (int)(end - p), p, name);
            if (runnable(cand)) {
                *out = cand;
                return 0;
            }
            free(cand);
        }
        if (!*end)
            break;
    }
    tnd_error_set("bubblewrap (%s) is not installed: not found on PATH", name);
    return -1;
}

int tnd_bwrap_try(const char *const *argv, const char *dir, char **said)
{
    tnd_proc_spec spec;
    tnd_proc_result res;
    const char *text;
    size_t n;
    int error = -1;

    *said = NULL;
    memset(&spec, 0, sizeof(spec));
    spec.argv = argv;
    spec.cwd = dir;
    spec.timeout_ms = PROBE_TIMEOUT_MS;
    spec.output_cap = 4096;
    spec.merge_stderr = 1;
    if (tnd_proc_run(&res, &spec) < 0) {
        tnd_proc_result_free(&res);
        return -1;
    }
    if (res.status == TND_PROC_EXITED && res.exit_code == 0) {
        error = 0;
    } else {
        /* the first line of what it printed, or how it ended */
        text = res.output ? res.output : "";
        n = strcspn(text, "\n");
        *said = n ? tnd_xstrndup(text, n > 300 ? 300 : n)
                  : tnd_xstrdup(tnd_proc_describe(&res));
    }
    tnd_proc_result_free(&res);
    return error;
}

int tnd_bwrap_probe(const char *program)
{
    const char *tmp = getenv("TMPDIR");
    const char *argv_true[] = {NULL, NULL};
    char *base = tnd_fs_user_tmp(), *dir;
    char *truth = NULL, **argv = NULL, *said = NULL;
    tnd_sandbox_spec sb;
    int error = -1, held;

    /* in tandem's runtime directory, where a sweep removes the one a
     * process killed while it tried left (TND_FS_PROBE_PREFIX; it
     * stayed in $TMPDIR for good), and only that: it is held (flock)
     * until removed, however long the try takes */
    if (base) {
        dir = tnd_xasprintf("%s/" TND_FS_PROBE_PREFIX "XXXXXX", base);
    } else {
        tnd_error_clear();
        dir = tnd_xasprintf("%s/tandem-probe-XXXXXX",
                            tmp && *tmp == '/' ? tmp : "/tmp");
    }
    free(base);
    if ((held = tnd_fs_mkdtemp_held(dir)) < 0) {
        tnd_error_sys("cannot try bubblewrap: cannot make a directory %s", dir);
        free(dir);
        return -1;
    }
    if (tnd_sandbox_resolve(&truth, "true", getenv("PATH"), dir, NULL) < 0)
        goto out;
    argv_true[0] = truth;
    memset(&sb, 0, sizeof(sb));
    sb.bwrap = program;
    sb.workspace = dir;
    sb.argv = argv_true;
    sb.home = getenv("HOME");
    sb.tmpdir = tmp;
    argv = tnd_sandbox_argv(&sb);
    if ((error = tnd_bwrap_try((const char *const *)argv, dir, &said)) < 0 &&
        said)
        tnd_error_set("bubblewrap (%s) cannot make a sandbox here: %s", program,
                      said);
    free(said);
out:
    tnd_str_list_free(&argv);
    free(truth);
    rmdir(dir);
    close(held); /* after the rmdir: no sweep meets it unheld */
    free(dir);
    return error;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *found;  /* the program, when the sandbox works */
static char *reason; /* else why not */

static void check_once(void)
{
    char *program = NULL;

    if (tnd_bwrap_find(&program) == 0 && tnd_bwrap_probe(program) == 0) {
        found = program;
        return;
    }
    reason = tnd_xstrdup(tnd_error_last());
    free(program);
}

int tnd_bwrap_check(const char **program)
{
    pthread_once(&once, check_once);
    *program = found;
    if (found)
        return 0;
    tnd_error_set("%s", reason);
    return -1;
}
