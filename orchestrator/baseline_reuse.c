/* A served session's side of the baseline cache (see loop.h and
 * basecache.h): the key of this run's baseline, a baseline another
 * session ran on the same tree taken as this session's own (its task id
 * and workspace paths made this session's), journaled as `baseline` with
 * where it came from, and this run's flight ended for the sessions that
 * wait for it, with its reply only when another session may rely on it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/basecache.h"
#include "orchestrator/loop.h"
#include "orchestrator/review.h"
#include "proto/json.h"

/* s with every from replaced by to (s is freed); s itself when from is
 * not in it. */
static char *replace_all(char *s, const char *from, const char *to)
{
    size_t n = strlen(from);
    const char *p, *at;
    tnd_buf b;

    if (!s || !n || !strstr(s, from))
        return s;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (p = s; (at = strstr(p, from)); p = at + n) {
        tnd_buf_append(&b, p, (size_t)(at - p));
        tnd_buf_puts(&b, to);
    }
    tnd_buf_puts(&b, p);
    free(s);
    return tnd_buf_detach(&b, NULL);
}

/* The reply hit holds, as this session's reviewer would have sent it:
 * its task id, and the other session's workspace in the skills' output
 * named as this one's. */
static int adopt(run *r, const tnd_basecache_hit *hit, char **reply,
                 size_t *len)
{
    const char *ws = tnd_workspace_path(r->ws);
    tnd_audit_reply a;

    if (tnd_audit_reply_decode(&a, hit->reply, hit->len) < 0) {
        tnd_error_prefix("session %s's baseline", hit->session);
        return -1;
    }
    free(a.task_id);
    a.task_id = tnd_xstrdup(tnd_session_id(r->session));
    for (size_t i = 0; i < a.nskills; i++) {
        a.skills[i].output =
            replace_all(a.skills[i].output, hit->workspace, ws);
        a.skills[i].ended = replace_all(a.skills[i].ended, hit->workspace, ws);
    }
    *reply = tnd_audit_reply_encode(&a, len);
    tnd_audit_reply_clear(&a);
    return 0;
}

static void say_waiting(const char *runner, void *payload)
{
    run *r = payload;

    tnd_loop_say(r, "baseline: waiting for session %s's (same tree)", runner);
}

/* The deepest a nested .git is walked (a stack frame a level). */
#define GIT_DEPTH_MAX 64

/* stamp_entry's buffer for a file's bytes or a link's target: one, on
 * the heap, for the whole walk (a 64 KiB array in each frame took 4 MiB
 * of stack 64 levels down, past the 2 MiB a tandem serve session's
 * thread has under `ulimit -s unlimited`, and the server died of it) */
#define STAMP_BUF (64 * 1024)

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry rel beneath root, and all beneath it, into h: its path,
 * type and mode, a file's bytes, a link's target (read through buf, of
 * STAMP_BUF bytes). -1 with the error set. */
static int stamp_entry(tnd_sha256 *h, char *buf, const char *root,
                       const char *rel, int depth)
{
    char *path = tnd_fs_join(root, rel), line[64];
    struct stat st;
    int rc = 0;

    if (lstat(path, &st) < 0) {
        rc = tnd_error_sys("cannot read %s", path);
        goto out;
    }
    tnd_sha256_update(h, rel, strlen(rel) + 1);
    snprintf(line, sizeof(line), "%o", (unsigned)st.st_mode);
    tnd_sha256_update(h, line, strlen(line) + 1);
    if (S_ISREG(st.st_mode)) {
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        ssize_t n;
        if (fd < 0) {
            rc = tnd_error_sys("cannot read %s", path);
            goto out;
        }
        while ((n = read(fd, buf, STAMP_BUF)) > 0)
            tnd_sha256_update(h, buf, (size_t)n);
        if (n < 0)
            rc = tnd_error_sys("cannot read %s", path);
        close(fd);
    } else if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(path, buf, STAMP_BUF);
        if (n < 0) {
            rc = tnd_error_sys("cannot read the link %s", path);
            goto out;
        }
        tnd_sha256_update(h, buf, (size_t)n);
    } else if (S_ISDIR(st.st_mode)) {
        char **names = NULL;
        size_t n = 0, alloc = 0;
        struct dirent *e;
        DIR *d;
        if (depth > GIT_DEPTH_MAX) {
            rc = tnd_error_set("%s is more than %d directories deep", path,
                               GIT_DEPTH_MAX);
            goto out;
        }
        if (!(d = opendir(path))) {
            rc = tnd_error_sys("cannot read directory %s", path);
            goto out;
        }
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                TND_GROW(names, alloc, n + 1);
                names[n++] = tnd_fs_join(rel, e->d_name);
            }
        closedir(d);
        /* the same entries in any directory order */
        if (n)
            qsort(names, n, sizeof(*names), cmp_name);
        for (size_t i = 0; i < n; i++) {
            if (rc == 0)
                rc = stamp_entry(h, buf, root, names[i], depth + 1);
            free(names[i]);
        }
        free(names);
    }
out:
    free(path);
    return rc;
}

/* What a tree taken whole holds beneath a directory named .git below
 * its top (a vendored checkout's), as a hash into out: the snapshot
 * copies it and a reviewer on this host lets the skills read it in the
 * workspace, but neither the tree's hash nor its directories have it
 * (tnd_fs_list skips .git at every depth). dirs: the tree's
 * directories. "" when there is none. -1 with the error set. */
static int nested_git(char out[TND_SHA256_HEX + 1], const char *root,
                      char *const *dirs)
{
    bool any = false;
    char *buf = NULL;
    tnd_sha256 h;

    out[0] = '\0';
    tnd_sha256_init(&h);
    for (size_t i = 0; dirs && dirs[i]; i++) {
        char *rel = tnd_fs_join(dirs[i], ".git"),
             *path = tnd_fs_join(root, rel);
        int rc = 0;
        if (tnd_fs_exists(path)) {
            any = true;
            if (!buf)
                buf = tnd_xmalloc(STAMP_BUF);
            rc = stamp_entry(&h, buf, root, rel, 0);
        }
        free(path);
        free(rel);
        if (rc < 0) {
            free(buf);
            return -1;
        }
    }
    free(buf);
    if (!any)
        return 0;
    tnd_sha256_final_hex(out, &h);
    return 0;
}

int tnd_loop_baseline_reuse(run *r, const tnd_audit_request *ar,
                            const char *service, char **reply, size_t *len,
                            char **from)
{
    tnd_basecache *cache = r->host ? r->host->baselines : NULL;
    const char *stamp;
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1], git[TND_SHA256_HEX + 1], **dirs = NULL;
    char *stamped;
    int64_t deadline;
    bool by_budget;
    int rc;

    *reply = NULL;
    *from = NULL;
    if (!cache || r->gate.baseline_reuse_s <= 0 || !ar->tree)
        return 0;
    /* the tree's hash has no directories, and a tree copied whole may
     * hold empty ones the skills see; git's files imply their own
     * directories, so such a tree is not walked again (dirs NULL) */
    if (!tnd_snapshot_about(r->base)->git &&
        tnd_fs_list_dirs(&dirs, NULL, tnd_snapshot_path(r->base),
                         TND_TREE_MAX_FILES) < 0) {
        tnd_error_prefix("the shared baseline's key");
        return -1;
    }
    if (nested_git(git, tnd_snapshot_path(r->base), dirs) < 0) {
        /* a tree `tandem run` takes (a nested .git too deep, a file in
         * it unreadable) runs its own baseline, unshared: failing the
         * session for a key of the cache's failed what runs alone */
        tnd_loop_say(r, "baseline: not shared with other sessions (%s)",
                     tnd_error_last());
        tnd_error_clear();
        tnd_str_list_free(&dirs);
        return 0;
    }
    /* the files' whole modes too (and where build outputs may be, their
     * mtimes: tnd_loop_with_content): a reviewer on this host runs the skills
     * in the workspace, where they are the user's, and the tree's hash has only
     * the exec bit */
    stamp = r->content ? tnd_content_stamp(r->content) : NULL;
    stamped = tnd_xasprintf("%s %s %s", ar->tree, stamp ? stamp : "", git);
    tnd_basecache_key(key, r->cfg, stamped, dirs, service);
    free(stamped);
    tnd_str_list_free(&dirs);
    deadline = tnd_loop_deadline(r, service, &by_budget);
    rc = tnd_basecache_take(&hit, cache, key, tnd_session_id(r->session),
                            tnd_workspace_path(r->ws), deadline, r->stop,
                            say_waiting, r);
    if (rc == TND_BASECACHE_RUN)
        snprintf(r->baseline_flight, sizeof(r->baseline_flight), "%s", key);
    if (rc == TND_BASECACHE_ALONE)
        tnd_loop_say(r, "baseline: that run failed; running this session's "
                        "own");
    if (rc != TND_BASECACHE_HIT)
        return rc < 0 ? rc : 0;
    if ((rc = adopt(r, &hit, reply, len)) == 0) {
        *from = hit.session;
        hit.session = NULL;
    }
    tnd_basecache_hit_clear(&hit);
    return rc;
}

bool tnd_loop_baseline_reusable(const tnd_config *cfg,
                                const tnd_audit_reply *base)
{
    if (!base)
        return false;
    for (size_t i = 0; i < base->nskills; i++) {
        const tnd_skill_result *s = &base->skills[i];
        const tnd_skill_config *c = tnd_config_skill(cfg, s->name);
        if (!c || tnd_review_cannot_run(s) || s->ended ||
            (s->status != TND_SKILL_PASS && s->status != TND_SKILL_FAIL &&
             s->status != TND_SKILL_SKIPPED))
            return false;
        if (s->status != TND_SKILL_SKIPPED && !*c->builtin &&
            c->sandbox == TND_SANDBOX_BWRAP &&
            s->sandbox != TND_ISOLATION_BWRAP)
            return false;
    }
    return true;
}

void tnd_loop_baseline_done(run *r, const tnd_audit_reply *base,
                            const char *reply, size_t len)
{
    bool keep = reply && tnd_loop_baseline_reusable(r->cfg, base);

    if (!r->baseline_flight[0])
        return;
    tnd_basecache_done(r->host->baselines, r->baseline_flight,
                       keep ? reply : NULL, keep ? len : 0);
    r->baseline_flight[0] = '\0';
}

int tnd_loop_journal_baseline(run *r, const char *reply, size_t len,
                              const char *from)
{
    json_object *obj = NULL, *f;

    if (!from)
        return tnd_loop_journal_reply(r, "baseline", 0, reply, len, NULL);
    if (tnd_json_parse(&obj, reply, len) < 0)
        return -1;
    f = json_object_new_object();
    json_object_object_add(f, "attempt", json_object_new_int(0));
    json_object_object_add(f, "reply", obj);
    json_object_object_add(f, "reused_from", json_object_new_string(from));
    return tnd_loop_step(r, "baseline", f);
}

char *tnd_loop_baseline_source(const run *r)
{
    long at = tnd_loop_find(r, "baseline", 0, 0);
    const char *from;

    if (at < 0)
        return NULL;
    from = tnd_json_str_or(tnd_journal_record(r->journal, (size_t)at),
                           "reused_from", NULL);
    return from ? tnd_xstrdup(from) : NULL;
}
