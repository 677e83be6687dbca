/* Session directory and files (see session.h). */
#include "orchestrator/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdint.h>
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
#include "common/log.h"
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
    NULL,         "approved",    "rejected",  "escalated",
    "failed",     "interrupted", "running",   "waiting",
    "unreadable", "queued",      "unstarted",
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

/* YYYYMMDD-HHMMSS-RRRRRRRR: the UTC time for people, and 32 random bits
 * so that runs started in the same second, in one repository or in
 * several (whose runtime directories share a parent), do not meet: 64
 * runs in one second collide once in ~2 million batches, and the
 * mkdir below retries the rare clash in one repository. */
void tnd_session_make_id(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    unsigned char rnd[TND_SESSION_ID_RANDOM_BYTES] = {0};

    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
        uint64_t t =
            (uint64_t)tnd_now_ms() * 2654435761u ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < sizeof(rnd); i++)
            rnd[i] = (unsigned char)(t >> (8 * i));
    }
    gmtime_r(&now, &tm);
    snprintf(out, size, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x%02x",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, rnd[0], rnd[1], rnd[2], rnd[3]);
}

/* What a directory of tandem's must be, as st (of path) says: a
 * directory, not a link to one (a repository can carry `.tandem`: prune
 * removed what a link led to); and, when owned, this process's user's
 * with nobody else to write in it, as tandem makes one (0755): another
 * user could change what one of theirs holds under tandem, a link put
 * where it reads or writes, a directory swapped for one of another
 * repository's. 0, or -1 with the error naming path and what it is. */
static int check_dir(const char *path, const struct stat *st, bool owned)
{
    if (!S_ISDIR(st->st_mode))
        return tnd_error_set("%s is %s, not a directory", path,
                             S_ISLNK(st->st_mode) ? "a symbolic link"
                                                  : "a file");
    if (owned && st->st_uid != geteuid())
        return tnd_error_set("%s belongs to another user (uid %d), not to "
                             "uid %d",
                             path, (int)st->st_uid, (int)geteuid());
    if (owned && (st->st_mode & 022))
        return tnd_error_set("others may write in %s (mode %04o)", path,
                             (unsigned)(st->st_mode & 07777));
    return 0;
}

/* The error set, with what to do about it after it. -1. */
static int advise(const char *advice)
{
    char *why = tnd_xstrdup(tnd_error_last());

    tnd_error_set("%s; %s", why, advice);
    free(why);
    return -1;
}

/* path is missing or a directory of its own. */
static int own_dir(const char *path)
{
    struct stat st;

    if (lstat(path, &st) < 0 || check_dir(path, &st, false) == 0)
        return 0;
    return advise("tandem keeps sessions only in a directory of their own "
                  "(remove it)");
}

int tnd_session_check_home(const char *repo)
{
    char *top = tnd_fs_join(repo, ".tandem");
    char *sessions = tnd_fs_join(top, "sessions");
    int rc = own_dir(top) < 0 || own_dir(sessions) < 0 ? -1 : 0;

    free(sessions);
    free(top);
    return rc;
}

/* The directory name in at (path names it), opened through no link and
 * checked as check_dir(owned) checks one. Its descriptor, or -1
 * (TND_ENOTFOUND when it is not there) with the error set. */
static int open_own(int at, const char *name, const char *path)
{
    struct stat st;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc;

    if (fd < 0 && errno == ENOENT) {
        tnd_error_set("%s: no such directory", path);
        return TND_ENOTFOUND;
    }
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        check_dir(path, &st, false) < 0)
        return -1;
    if (fd < 0)
        return tnd_error_sys("cannot open %s", path);
    rc = fstat(fd, &st) < 0 ? tnd_error_sys("cannot read %s", path)
                            : check_dir(path, &st, true);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The directories names[0..n) in repo, each opened from the one before
 * with open_own. The last one's descriptor, or -1 (TND_ENOTFOUND when
 * the repository or one of them is not there) with the error set. */
static int open_chain(const char *repo, const char *const *names, size_t n)
{
    char *path = tnd_xstrdup(repo);
    int fd, next;

    /* the repository as named: its owner's to arrange; what is below it
     * must be this user's, so that nobody can swap it under the reader */
    fd = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        next = errno == ENOENT ? TND_ENOTFOUND : -1;
        tnd_error_sys("cannot open the repository %s", repo);
        free(path);
        return next;
    }
    for (size_t i = 0; i < n; i++) {
        char *longer = tnd_fs_join(path, names[i]);
        free(path);
        path = longer;
        next = open_own(fd, names[i], path);
        close(fd);
        if ((fd = next) < 0)
            break;
    }
    free(path);
    return fd;
}

int tnd_session_dir_open(const char *repo, const char *id)
{
    const char *const names[] = {".tandem", "sessions", id};
    int fd;

    if (!tnd_session_id_valid(id))
        return tnd_error_set("'%s' is not a session id (YYYYMMDD-HHMMSS-HEX)",
                             id);
    fd = open_chain(repo, names, 3);
    if (fd < 0 && fd != TND_ENOTFOUND) {
        char *advice = tnd_xasprintf(
            "tandem reads a session only through directories of its own "
            "user (uid %d) that nobody else may write in, none a link: "
            "`.tandem`, `.tandem/sessions` and the session's (else what "
            "it read could be another repository's session)",
            (int)geteuid());
        advise(advice);
        free(advice);
    }
    return fd;
}

int tnd_session_check_own_home(const char *repo)
{
    static const char *const names[] = {".tandem", "sessions"};
    int fd = open_chain(repo, names, 2);

    if (fd == TND_ENOTFOUND) {
        tnd_error_clear();
        return 0;
    }
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* .tandem/.gitignore, when missing: made new, never through a link. */
static int write_ignore(const char *path)
{
    static const char text[] = "# tandem's sessions and state\n*\n";
    int fd =
        open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = 0;

    if (fd < 0)
        return errno == EEXIST ? 0 : tnd_error_sys("cannot write %s", path);
    if (write(fd, text, sizeof(text) - 1) != (ssize_t)sizeof(text) - 1)
        rc = tnd_error_sys("cannot write %s", path);
    close(fd);
    return rc;
}

/* repo/.tandem/sessions, made (with .tandem/.gitignore) when missing;
 * NULL with the error set. */
static char *sessions_home(const char *repo)
{
    char *top = tnd_fs_join(repo, ".tandem");
    char *sessions = tnd_fs_join(top, "sessions");
    char *ignore = tnd_fs_join(top, ".gitignore");

    if (tnd_session_check_home(repo) < 0 || tnd_fs_mkdirs(sessions, 0755) < 0 ||
        tnd_session_check_home(repo) < 0 || write_ignore(ignore) < 0) {
        free(sessions);
        sessions = NULL;
    }
    free(top);
    free(ignore);
    return sessions;
}

static tnd_session *made(const char *repo, const char *id, char *dir)
{
    tnd_session *s = tnd_xcalloc(1, sizeof(*s));

    s->id = tnd_xstrdup(id);
    s->dir = dir;
    s->repo = tnd_xstrdup(repo);
    s->lock_fd = -1;
    return s;
}

tnd_session *tnd_session_new(const char *repo)
{
    char *sessions = sessions_home(repo);
    tnd_session *s = NULL;
    char id[64];

    if (!sessions)
        return NULL;
    for (int tries = 0; tries < 20 && !s; tries++) {
        char *dir;
        tnd_session_make_id(id, sizeof(id));
        dir = tnd_fs_join(sessions, id);
        if (mkdir(dir, 0755) == 0)
            s = made(repo, id, dir);
        else
            free(dir);
    }
    if (!s)
        tnd_error_sys("cannot create a session directory in %s", sessions);
    free(sessions);
    return s;
}

/* Whether dir, which is there already, is a session made and never
 * journaled: a directory whose journal is missing or empty. */
static bool unmade(const char *dir, const char *journal)
{
    struct stat st;

    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return false;
    if (lstat(journal, &st) < 0)
        return errno == ENOENT;
    return S_ISREG(st.st_mode) && st.st_size == 0;
}

/* Whether dir is this user's and nobody else writes in it: a session
 * directory made by tandem (0755, its user's). One another user made, or
 * may write in, is not taken: they could have put a link where tandem
 * writes (the temporary file of change.diff, say) to a file of this
 * user's, without a race to win. -1 with the error set, naming it. */
static int own_session_dir(const char *dir)
{
    struct stat st;

    if (lstat(dir, &st) < 0)
        return tnd_error_sys("cannot read the session directory %s", dir);
    if (check_dir(dir, &st, true) < 0)
        return advise("that session directory is there already, and tandem "
                      "takes one only when it made it (remove it, or submit "
                      "the task under another id)");
    return 0;
}

tnd_session *tnd_session_new_as(const char *repo, const char *id)
{
    char *sessions, *dir, *journal;

    if (!tnd_session_id_valid(id)) {
        tnd_error_set("'%s' is not a session id (YYYYMMDD-HHMMSS-HEX)", id);
        return NULL;
    }
    if (!(sessions = sessions_home(repo)))
        return NULL;
    dir = tnd_fs_join(sessions, id);
    journal = tnd_fs_join(dir, "journal.jsonl");
    free(sessions);
    if (mkdir(dir, 0755) < 0 && (errno != EEXIST || !unmade(dir, journal))) {
        if (errno != EEXIST)
            tnd_error_sys("cannot create the session directory %s", dir);
        else
            tnd_error_set("session %s is in %s already; submit the task "
                          "under another id",
                          id, repo);
        free(journal);
        free(dir);
        return NULL;
    }
    free(journal);
    if (own_session_dir(dir) < 0) {
        free(dir);
        return NULL;
    }
    return made(repo, id, dir);
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

bool tnd_session_id_valid(const char *name)
{
    size_t len = strlen(name);

    return (len == 20 || len == 24) && strspn(name, "0123456789") == 8 &&
           name[8] == '-' && strspn(name + 9, "0123456789") == 6 &&
           name[15] == '-' && strspn(name + 16, "0123456789abcdef") == len - 16;
}

char **tnd_session_list(const char *repo)
{
    char *dir = tnd_xasprintf("%s/.tandem/sessions", repo);
    DIR *d = NULL;
    struct dirent *e;
    struct stat st;
    char **ids = NULL;
    size_t n = 0, alloc = 0;

    if (tnd_session_check_home(repo) < 0)
        tnd_log_warn("%s", tnd_error_last());
    else
        d = opendir(dir);
    free(dir);
    while (d && (e = readdir(d)) != NULL) {
        if (!tnd_session_id_valid(e->d_name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode))
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

/* How an id matches what a person typed: the whole id, or a part of it
 * (its start "20261124-10", its random end, anything inside). An exact id
 * wins; parts are one kind, so a part two sessions hold is ambiguous
 * wherever it sits in each (a suffix of one used to beat a substring of
 * another, and `tandem approve` answered the session the person may not
 * have meant). */
typedef enum match_kind {
    MATCH_NONE,
    MATCH_PART,
    MATCH_EXACT,
} match_kind;

static match_kind match(const char *id, const char *part)
{
    if (!*part)
        return MATCH_NONE;
    if (strcmp(id, part) == 0)
        return MATCH_EXACT;
    return strstr(id, part) ? MATCH_PART : MATCH_NONE;
}

int tnd_session_match(const char *id, const char *part)
{
    return (int)match(id, part);
}

/* The ids an ambiguity message lists, at most. */
#define AMBIGUOUS_LISTED 8

/* The session of exactly this id, without listing them all (prune opens
 * each one it removes: 10,000 took 83 s); NULL when there is none. */
char *tnd_session_dir_of(const char *repo, const char *id)
{
    return tnd_xasprintf("%s/.tandem/sessions/%s", repo, id);
}

static tnd_session *open_exact(const char *repo, const char *id)
{
    char *dir;
    struct stat st;
    tnd_session *s = NULL;

    if (!*id || strchr(id, '/') || id[0] == '.' ||
        tnd_session_check_home(repo) < 0)
        return NULL;
    dir = tnd_session_dir_of(repo, id);
    if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        s = tnd_xcalloc(1, sizeof(*s));
        s->id = tnd_xstrdup(id);
        s->dir = dir;
        s->repo = tnd_xstrdup(repo);
        s->lock_fd = -1;
        return s;
    }
    free(dir);
    return NULL;
}

tnd_session *tnd_session_open(const char *repo, const char *part)
{
    tnd_session *exact = open_exact(repo, part);
    char **ids;
    const char *found = NULL;
    match_kind best = MATCH_NONE;
    size_t count = 0;
    tnd_session *s = NULL;
    tnd_buf names;

    if (exact)
        return exact;
    ids = tnd_session_list(repo);
    for (char **p = ids; *p; p++) {
        match_kind m = match(*p, part);
        if (m > best) {
            best = m;
            count = 0;
        }
        if (m == best && m != MATCH_NONE) {
            found = *p;
            count++;
        }
    }
    if (count == 0) {
        tnd_error_set("no session matches '%s' in %s/.tandem/sessions "
                      "(tandem sessions lists them)",
                      part, repo);
    } else if (count > 1 && best != MATCH_EXACT) {
        size_t listed = 0;
        tnd_buf_init(&names, 1024);
        for (char **p = ids; *p; p++)
            if (match(*p, part) == best && listed++ < AMBIGUOUS_LISTED)
                tnd_buf_printf(&names, "%s%s", names.len ? ", " : "", *p);
        if (listed > AMBIGUOUS_LISTED)
            tnd_buf_printf(&names, " and %zu more", listed - AMBIGUOUS_LISTED);
        tnd_error_set("'%s' matches %zu sessions (%s); give more of the id",
                      part, count, tnd_buf_str(&names));
        tnd_buf_free(&names);
    } else if (tnd_session_check_home(repo) == 0) {
        s = tnd_xcalloc(1, sizeof(*s));
        s->id = tnd_xstrdup(found);
        s->dir = tnd_session_dir_of(repo, found);
        s->repo = tnd_xstrdup(repo);
        s->lock_fd = -1;
    }
    tnd_str_list_free(&ids);
    return s;
}

/* The lock file names this process as the holder: a lock of ours that
 * was just let go, still held by a child forked meanwhile (by another
 * thread of tandem serve) that has not reached its exec, where the
 * close-on-exec descriptor goes. Wait for it, a bounded time; true once
 * the lock is ours. */
static bool own_lock_released(int fd)
{
    int64_t deadline = tnd_now_ms() + TND_SESSION_OWN_LOCK_WAIT_MS;
    char pid[32];
    ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

    pid[n > 0 ? n : 0] = '\0';
    if (strtol(pid, NULL, 10) != (long)getpid())
        return false;
    while (tnd_now_ms() < deadline) {
        struct timespec nap = {0, 2 * 1000 * 1000};
        nanosleep(&nap, NULL);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return true;
    }
    return false;
}

/* The lock file at path: no link followed, no FIFO or device opened
 * (a reader would block on one for ever). -1 with the error set. */
static int open_lock(const char *path, int flags)
{
    int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat st;

    if (fd < 0)
        return tnd_error_sys("cannot open %s", path);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tnd_error_set("%s is not a regular file; remove it", path);
    }
    return fd;
}

/* The lock of the session id in dir, taken: its descriptor, or -1 with
 * the error set (naming the holder's pid when another process has it). */
static int lock_dir(const char *dir, const char *id)
{
    char *path = tnd_fs_join(dir, "lock");
    char pid[32];
    int fd = open_lock(path, O_RDWR | O_CREAT);

    free(path);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 && !own_lock_released(fd)) {
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0'; /* a queued session's has more */
        tnd_str_trim(pid);
        tnd_error_set("session %s is being worked on by another tandem%s%s%s; "
                      "wait for it to end, or follow it with 'tandem watch "
                      "%s'",
                      id, *pid ? " (pid " : "", pid, *pid ? ")" : "", id);
        close(fd);
        return -1;
    }
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, strlen(pid), 0) < 0) {
        /* the pid is only for messages */
    }
    return fd;
}

int tnd_session_lock(tnd_session *self)
{
    int fd = lock_dir(self->dir, self->id);

    if (fd < 0)
        return -1;
    self->lock_fd = fd;
    return 0;
}

int tnd_session_lock_dir(const char *dir)
{
    const char *slash = strrchr(dir, '/');

    return lock_dir(dir, slash ? slash + 1 : dir);
}

int tnd_session_take_lock(tnd_session *self)
{
    int fd = self->lock_fd;

    self->lock_fd = -1;
    return fd;
}

void tnd_session_adopt_lock(tnd_session *self, int fd)
{
    if (self->lock_fd >= 0)
        close(self->lock_fd);
    self->lock_fd = fd;
}

/* The lock file's second line while its holder has the session queued */
#define QUEUED_LINE "queued\n"

void tnd_session_lock_queued(int fd, bool queued)
{
    char text[64];

    snprintf(text, sizeof(text), "%ld\n%s", (long)getpid(),
             queued ? QUEUED_LINE : "");
    /* what the file says is for people and listings only */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, text, strlen(text), 0) < 0)
        tnd_error_clear();
}

bool tnd_session_queued(const char *dir)
{
    char *path = tnd_fs_join(dir, "lock");
    int fd = open_lock(path, O_RDONLY);
    char text[64];
    ssize_t n;
    const char *nl;
    bool queued = false;

    free(path);
    if (fd < 0) {
        tnd_error_clear();
        return false;
    }
    n = pread(fd, text, sizeof(text) - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    nl = strchr(text, '\n');
    if (nl && strcmp(nl + 1, QUEUED_LINE) == 0 &&
        flock(fd, LOCK_SH | LOCK_NB) < 0)
        queued = true;
    close(fd);
    return queued;
}

bool tnd_session_locked(const char *dir)
{
    char *path = tnd_fs_join(dir, "lock");
    int fd = open_lock(path, O_RDONLY);
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

enum { VIEW, FRESH, DURABLE }; /* how write_redacted writes */

/* Write a session file with every registered secret (an API key a
 * model echoed) replaced. */
static int write_redacted(tnd_session *self, const char *name, const char *data,
                          size_t len, int how)
{
    char *path = tnd_session_path(self, name);
    char *text = tnd_xmalloc(len + 1);
    int error;

    memcpy(text, data, len);
    text[len] = '\0';
    if (strlen(text) == len) /* text; a file with a NUL goes as it is */
        len = strlen(tnd_str_ends_with(name, ".json")
                         ? tnd_log_redact_json(text) /* stays JSON */
                         : tnd_log_redact(text));
    error = how == DURABLE ? tnd_fs_write_atomic(path, text, len)
            : how == FRESH ? tnd_fs_write_swap(path, text, len)
                           : tnd_fs_write_replace(path, text, len);
    free(text);
    free(path);
    return error;
}

int tnd_session_write(tnd_session *self, const char *name, const char *data,
                      size_t len)
{
    return write_redacted(self, name, data, len, DURABLE);
}

int tnd_session_write_view(tnd_session *self, const char *name,
                           const char *data, size_t len)
{
    return write_redacted(self, name, data, len, VIEW);
}

int tnd_session_write_fresh(tnd_session *self, const char *name,
                            const char *data, size_t len)
{
    return write_redacted(self, name, data, len, FRESH);
}
