/* Session directory and files (see session.h). */
#include "orchestrator/session.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

struct tnd_session {
    char *id;
    char *dir;
};

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
    free(s->id);
    free(s->dir);
    free(s);
    *self_p = NULL;
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
