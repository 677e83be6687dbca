/* Runtime directories: made already locked, held for the owner's life,
 * swept when the owner is gone (see rundir.h).
 *
 * Everything below the base is reached relative to an open directory,
 * never following a symlink: the base is the user's alone, but a run's
 * own files (a build in the workspace) are not to be trusted. */
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"

#define LOCK          "lock"
#define KEPT          "kept"
#define NEW_PREFIX    ".new-"
#define GONE_PREFIX   ".gone-"
#define REVIEW_PREFIX "review-"
#define SUFFIX_LEN    6
#define NOTE_MAX      4096 /* a lock's pid, a kept directory's owner */
#define MAKE_TRIES    20

struct tnd_rundir {
    char *path;
    char *owner; /* for the kept marker; may be NULL */
    int lock_fd; /* holds the flock on path/lock */
};

/* ---- names ---------------------------------------------------------- */

typedef enum name_kind {
    NAME_OTHER,   /* not ours: never touched */
    NAME_SESSION, /* 20261122-014455-3fa2c91b (4 hex digits before) */
    NAME_REVIEW,  /* review-XXXXXX */
    NAME_NEW,     /* .new-XXXXXX, on its way to one of the above */
    NAME_GONE,    /* .gone-XXXXXX, a dead one on its way out */
    NAME_PROBE,   /* probe-XXXXXX, where a sandbox is tried (bwrap.c) */
} name_kind;

static bool all_in(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return false;
    return true;
}

#define DIGITS "0123456789"
#define ALNUM  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" DIGITS

static bool suffixed(const char *name, const char *prefix)
{
    size_t plen = strlen(prefix);

    return strncmp(name, prefix, plen) == 0 &&
           strlen(name) == plen + SUFFIX_LEN &&
           all_in(name + plen, SUFFIX_LEN, ALNUM);
}

static name_kind kind_of(const char *name)
{
    if (tnd_session_id_valid(name))
        return NAME_SESSION;
    if (suffixed(name, REVIEW_PREFIX))
        return NAME_REVIEW;
    if (suffixed(name, NEW_PREFIX))
        return NAME_NEW;
    if (suffixed(name, GONE_PREFIX))
        return NAME_GONE;
    if (suffixed(name, TND_FS_PROBE_PREFIX))
        return NAME_PROBE;
    return NAME_OTHER;
}

static void random_suffix(char out[SUFFIX_LEN + 1])
{
    static const char chars[] = ALNUM;
    unsigned char rnd[SUFFIX_LEN];

    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
        uint64_t t = (uint64_t)tnd_now_ms() * 2654435761u ^ (uint64_t)getpid();
        for (size_t i = 0; i < sizeof(rnd); i++)
            rnd[i] = (unsigned char)(t >> (8 * i));
    }
    for (size_t i = 0; i < SUFFIX_LEN; i++)
        out[i] = chars[rnd[i] % (sizeof(chars) - 1)];
    out[SUFFIX_LEN] = '\0';
}

/* ---- the base ------------------------------------------------------- */

char *tnd_rundir_base(void)
{
    return tnd_fs_user_tmp();
}

/* ---- judging a directory -------------------------------------------- */

typedef enum verdict {
    V_GONE,     /* nothing there */
    V_NOT_OURS, /* not a directory of the user's, or not as we make them */
    V_LIVE,     /* its owner holds the lock */
    V_KEPT,     /* kept with --keep-workspace */
    V_YOUNG,    /* no lock yet, or too young to judge */
    V_DEAD,     /* its owner is gone: remove it */
} verdict;

/* Up to size - 1 bytes of the regular file name in dfd, trimmed, into
 * out ("" when it cannot be read). */
static void read_note(int dfd, const char *name, char *out, size_t size)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n = -1;

    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = pread(fd, out, size - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    tnd_str_trim(out);
    if (fd >= 0)
        close(fd);
}

/* What base/name is. With force (the caller owns the name: a resume of
 * the session), a kept or lockless directory is dead too. For V_DEAD,
 * *lock_fd holds its lock (or is -1: it has no lock file) until the
 * caller has removed it, and *dir_fd holds the directory judged open
 * (retire removes that one only, and while it is open its inode number
 * cannot go to another); for V_LIVE, pid gets the holder's pid. */
static verdict judge(int basefd, const char *name, bool force, int *lock_fd,
                     int *dir_fd, char *pid, size_t pid_size)
{
    name_kind kind = kind_of(name);
    struct stat st, dst;
    verdict v;
    int dfd, fd;
    bool kept;

    *lock_fd = *dir_fd = -1;
    if (pid_size)
        *pid = '\0';
    if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return V_GONE;
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
        return V_NOT_OURS;
    dfd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? V_GONE : V_NOT_OURS;
    if (fstat(dfd, &dst) < 0 || dst.st_ino != st.st_ino ||
        dst.st_dev != st.st_dev) {
        close(dfd);
        return V_GONE; /* replaced under us: look again next time */
    }
    /* a .new- directory's lock is taken a moment after the file is
     * created (a probe's, after the directory): leave it that moment,
     * without even trying the lock (a try that succeeds would make its
     * owner's fail) */
    if (!force && (kind == NAME_NEW || kind == NAME_PROBE) &&
        time(NULL) - dst.st_mtime < TND_RUNDIR_NEW_GRACE_S) {
        close(dfd);
        return V_YOUNG;
    }
    if (kind == NAME_PROBE) {
        /* locked itself by its maker (tnd_fs_mkdtemp_held), and held
         * by dfd until removed; free in one an older tandem made */
        if (flock(dfd, LOCK_EX | LOCK_NB) < 0) {
            close(dfd);
            return V_LIVE;
        }
        *dir_fd = dfd;
        return V_DEAD;
    }
    kept = !force && faccessat(dfd, KEPT, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    fd = openat(dfd, LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        struct stat lst;
        if (fstat(fd, &lst) < 0 || !S_ISREG(lst.st_mode)) {
            v = V_NOT_OURS;
        } else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            v = V_LIVE;
            if (pid_size)
                read_note(dfd, LOCK, pid, pid_size);
        } else {
            v = kept ? V_KEPT : V_DEAD;
        }
        if (v == V_DEAD)
            *lock_fd = fd;
        else
            close(fd);
    } else if (errno != ENOENT) {
        v = V_NOT_OURS;
    } else if (kept) {
        v = V_KEPT;
    } else {
        /* no lock file: a run killed while making it, or a tandem from
         * before lock files; judged by age */
        long limit = kind == NAME_NEW || kind == NAME_GONE
                         ? TND_RUNDIR_NEW_GRACE_S
                         : TND_RUNDIR_LOCKLESS_AGE_S;
        v = force || time(NULL) - dst.st_mtime >= limit ? V_DEAD : V_YOUNG;
    }
    if (v == V_DEAD)
        *dir_fd = dfd;
    else
        close(dfd);
    return v;
}

/* ---- making one ----------------------------------------------------- */

/* A fresh .new-XXXXXX in base, with its lock taken: its name goes to
 * tmp. The lock's descriptor, or -1 with the error set. */
static int make_locked(int basefd, const char *base, char *tmp, size_t size)
{
    char suffix[SUFFIX_LEN + 1];
    int dfd, fd = -1;

    for (int tries = 0; tries < MAKE_TRIES; tries++) {
        random_suffix(suffix);
        snprintf(tmp, size, NEW_PREFIX "%s", suffix);
        if (mkdirat(basefd, tmp, 0700) == 0)
            break;
        if (errno != EEXIST || tries == MAKE_TRIES - 1)
            return tnd_error_sys("cannot create a directory in %s", base);
    }
    dfd = openat(basefd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || (fd = tnd_fs_lock_new(dfd, LOCK)) < 0)
        tnd_error_sys("cannot lock %s/%s/" LOCK, base, tmp);
    if (dfd >= 0)
        close(dfd);
    if (fd < 0)
        tnd_fs_rmtree_at(basefd, tmp);
    return fd;
}

/* rename(2) that fails with EEXIST rather than replace an empty
 * directory, so a directory being swept cannot be renamed over. */
static int rename_noreplace(int basefd, const char *from, const char *to)
{
    struct stat st;

    if (renameat2(basefd, from, basefd, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    /* a filesystem without RENAME_NOREPLACE: check, then rename */
    if (fstatat(basefd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        return -1;
    }
    return renameat(basefd, from, basefd, to);
}

/* Remove base/name, the dead directory open at dir_fd. Not by its name: a run
 * making a directory of that name (its session taken over) may have it by the
 * time a removal that emptied the old one through a handle removes it
 * by name. The dead one is renamed to a private .gone-XXXXXX first (its
 * lock, held by the caller, keeps that name on it until then: a run
 * waits for a held lock), then removed there, and only when it is the
 * directory judged; one made under the name since (possible only
 * without a lock file) is put back. So a live run's directory is never
 * removed by another process, and a run of the same name no longer
 * waits for the removal: its name is free once the rename is done. 1
 * when it was removed, 0 when it was not there to remove (gone, or put
 * back), -1 with the error set. */
static int retire(int basefd, const char *base, const char *name, int dir_fd)
{
    char gone[32], suffix[SUFFIX_LEN + 1];
    struct stat st, seen;

    if (fstat(dir_fd, &seen) < 0)
        return tnd_error_sys("cannot remove %s/%s", base, name);
    for (int tries = 0;; tries++) {
        random_suffix(suffix);
        snprintf(gone, sizeof(gone), GONE_PREFIX "%s", suffix);
        if (rename_noreplace(basefd, name, gone) == 0)
            break;
        if (errno == ENOENT)
            return 0; /* another process removed it meanwhile */
        if (errno != EEXIST || tries == MAKE_TRIES - 1)
            return tnd_error_sys("cannot remove %s/%s", base, name);
    }
    if (fstatat(basefd, gone, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0
                               : tnd_error_sys("cannot remove %s/%s (moved "
                                               "to %s to be removed)",
                                               base, name, gone);
    if (st.st_dev != seen.st_dev || st.st_ino != seen.st_ino) {
        if (rename_noreplace(basefd, gone, name) < 0)
            return tnd_error_sys("%s/%s was made again while it was being "
                                 "removed, and cannot be put back from "
                                 "%s/%s (move it back by hand)",
                                 base, name, base, gone);
        tnd_log_debug("%s/%s was made again while it was being removed: "
                      "left alone",
                      base, name);
        return 0;
    }
    /* young again, so a sweep without the lock leaves it to us */
    utimensat(basefd, gone, NULL, AT_SYMLINK_NOFOLLOW);
    if (tnd_fs_rmtree_at(basefd, gone) < 0) {
        tnd_error_prefix("cannot remove %s/%s (moved to %s to be removed)",
                         base, name, gone);
        return -1;
    }
    return 1;
}

/* Put the locked tmp in place as name (or review-XXXXXX for NULL, into
 * final): a leftover of the same name is removed first, waiting up to
 * wait_ms for a process that holds it. */
static int place(int basefd, const char *base, const char *tmp,
                 const char *name, char *final, size_t size, long wait_ms)
{
    int64_t deadline = tnd_now_ms() + wait_ms;
    char pid[NOTE_MAX] = "", suffix[SUFFIX_LEN + 1];

    for (int tries = 0; tries < MAKE_TRIES;) {
        int fd, dfd;
        verdict v;
        if (!name) {
            random_suffix(suffix);
            snprintf(final, size, REVIEW_PREFIX "%s", suffix);
        } else {
            snprintf(final, size, "%s", name);
        }
        if (rename_noreplace(basefd, tmp, final) == 0)
            return 0;
        if (errno != EEXIST && errno != ENOTEMPTY)
            return tnd_error_sys("cannot create %s/%s", base, final);
        if (!name) {
            tries++; /* a random name taken: another one */
            continue;
        }
        /* ours by the session's lock: a run of this session that was
         * killed left it, or a sweep is removing it right now */
        v = judge(basefd, final, true, &fd, &dfd, pid, sizeof(pid));
        if (v == V_LIVE) {
            struct timespec ten_ms = {0, 10 * 1000 * 1000};
            if (tnd_now_ms() >= deadline)
                return tnd_error_set(
                    "the runtime directory %s/%s is in use by another "
                    "process%s%s%s; is session %s running from another "
                    "repository? Try again when it ends",
                    base, name, *pid ? " (pid " : "", pid, *pid ? ")" : "",
                    name);
            nanosleep(&ten_ms, NULL);
            continue;
        }
        tries++;
        if (v == V_NOT_OURS)
            return tnd_error_set("%s/%s is in the way and is not a runtime "
                                 "directory of yours; remove it",
                                 base, final);
        if (v == V_DEAD) {
            int rc = retire(basefd, base, final, dfd);
            close(dfd);
            if (fd >= 0)
                close(fd);
            if (rc < 0) {
                tnd_error_prefix("cannot remove the runtime directory %s/%s "
                                 "left by an earlier run (remove it by hand)",
                                 base, final);
                return -1;
            }
        }
    }
    return tnd_error_set("cannot make a runtime directory in %s: its name "
                         "stays taken",
                         base);
}

tnd_rundir *tnd_rundir_new(const char *base, const char *name,
                           const char *owner, long wait_ms)
{
    char tmp[32], final[64];
    int basefd, fd;
    tnd_rundir *r;

    assert(!name || (!strchr(name, '/') && name[0] != '.' &&
                     strlen(name) < sizeof(final)));
    basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (basefd < 0) {
        tnd_error_sys("cannot open %s", base);
        return NULL;
    }
    if ((fd = make_locked(basefd, base, tmp, sizeof(tmp))) < 0) {
        close(basefd);
        return NULL;
    }
    if (place(basefd, base, tmp, name, final, sizeof(final), wait_ms) < 0) {
        tnd_fs_rmtree_at(basefd, tmp);
        close(fd);
        close(basefd);
        return NULL;
    }
    close(basefd);
    r = tnd_xcalloc(1, sizeof(*r));
    r->path = tnd_fs_join(base, final);
    r->owner = owner ? tnd_xstrdup(owner) : NULL;
    r->lock_fd = fd;
    return r;
}

const char *tnd_rundir_path(const tnd_rundir *self)
{
    return self->path;
}

void tnd_rundir_destroy(tnd_rundir **self_p, bool keep)
{
    tnd_rundir *r = self_p ? *self_p : NULL;

    if (!r)
        return;
    if (keep) {
        char *kept = tnd_fs_join(r->path, KEPT);
        char *note = tnd_xasprintf("%s\n", r->owner ? r->owner : "");
        /* marked before the lock goes, so no sweep finds it unmarked */
        if (tnd_fs_write_atomic(kept, note, strlen(note)) < 0)
            tnd_log_warn("%s", tnd_error_last());
        free(note);
        free(kept);
    } else if (tnd_fs_rmtree(r->path) < 0) {
        tnd_log_warn("cannot remove the runtime directory %s: %s", r->path,
                     tnd_error_last());
    }
    close(r->lock_fd); /* releases the flock: a leftover is sweepable */
    free(r->path);
    free(r->owner);
    free(r);
    *self_p = NULL;
}

/* ---- sweeping ------------------------------------------------------- */

/* Whether name is what tandem serve names a review's diff it received
 * (TND_RUNDIR_DIFF_PREFIX). */
static bool diff_name(const char *name)
{
    size_t plen = strlen(TND_RUNDIR_DIFF_PREFIX);

    return strncmp(name, TND_RUNDIR_DIFF_PREFIX, plen) == 0 &&
           strlen(name) == plen + SUFFIX_LEN + strlen(TND_RUNDIR_DIFF_SUFFIX) &&
           all_in(name + plen, SUFFIX_LEN, ALNUM) &&
           strcmp(name + plen + SUFFIX_LEN, TND_RUNDIR_DIFF_SUFFIX) == 0;
}

/* What the diff base/name is: live while its server holds its flock
 * (tnd_fs_mkstemps_held), so however long the server takes (loaded, or
 * stopped), and dead once it is gone. For V_DEAD, *fd holds its lock
 * until the caller has removed it; else it is -1. */
static verdict judge_diff(int basefd, const char *name, int *fd)
{
    struct stat st, held;
    verdict v;

    *fd = -1;
    if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return V_GONE;
    if (!S_ISREG(st.st_mode) || st.st_uid != getuid())
        return V_NOT_OURS;
    /* its lock is taken a moment after the file is made: see judge */
    if (time(NULL) - st.st_mtime <= TND_RUNDIR_NEW_GRACE_S)
        return V_YOUNG;
    *fd = openat(basefd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return errno == ENOENT ? V_GONE : V_NOT_OURS;
    if (fstat(*fd, &held) < 0 || held.st_dev != st.st_dev ||
        held.st_ino != st.st_ino)
        v = V_GONE; /* replaced under us: look again next time */
    else if (flock(*fd, LOCK_EX | LOCK_NB) < 0)
        v = V_LIVE;
    else if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
             held.st_dev != st.st_dev || held.st_ino != st.st_ino)
        v = V_GONE; /* another sweep removed it before our lock */
    else
        v = V_DEAD;
    if (v != V_DEAD) {
        close(*fd);
        *fd = -1;
    }
    return v;
}

/* Remove the diff base/name that judge_diff found dead (or count it,
 * with dry_run): one a server killed while it made the session left,
 * for good otherwise, a copy of the user's code. */
static void remove_diff(tnd_rundir_sweep *out, int basefd, const char *base,
                        const char *name, bool dry_run)
{
    if (dry_run || unlinkat(basefd, name, 0) == 0) {
        out->removed++;
        if (!dry_run)
            tnd_log_info("removed %s/%s: the server that received it is gone",
                         base, name);
    } else if (errno != ENOENT) {
        out->failed++;
        tnd_log_warn("cannot remove %s/%s (left by a server that is gone): %s",
                     base, name, strerror(errno));
    }
}

void tnd_rundir_sweep_dead(tnd_rundir_sweep *out, const char *base,
                           size_t max_entries, size_t max_removals,
                           bool dry_run)
{
    size_t seen = 0;
    struct dirent *e;
    int fd, rc;
    DIR *d;

    memset(out, 0, sizeof(*out));
    if (!(d = opendir(base))) {
        tnd_log_debug("sweep: cannot open %s", base);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        int dfd;
        verdict v;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (seen++ >= max_entries) {
            out->more = true;
            break;
        }
        if (diff_name(e->d_name)) {
            v = judge_diff(dirfd(d), e->d_name, &fd);
            if (v == V_LIVE)
                out->live++;
            else if (v == V_YOUNG)
                out->young++;
            else if (v == V_DEAD && out->removed >= max_removals)
                out->more = true;
            else if (v == V_DEAD)
                remove_diff(out, dirfd(d), base, e->d_name, dry_run);
            if (fd >= 0)
                close(fd); /* removed: the lock goes with it */
            if (out->more)
                break;
            continue;
        }
        if (kind_of(e->d_name) == NAME_OTHER)
            continue;
        v = judge(dirfd(d), e->d_name, false, &fd, &dfd, NULL, 0);
        if (v == V_LIVE)
            out->live++;
        else if (v == V_KEPT)
            out->kept++;
        else if (v == V_YOUNG)
            out->young++;
        if (v != V_DEAD)
            continue;
        if (out->removed >= max_removals) {
            out->more = true;
        } else if (dry_run) {
            out->removed++;
        } else if ((rc = retire(dirfd(d), base, e->d_name, dfd)) > 0) {
            out->removed++;
            tnd_log_info("removed %s/%s: the run that made it is gone", base,
                         e->d_name);
        } else if (rc < 0) {
            out->failed++;
            tnd_log_warn("%s (left by a run that is gone)", tnd_error_last());
        }
        if (dfd >= 0)
            close(dfd);
        if (fd >= 0)
            close(fd);
        if (out->more)
            break;
    }
    closedir(d);
}

int tnd_rundir_remove_kept(const char *base, const char *name,
                           const char *owner, bool dry_run)
{
    char note[NOTE_MAX];
    struct stat st;
    int basefd, dfd, fd = -1, rc = 0;

    if (kind_of(name) != NAME_SESSION)
        return 0;
    if ((basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return errno == ENOENT ? 0 : tnd_error_sys("cannot open %s", base);
    dfd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != getuid())
        goto out;
    read_note(dfd, KEPT, note, sizeof(note));
    if (strcmp(note, owner) != 0)
        goto out; /* not kept, or some other session's */
    fd = openat(dfd, LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
        goto out; /* a resume took it over */
    if (dry_run)
        rc = 1;
    else if ((rc = retire(basefd, base, name, dfd)) < 0)
        tnd_error_prefix("cannot remove the kept workspace %s/%s", base, name);
out:
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    close(basefd);
    return rc;
}
