/* The bubblewrap command line for a skill (see sandbox.h).
 *
 * The filesystem is an allowlist rather than the host's root read-only
 * with secrets subtracted: a list of secrets is never complete (another
 * user's home, a token under /run, the repository's .tandem/, tandem's
 * own runtime directory wherever TMPDIR puts it), while what a build
 * needs from the host is the system's directories. The order of the
 * options matters to bwrap, which applies them in turn: the private
 * tmpfs go before the workspace, so a workspace inside $TMPDIR (where
 * tandem keeps it) is bound back on top of the tmpfs that hides the rest
 * of the runtime directory. */
#include "skills/sandbox.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"

/* The host's directories a build needs, bound read-only at their place
 * (or, when the host has a symlink there, as on merged-/usr systems, the
 * same symlink). Nothing else of the host is in the sandbox. */
static const char *const system_paths[] = {"/usr",    "/bin",   "/sbin",
                                           "/lib",    "/lib32", "/lib64",
                                           "/libx32", "/etc",   NULL};

/* Secrets under the bound directories: covered by an empty file or an
 * empty read-only directory when the host has them and this user could
 * read them (a file) or list or enter them (a directory). One this user
 * cannot read needs no cover: the sandbox runs as the same user with the
 * same groups and no capability on the host's files (a user namespace
 * of its own, every capability dropped, setuid ignored), so it cannot
 * read it either, and each cover is a bind mount that costs bwrap a
 * reading of the whole mount table (bench/RESULTS.md). As root every
 * secret is covered, and so is every other entry of /etc that others may
 * not read (PRIVATE_DIR, tnd_sandbox_host.private_entries): the sandbox
 * runs as root too, and without capabilities it is still the owner of
 * root's files. */
static const char *const covered_paths[] = {"/etc/shadow",
                                            "/etc/shadow-",
                                            "/etc/gshadow",
                                            "/etc/gshadow-",
                                            "/etc/ssh",
                                            "/etc/ssl/private",
                                            NULL};

/* The directory whose private entries are covered as root. */
#define PRIVATE_DIR "/etc"

/* Places the sandbox makes of its own; a $HOME or $TMPDIR that is one of
 * them, or above one, is not given a tmpfs (it would hide them). */
static const char *const own_paths[] = {"/dev", "/proc", "/tmp", "/var/tmp",
                                        NULL};

/* The host's resolver directory, which /etc/resolv.conf may point into:
 * shown read-only to a skill with network: true. */
#define RESOLVER "/run/systemd/resolve"

/* Where resolve() looks when the environment has no PATH: execvp's
 * default. */
#define DEFAULT_PATH "/bin:/usr/bin"

/* Symlinks followed by tnd_sandbox_shows at most (/bin -> usr/bin is
 * one). */
#define MAX_HOPS 8

static tnd_sandbox_kind real_lookup(const char *path, char *target, size_t size)
{
    struct stat st;
    ssize_t n;

    if (lstat(path, &st) < 0)
        return TND_SANDBOX_PATH_ABSENT;
    if (S_ISDIR(st.st_mode))
        return TND_SANDBOX_PATH_DIR;
    if (!S_ISLNK(st.st_mode))
        return TND_SANDBOX_PATH_FILE;
    n = size ? readlink(path, target, size - 1) : -1;
    if (n < 0)
        return TND_SANDBOX_PATH_ABSENT;
    target[n] = '\0';
    return TND_SANDBOX_PATH_SYMLINK;
}

static bool real_readable(const char *path, tnd_sandbox_kind kind)
{
    /* access(2) answers for the real uid and, unless that is root,
     * without capabilities: as the sandbox would. A directory this user
     * may list (r) or enter (x) is covered: either shows something. */
    if (kind == TND_SANDBOX_PATH_DIR)
        return access(path, R_OK) == 0 || access(path, X_OK) == 0;
    return access(path, R_OK) == 0;
}

static bool real_executable(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

/* A walk for real_private_entries. */
typedef struct scan {
    char **v;
    size_t n, alloc;
    size_t seen;      /* entries looked at */
    int64_t deadline; /* tnd_now_ms() */
    bool stop;        /* a bound of count or time stopped it */
    bool partial;     /* something was not looked at */
} scan;

static void scan_add(scan *s, const char *path)
{
    TND_GROW(s->v, s->alloc, s->n + 2);
    s->v[s->n++] = tnd_xstrdup(path);
    s->v[s->n] = NULL;
}

/* The private entries beneath the directory open at fd (path), which is
 * closed. */
static void scan_dir(scan *s, int fd, const char *path, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;

    if (!d) {
        close(fd);
        return;
    }
    while (!s->stop && (e = readdir(d))) {
        struct stat st;
        char *child;
        int sub;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++s->seen > TND_SANDBOX_SCAN_ENTRIES ||
            s->n >= TND_SANDBOX_SCAN_FOUND || tnd_now_ms() > s->deadline) {
            s->stop = s->partial = true;
            break;
        }
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        child = tnd_xasprintf("%s/%s", path, e->d_name);
        if (S_ISREG(st.st_mode) && !(st.st_mode & S_IROTH)) {
            scan_add(s, child);
        } else if (S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) {
            scan_add(s, child); /* covered whole: not looked into */
        } else if (S_ISDIR(st.st_mode)) {
            if (depth >= TND_SANDBOX_SCAN_DEPTH)
                s->partial = true;
            else if ((sub = openat(dirfd(d), e->d_name,
                                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                       O_CLOEXEC)) >= 0)
                scan_dir(s, sub, child, depth + 1);
        }
        free(child);
    }
    closedir(d);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **real_private_entries(const char *dir)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    scan s = {NULL, 0, 0, 0, tnd_now_ms() + TND_SANDBOX_SCAN_MS, false, false};
    int fd;

    /* another user's sandbox reads what that user may, no more: its
     * permissions keep the rest unread */
    if (getuid() != 0)
        return NULL;
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return NULL;
    scan_dir(&s, fd, dir, 1);
    if (s.partial && !atomic_flag_test_and_set(&warned))
        tnd_log_warn("sandbox: %s holds more than can be checked (%d "
                     "entries, %d not world-readable, %d deep, %d ms): only "
                     "the %zu entries others may not read that were found "
                     "first are covered from skills",
                     dir, TND_SANDBOX_SCAN_ENTRIES, TND_SANDBOX_SCAN_FOUND,
                     TND_SANDBOX_SCAN_DEPTH, TND_SANDBOX_SCAN_MS, s.n);
    if (s.n)
        qsort(s.v, s.n, sizeof(*s.v), by_string);
    return s.v;
}

const tnd_sandbox_host tnd_sandbox_real_host = {
    real_lookup, real_executable, real_readable, real_private_entries};

bool tnd_sandbox_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (strcmp(dir, "/") == 0)
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

typedef struct args {
    char **v;
    size_t n, alloc;
} args;

static void add(args *a, const char *s)
{
    TND_GROW(a->v, a->alloc, a->n + 2);
    a->v[a->n++] = tnd_xstrdup(s);
    a->v[a->n] = NULL;
}

static void add3(args *a, const char *opt, const char *x, const char *y)
{
    add(a, opt);
    add(a, x);
    if (y)
        add(a, y);
}

/* A tmpfs of bwrap's at path, of size bytes at most. */
static void add_tmpfs(args *a, const char *path, const char *size)
{
    add3(a, "--size", size, NULL);
    add3(a, "--tmpfs", path, NULL);
}

/* How a $HOME or $TMPDIR is made private: inside the sandbox's own /tmp
 * or /var/tmp, an empty directory there; elsewhere a tmpfs of its own
 * (size bytes at most; cover NULL: bwrap's --tmpfs, else the option
 * cover), unless it is "/", relative, above a directory the sandbox
 * needs (a tmpfs would hide it) or inside the workspace (writable
 * anyway). */
static void add_private(args *a, const char *path, const char *workspace,
                        const char *cover, const char *size)
{
    if (!path || path[0] != '/' || strcmp(path, "/") == 0 ||
        tnd_sandbox_under(path, workspace))
        return;
    if (tnd_sandbox_under(path, "/tmp") ||
        tnd_sandbox_under(path, "/var/tmp")) {
        if (strcmp(path, "/tmp") != 0 && strcmp(path, "/var/tmp") != 0)
            add3(a, "--dir", path, NULL);
        return;
    }
    for (int i = 0; system_paths[i]; i++)
        if (tnd_sandbox_under(system_paths[i], path))
            return;
    for (int i = 0; own_paths[i]; i++)
        if (tnd_sandbox_under(own_paths[i], path) ||
            tnd_sandbox_under(path, own_paths[i]))
            return;
    if (cover)
        add3(a, cover, path, NULL);
    else
        add_tmpfs(a, path, size);
}

/* Cover p (of kind) with an empty file or an empty read-only directory;
 * whether it was. */
static bool add_cover(args *a, const char *p, tnd_sandbox_kind kind)
{
    switch (kind) {
    case TND_SANDBOX_PATH_DIR:
        add3(a, "--tmpfs", p, NULL);
        add3(a, "--remount-ro", p, NULL);
        return true;
    case TND_SANDBOX_PATH_FILE:
        add3(a, "--ro-bind", "/dev/null", p);
        return true;
    default: /* a symlink leads out of /etc or to a covered path */
        return false;
    }
}

/* Cover the host's private entries of PRIVATE_DIR, but those beneath one
 * of covered[0 .. n) (covered already). */
static void add_private_entries(args *a, const tnd_sandbox_host *host,
                                const char *const *covered, size_t n)
{
    char **found, target[4096];

    if (!host->private_entries || !(found = host->private_entries(PRIVATE_DIR)))
        return;
    for (char **p = found; *p; p++) {
        bool under = false;
        for (size_t i = 0; i < n && !under; i++)
            under = tnd_sandbox_under(*p, covered[i]);
        if (!under)
            add_cover(a, *p, host->lookup(*p, target, sizeof(target)));
    }
    tnd_str_list_free(&found);
}

/* What every sandbox has: bwrap's options, then the system's
 * directories read-only with their secrets covered, a /dev, a /proc, and
 * private /tmp and /var/tmp of size bytes each at most. With resolver,
 * the host's resolver directory (an /etc/resolv.conf may point into
 * /run) read-only. own: a skill's own sandbox, not the holder: it dies
 * with the thread that runs it, no user namespace can be made in it, and
 * its /dev is read-only but for a /dev/shm of its own (the holder's
 * /dev, as every entry makes it, is read-only to the skills, and the
 * enter program makes their user namespace inside the holder's). */
static void add_base(args *a, const tnd_sandbox_host *host, const char *bwrap,
                     bool network, bool resolver, bool own, const char *size)
{
    char target[4096];
    const char *covered[sizeof(covered_paths) / sizeof(*covered_paths)];
    size_t ncovered = 0;

    add(a, bwrap);
    /* the sandbox dies with the reviewer's thread that runs it, and its
     * command cannot reach the reviewer's terminal (TIOCSTI) */
    if (own)
        add(a, "--die-with-parent");
    add(a, "--new-session");
    add(a, "--unshare-user");
    /* in a user namespace of its own the command would have every
     * capability again: it could mount a tmpfs of no size bound */
    if (own)
        add(a, "--disable-userns");
    add(a, "--unshare-pid");
    add(a, "--unshare-ipc");
    add(a, "--unshare-uts");
    add(a, "--unshare-cgroup-try");
    if (!network)
        add(a, "--unshare-net");
    add3(a, "--cap-drop", "ALL", NULL);
    for (int i = 0; system_paths[i]; i++) {
        const char *p = system_paths[i];
        switch (host->lookup(p, target, sizeof(target))) {
        case TND_SANDBOX_PATH_DIR:
            add3(a, "--ro-bind", p, p);
            break;
        case TND_SANDBOX_PATH_SYMLINK:
            add3(a, "--symlink", target, p);
            break;
        default: /* absent, or a file where a directory belongs */
            break;
        }
    }
    for (int i = 0; covered_paths[i]; i++) {
        const char *p = covered_paths[i];
        tnd_sandbox_kind kind = host->lookup(p, target, sizeof(target));
        if ((kind == TND_SANDBOX_PATH_DIR || kind == TND_SANDBOX_PATH_FILE) &&
            !host->readable(p, kind))
            continue;
        if (add_cover(a, p, kind))
            covered[ncovered++] = p;
    }
    add_private_entries(a, host, covered, ncovered);
    add3(a, "--dev", "/dev", NULL);
    if (own) {
        /* bwrap's /dev is a tmpfs of no size bound, /dev/shm a directory
         * in it */
        add_tmpfs(a, "/dev/shm", size);
        add3(a, "--remount-ro", "/dev", NULL);
    }
    add3(a, "--proc", "/proc", NULL);
    add_tmpfs(a, "/tmp", size);
    add_tmpfs(a, "/var/tmp", size);
    if (resolver &&
        host->lookup(RESOLVER, target, sizeof(target)) == TND_SANDBOX_PATH_DIR)
        add3(a, "--ro-bind", RESOLVER, RESOLVER);
}

/* $TMPDIR and $HOME made private (see add_private), with cover the
 * option that puts an empty tmpfs on a directory (NULL: bwrap's, of size
 * bytes). */
static void add_privates(args *a, const tnd_sandbox_spec *spec,
                         const char *cover, const char *size)
{
    add_private(a, spec->tmpdir, spec->workspace, cover, size);
    if (!spec->home || !spec->tmpdir || strcmp(spec->home, spec->tmpdir) != 0)
        add_private(a, spec->home, spec->workspace, cover, size);
}

unsigned long long tnd_sandbox_tmpfs_bytes(const tnd_sandbox_spec *spec)
{
    unsigned long long most = (unsigned long long)TND_SANDBOX_TMPFS_MB << 20;

    return spec && spec->memory_bytes && spec->memory_bytes < most
               ? spec->memory_bytes
               : most;
}

/* tnd_sandbox_tmpfs_bytes as text. */
static void tmpfs_size(char *out, size_t n, const tnd_sandbox_spec *spec)
{
    snprintf(out, n, "%llu", tnd_sandbox_tmpfs_bytes(spec));
}

static void add_argv(args *a, const char *const *argv)
{
    add(a, "--");
    for (const char *const *p = argv; *p; p++)
        add(a, *p);
}

static const tnd_sandbox_host *host_of(const tnd_sandbox_spec *spec)
{
    return spec->host ? spec->host : &tnd_sandbox_real_host;
}

char **tnd_sandbox_argv(const tnd_sandbox_spec *spec)
{
    args a = {NULL, 0, 0};
    char size[32];

    assert(spec->bwrap && spec->workspace && spec->argv && spec->argv[0]);
    tmpfs_size(size, sizeof(size), spec);
    add_base(&a, host_of(spec), spec->bwrap, spec->network, spec->network, true,
             size);
    add_privates(&a, spec, NULL, size);
    add3(&a, "--bind", spec->workspace, spec->workspace);
    /* bwrap's root is a tmpfs of no size bound: read-only once every
     * mount point in it is made */
    add3(&a, "--remount-ro", "/", NULL);
    add3(&a, "--chdir", spec->workspace, NULL);
    add_argv(&a, spec->argv);
    return a.v;
}

bool tnd_sandbox_root_ok(const char *dir)
{
    if (!dir || dir[0] != '/' || strcmp(dir, "/") == 0 || strstr(dir, "/./") ||
        strstr(dir, "/../") || strstr(dir, "//"))
        return false;
    for (int i = 0; system_paths[i]; i++)
        if (tnd_sandbox_under(system_paths[i], dir) ||
            tnd_sandbox_under(dir, system_paths[i]))
            return false;
    for (int i = 0; own_paths[i]; i++)
        if (tnd_sandbox_under(own_paths[i], dir))
            return false;
    /* what the sandbox makes of its own; beneath /tmp and /var/tmp is
     * where a runtime directory usually is */
    return !tnd_sandbox_under(dir, "/dev") && !tnd_sandbox_under(dir, "/proc");
}

char **tnd_sandbox_holder_argv(const char *bwrap, const char *const *roots,
                               int info_fd, const char *const *argv,
                               const tnd_sandbox_host *host)
{
    args a = {NULL, 0, 0};
    char fd[16], size[32];

    assert(bwrap && roots && argv && argv[0] && info_fd > 2);
    /* it outlives the thread that starts it: it ends when its command
     * reads the end of its stdin (skills/holder.h) */
    tmpfs_size(size, sizeof(size), NULL);
    add_base(&a, host ? host : &tnd_sandbox_real_host, bwrap, false, true,
             false, size);
    snprintf(fd, sizeof(fd), "%d", info_fd);
    add3(&a, "--info-fd", fd, NULL);
    for (const char *const *r = roots; *r; r++) {
        assert(tnd_sandbox_root_ok(*r));
        add3(&a, "--bind", *r, *r);
    }
    add3(&a, "--chdir", "/", NULL);
    add_argv(&a, argv);
    return a.v;
}

char **tnd_sandbox_enter_argv(const tnd_sandbox_spec *spec, const char *enter,
                              long pid, unsigned long long start,
                              const char *const *roots)
{
    const tnd_sandbox_host *host = host_of(spec);
    char target[4096], num[32];
    args a = {NULL, 0, 0};

    assert(enter && spec->workspace && spec->argv && spec->argv[0]);
    add(&a, enter);
    snprintf(num, sizeof(num), "%ld", pid);
    add(&a, num);
    snprintf(num, sizeof(num), "%llu", start);
    add(&a, num);
    tmpfs_size(num, sizeof(num), spec);
    add3(&a, "--size", num, NULL);
    if (spec->network)
        add(&a, "--network");
    /* the roots first: no other workspace stays in sight, and nothing
     * can be written beside this one (read-only once it is bound) */
    for (const char *const *r = roots; *r; r++)
        add3(&a, "--hide", *r, NULL);
    add3(&a, "--cover", "/tmp", NULL);
    add3(&a, "--cover", "/var/tmp", NULL);
    if (!spec->network &&
        host->lookup(RESOLVER, target, sizeof(target)) == TND_SANDBOX_PATH_DIR)
        add3(&a, "--cover", RESOLVER, NULL);
    add_privates(&a, spec, "--cover", NULL);
    add3(&a, "--workspace", spec->workspace, NULL);
    add_argv(&a, spec->argv);
    return a.v;
}

/* The host path a symlink at link (absolute) with target leads to, with
 * rest (a part below link, starting with '/' or empty) appended. */
static char *follow(const char *link, const char *target, const char *rest)
{
    char *dir, *out;
    const char *slash;

    if (target[0] == '/')
        return tnd_xasprintf("%s%s", target, rest);
    slash = strrchr(link, '/');
    dir = tnd_xstrndup(link, (size_t)(slash - link));
    out = tnd_xasprintf("%s/%s%s", dir, target, rest);
    free(dir);
    return out;
}

static bool shows(const char *path, const char *workspace,
                  const tnd_sandbox_host *host, int hops)
{
    char target[4096];

    if (workspace && tnd_sandbox_under(path, workspace))
        return true;
    for (int i = 0; covered_paths[i]; i++)
        if (tnd_sandbox_under(path, covered_paths[i]))
            return false;
    for (int i = 0; system_paths[i]; i++) {
        const char *s = system_paths[i];
        if (!tnd_sandbox_under(path, s))
            continue;
        switch (host->lookup(s, target, sizeof(target))) {
        case TND_SANDBOX_PATH_DIR:
            return true;
        case TND_SANDBOX_PATH_SYMLINK:
            if (hops < MAX_HOPS) {
                char *to = follow(s, target, path + strlen(s));
                bool ok = shows(to, workspace, host, hops + 1);
                free(to);
                return ok;
            }
            return false;
        default:
            return false;
        }
    }
    return false;
}

bool tnd_sandbox_shows(const char *path, const char *workspace,
                       const tnd_sandbox_host *host)
{
    return shows(path, workspace, host ? host : &tnd_sandbox_real_host, 0);
}

/* What the sandbox shows, for messages. */
#define SHOWN                                                              \
    "the sandbox shows the workspace and the system's directories: /usr, " \
    "/bin, /sbin, /lib*, /etc"

int tnd_sandbox_resolve(char **out, const char *prog, const char *path,
                        const char *workspace, const tnd_sandbox_host *host)
{
    char *hidden = NULL;

    *out = NULL;
    if (!host)
        host = &tnd_sandbox_real_host;
    if (!*prog) {
        tnd_error_set("cannot run '': the command is empty");
        return -1;
    }
    if (strchr(prog, '/')) {
        const char *rel = prog;
        char *abs;
        while (rel[0] == '.' && rel[1] == '/')
            rel += 2 + strspn(rel + 2, "/");
        abs = prog[0] == '/' ? tnd_xstrdup(prog)
                             : tnd_xasprintf("%s/%s", workspace, rel);
        if (!host->executable(abs)) {
            free(abs);
            errno = ENOENT;
            return tnd_error_sys("cannot run '%s'", prog);
        }
        if (!tnd_sandbox_shows(abs, workspace, host)) {
            free(abs);
            tnd_error_set("cannot run '%s': it is not in the sandbox (%s)",
                          prog, SHOWN);
            return -1;
        }
        *out = abs;
        return 0;
    }
    if (!path)
        path = DEFAULT_PATH;
    for (const char *p = path, *end;; p = end + 1) {
        char *dir, *cand;
        end = strchr(p, ':');
        if (!end)
            end = p + strlen(p);
        dir = end == p ? tnd_xstrdup(workspace)
              : p[0] != '/'
                  ? tnd_xasprintf("%s/%.*s", workspace, (int)(end - p), p)
                  : tnd_xstrndup(p, (size_t)(end - p));
        cand = tnd_xasprintf("%s/%s", dir, prog);
        free(dir);
        if (host->executable(cand)) {
            if (tnd_sandbox_shows(cand, workspace, host)) {
                free(hidden);
                *out = cand;
                return 0;
            }
            if (!hidden)
                hidden = tnd_xstrdup(cand);
        }
        free(cand);
        if (!*end)
            break;
    }
    if (hidden)
        tnd_error_set("cannot run '%s': %s is not in the sandbox (%s)", prog,
                      hidden, SHOWN);
    else
        tnd_error_set("cannot run '%s': not found on PATH (%s)", prog, path);
    free(hidden);
    return -1;
}
