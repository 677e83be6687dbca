/* Removing old sessions (see prune.h). */
#include "orchestrator/prune.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/history.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"

#define PRUNED_PREFIX ".pruned-"
#define DU_DEPTH      16     /* a session is two levels deep */
#define DU_ENTRIES    100000 /* entries counted per session */
#define HALF_DONE_MAX 100    /* stopped prunes finished per prune */

tnd_prune_verdict tnd_prune_decide(tnd_session_status state, int64_t age_ms,
                                   const tnd_prune_options *o)
{
    if (state == TND_SESSION_RUNNING)
        return TND_PRUNE_RUNNING;
    if (state == TND_SESSION_QUEUED)
        return TND_PRUNE_QUEUED;
    if (state == TND_SESSION_WAITING && !o->waiting)
        return TND_PRUNE_WAITING;
    return age_ms >= o->older_than_ms ? TND_PRUNE_REMOVE : TND_PRUNE_NEWER;
}

/* Bytes on disk under name in parent (du's count), symlinks not
 * followed; at most *budget entries. */
static uint64_t du_at(int parent, const char *name, int depth, size_t *budget)
{
    struct stat st;
    struct dirent *e;
    uint64_t total;
    DIR *d;
    int fd;

    if (*budget == 0 || fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    (*budget)--;
    total = (uint64_t)st.st_blocks * 512;
    if (!S_ISDIR(st.st_mode) || depth >= DU_DEPTH)
        return total;
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return total;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return total;
    }
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            total += du_at(dirfd(d), e->d_name, depth + 1, budget);
    closedir(d);
    return total;
}

static uint64_t du(const char *path)
{
    size_t budget = DU_ENTRIES;

    return du_at(AT_FDCWD, path, 0, &budget);
}

/* The session's age: since its last record, else since its directory
 * last changed. */
static int64_t age_of(const tnd_summary *s, const char *dir,
                      const tnd_prune_options *o)
{
    struct stat st;
    int64_t last = s->last;

    if (last <= 0 && stat(dir, &st) == 0)
        last = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    return o->now_ms - last;
}

/* Finish what a prune that was stopped halfway started. */
static void finish_half_done(const char *sessions)
{
    DIR *d = opendir(sessions);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL && n < HALF_DONE_MAX)
        if (strncmp(e->d_name, PRUNED_PREFIX, strlen(PRUNED_PREFIX)) == 0) {
            tnd_fs_rmtree_at(dirfd(d), e->d_name);
            n++;
        }
    if (d)
        closedir(d);
}

/* Remove session it (it->verdict TND_PRUNE_REMOVE) holding its lock;
 * its verdict changes when it started again or was answered since it
 * was judged. */
static int remove_session(tnd_prune_item *it, const char *dir,
                          const char *sessions, const char *rundir_base,
                          const tnd_prune_options *o)
{
    tnd_session *ses = tnd_session_open(o->repo, it->id);
    tnd_summary now;
    char *hidden = NULL;
    int rc = -1;

    if (!ses)
        goto out;
    if (tnd_session_lock(ses) < 0) {
        if (!tnd_session_locked(dir))
            goto out;
        it->verdict = TND_PRUNE_RUNNING; /* a tandem took it meanwhile */
        rc = 0;
        goto out;
    }
    /* judged again under the lock: it may have been resumed or answered
     * since */
    tnd_history_summary(&now, o->repo, it->id, true);
    if (now.last > 0) /* else the lock file just touched the directory */
        it->age_ms = o->now_ms - now.last;
    it->verdict = tnd_prune_decide(now.state, it->age_ms, o);
    tnd_history_summary_clear(&now);
    if (it->verdict != TND_PRUNE_REMOVE) {
        rc = 0;
        goto out;
    }
    hidden = tnd_xasprintf("%s/" PRUNED_PREFIX "%s", sessions, it->id);
    if (rename(dir, hidden) < 0) {
        tnd_error_sys("cannot move %s out of the way", dir);
        goto out;
    }
    if (tnd_fs_rmtree(hidden) < 0) {
        tnd_error_prefix("it is out of the list, and the next prune will "
                         "try again");
        goto out;
    }
    if (rundir_base) {
        int kept = tnd_rundir_remove_kept(rundir_base, it->id, dir, false);
        if (kept < 0)
            goto out;
        it->workspace = kept == 1;
    }
    rc = 0;
out:
    if (rc < 0) {
        tnd_error_prefix("cannot remove .tandem/sessions/%s", it->id);
        it->error = tnd_xstrdup(tnd_error_last());
    }
    tnd_session_destroy(&ses); /* lets go of the lock */
    free(hidden);
    return rc;
}

int tnd_prune(tnd_prune_result *out, const tnd_prune_options *o)
{
    char *sessions = tnd_xasprintf("%s/.tandem/sessions", o->repo);
    char **ids = tnd_session_list(o->repo);
    /* no base: no kept workspaces to look for */
    char *rundir_base = tnd_rundir_base();
    size_t n = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    /* a link there would have the removals below act where it leads */
    if (!o->dry_run && tnd_session_check_home(o->repo) == 0)
        finish_half_done(sessions);
    for (char **p = ids; *p; p++)
        n++;
    if (n > TND_PRUNE_MAX_SESSIONS) {
        n = TND_PRUNE_MAX_SESSIONS;
        out->more = true;
    }
    out->items = tnd_xcalloc(n + 1, sizeof(tnd_prune_item));
    for (size_t i = 0; i < n; i++) {
        tnd_prune_item *it = &out->items[i];
        char *dir = tnd_fs_join(sessions, ids[i]);
        tnd_summary s;
        tnd_history_summary(&s, o->repo, ids[i], false);
        it->id = tnd_xstrdup(ids[i]);
        it->state = s.state;
        it->age_ms = age_of(&s, dir, o);
        it->verdict = tnd_prune_decide(s.state, it->age_ms, o);
        tnd_history_summary_clear(&s);
        out->count++;
        if (it->verdict == TND_PRUNE_REMOVE) {
            it->bytes = du(dir);
            if (o->dry_run)
                it->workspace =
                    rundir_base &&
                    tnd_rundir_remove_kept(rundir_base, it->id, dir, true) == 1;
            else if (remove_session(it, dir, sessions, rundir_base, o) < 0)
                rc = -1;
        }
        free(dir);
    }
    free(rundir_base);
    tnd_str_list_free(&ids);
    free(sessions);
    return rc;
}

void tnd_prune_result_clear(tnd_prune_result *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].id);
        free(r->items[i].error);
    }
    free(r->items);
    memset(r, 0, sizeof(*r));
}
