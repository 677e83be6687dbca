/* Session directory and files (see session.h). */
#include "orchestrator/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/names.h"
#include "common/str.h"
#include "common/xalloc.h"

struct tnd_session {
    char *id;
    char *dir;
    char *repo;
    int lock_fd; /* -1 until locked */
};

static const char *const status_names[] = {
    NULL,          "approved", "rejected", "escalated",  "failed",
    "interrupted", "running",  "waiting",  "unreadable",
};
static const tnd_names states = TND_NAMES("session state", status_names);
/* what files say: a run's outcome */
static const tnd_names outcomes = {"session status", status_names,
                                   TND_SESSION_INTERRUPTED + 1};

const char *tnd_session_status_name(tnd_session_status s)
{
    return tnd_names_name(&states, (int)s);
}

int tnd_session_status_parse(tnd_session_status *out, const char *name)
{
    return tnd_names_parse((int *)out, &outcomes, name);
}

static void make_id(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    unsigned char rnd[2] = {0, 0};

    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
        int64_t t = tnd_now_ms() ^ (int64_t)getpid();
        rnd[0] = (unsigned char)t;
        rnd[1] = (unsigned char)(t >> 8);
    }
    gmtime_r(&now, &tm);
    snprintf(out, size, "%04d%02d%02d-%02d%02d%02d-%02x%02x", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             rnd[0], rnd[1]);
}

tnd_session *tnd_session_new(const char *repo)
{
    char *top = tnd_fs_join(repo, ".tandem");
    char *sessions = tnd_fs_join(top, "sessions");
    char *ignore = tnd_fs_join(top, ".gitignore");
    tnd_session *s = NULL;
    char id[64];

    if (tnd_fs_mkdirs(sessions, 0755) < 0)
        goto out;
    if (!tnd_fs_exists(ignore) &&
        tnd_fs_write(ignore, "# tandem's sessions and state\n*\n", 32) < 0)
        goto out;
    for (int tries = 0; tries < 20; tries++) {
        char *dir;
        make_id(id, sizeof(id));
        dir = tnd_fs_join(sessions, id);
        if (mkdir(dir, 0755) == 0) {
            s = tnd_xcalloc(1, sizeof(*s));
            s->id = tnd_xstrdup(id);
            s->dir = dir;
            s->repo = tnd_xstrdup(repo);
            s->lock_fd = -1;
            break;
        }
        free(dir);
    }
    if (!s)
        tnd_error_sys("cannot create a session directory in %s", sessions);
out:
    free(top);
    free(sessions);
    free(ignore);
    return s;
}

void tnd_session_destroy(tnd_session **self_p)
{
    tnd_session *s = self_p ? *self_p : NULL;

    if (!s)
        return;
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* releases the flock */
    free(s->id);
    free(s->dir);
    free(s->repo);
    free(s);
    *self_p = NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tnd_session_list(const char *repo)
{
    char *dir = tnd_xasprintf("%s/.tandem/sessions", repo);
    DIR *d = opendir(dir);
    struct dirent *e;
    char **ids = NULL;
    size_t n = 0, alloc = 0;

    free(dir);
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        TND_GROW(ids, alloc, n + 2);
        ids[n++] = tnd_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    TND_GROW(ids, alloc, n + 1);
    ids[n] = NULL;
    if (n > 1)
        qsort(ids, n, sizeof(char *), cmp_str);
    return ids;
}

tnd_session *tnd_session_open(const char *repo, const char *prefix)
{
    char **ids = tnd_session_list(repo);
    const char *match = NULL;
    size_t count = 0, plen = strlen(prefix);
    tnd_session *s = NULL;
    tnd_buf names;

    tnd_buf_init(&names, 4096);
    for (char **p = ids; *p; p++) {
        if (plen == 0 || strncmp(*p, prefix, plen) != 0)
            continue;
        if (strcmp(*p, prefix) == 0) { /* an exact id wins */
            match = *p;
            count = 1;
            break;
        }
        match = *p;
        count++;
        tnd_buf_printf(&names, "%s%s", names.len ? ", " : "", *p);
    }
    if (count == 0)
        tnd_error_set("no session matches '%s' in %s/.tandem/sessions "
                      "(tandem sessions lists them)",
                      prefix, repo);
    else if (count > 1)
        tnd_error_set("'%s' matches %zu sessions (%s); give more of the id",
                      prefix, count, tnd_buf_str(&names));
    else {
        s = tnd_xcalloc(1, sizeof(*s));
        s->id = tnd_xstrdup(match);
        s->dir = tnd_xasprintf("%s/.tandem/sessions/%s", repo, match);
        s->repo = tnd_xstrdup(repo);
        s->lock_fd = -1;
    }
    tnd_buf_free(&names);
    tnd_str_list_free(&ids);
    return s;
}

int tnd_session_lock(tnd_session *self)
{
    char *path = tnd_session_path(self, "lock");
    char pid[32];
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0) {
        tnd_error_sys("cannot open %s", path);
        free(path);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        ssize_t n = read(fd, pid, sizeof(pid) - 1);
        pid[n > 0 ? n : 0] = '\0';
        tnd_str_trim(pid);
        tnd_error_set("session %s is being worked on by another tandem%s%s%s",
                      self->id, *pid ? " (pid " : "", pid, *pid ? ")" : "");
        close(fd);
        free(path);
        return -1;
    }
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, strlen(pid), 0) < 0) {
        /* the pid is only for messages */
    }
    self->lock_fd = fd;
    free(path);
    return 0;
}

bool tnd_session_locked(const char *dir)
{
    char *path = tnd_fs_join(dir, "lock");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool held = false;

    free(path);
    if (fd < 0)
        return false;
    if (flock(fd, LOCK_SH | LOCK_NB) < 0)
        held = true;
    close(fd);
    return held;
}

const char *tnd_session_id(const tnd_session *self)
{
    return self->id;
}

const char *tnd_session_dir(const tnd_session *self)
{
    return self->dir;
}

char *tnd_session_path(const tnd_session *self, const char *name)
{
    return tnd_fs_join(self->dir, name);
}

char *tnd_session_relpath(const tnd_session *self, const char *name)
{
    return tnd_xasprintf(".tandem/sessions/%s/%s", self->id, name);
}

int tnd_session_write(tnd_session *self, const char *name, const char *data,
                      size_t len)
{
    char *path = tnd_session_path(self, name);
    int error = tnd_fs_write_atomic(path, data, len);

    free(path);
    return error;
}
