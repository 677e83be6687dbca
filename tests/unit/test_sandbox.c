/* Unit tests for skills/sandbox: the bwrap command line for given
 * inputs, on a host of the test's making (a merged-/usr system, or one
 * with real /bin and /lib), and finding a skill's program as the sandbox
 * will see it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/bwrap.h"
#include "skills/sandbox.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- a host of the test's making --------------------------------------- */

typedef struct fake_path {
    const char *path;
    tnd_sandbox_kind kind;
    const char *target; /* for a symlink */
} fake_path;

/* Debian 12: /bin, /sbin, /lib, /lib64 are symlinks into /usr; no
 * /lib32 or /libx32; shadow files and ssh host keys in /etc. */
static const fake_path merged[] = {
    {"/usr", TND_SANDBOX_PATH_DIR, NULL},
    {"/bin", TND_SANDBOX_PATH_SYMLINK, "usr/bin"},
    {"/sbin", TND_SANDBOX_PATH_SYMLINK, "usr/sbin"},
    {"/lib", TND_SANDBOX_PATH_SYMLINK, "usr/lib"},
    {"/lib64", TND_SANDBOX_PATH_SYMLINK, "usr/lib64"},
    {"/etc", TND_SANDBOX_PATH_DIR, NULL},
    {"/etc/shadow", TND_SANDBOX_PATH_FILE, NULL},
    {"/etc/gshadow", TND_SANDBOX_PATH_FILE, NULL},
    {"/etc/ssh", TND_SANDBOX_PATH_DIR, NULL},
    {"/run/systemd/resolve", TND_SANDBOX_PATH_DIR, NULL},
    {NULL, 0, NULL},
};

/* An older layout: real directories, /lib32 too, no secrets in /etc. */
static const fake_path split[] = {
    {"/usr", TND_SANDBOX_PATH_DIR, NULL},
    {"/bin", TND_SANDBOX_PATH_DIR, NULL},
    {"/sbin", TND_SANDBOX_PATH_DIR, NULL},
    {"/lib", TND_SANDBOX_PATH_DIR, NULL},
    {"/lib32", TND_SANDBOX_PATH_DIR, NULL},
    {"/etc", TND_SANDBOX_PATH_DIR, NULL},
    {NULL, 0, NULL},
};

/* Executable files of the fake hosts. */
static const char *const programs[] = {
    "/usr/bin/make",        "/usr/bin/cc",
    "/usr/local/bin/cargo", "/root/.cargo/bin/cargo",
    "/home/u/bin/mytool",   "/ws/configure",
    "/ws/tools/gen",        NULL};

static const fake_path *host_paths;

static tnd_sandbox_kind fake_lookup(const char *path, char *target, size_t size)
{
    for (const fake_path *p = host_paths; p->path; p++)
        if (strcmp(p->path, path) == 0) {
            if (p->target)
                snprintf(target, size, "%s", p->target);
            return p->kind;
        }
    return TND_SANDBOX_PATH_ABSENT;
}

static bool fake_executable(const char *path)
{
    /* /bin/x is /usr/bin/x on the merged host, as the kernel would see */
    char via[256];

    if (host_paths == merged && strncmp(path, "/bin/", 5) == 0) {
        snprintf(via, sizeof(via), "/usr%s", path);
        path = via;
    }
    for (int i = 0; programs[i]; i++)
        if (strcmp(programs[i], path) == 0)
            return true;
    return false;
}

/* The paths the fake host's user cannot read; NULL: it is root and can
 * read them all. */
static const char *const *unreadable;

static bool fake_readable(const char *path, tnd_sandbox_kind kind)
{
    (void)kind;
    for (int i = 0; unreadable && unreadable[i]; i++)
        if (strcmp(unreadable[i], path) == 0)
            return false;
    return true;
}

static const tnd_sandbox_host fake = {fake_lookup, fake_executable,
                                      fake_readable, NULL};

/* The merged host as root sees it, with more of /etc that others may
 * not read: a file, a directory, and what the named covers already hide
 * (/etc/shadow, a key in /etc/ssh). */
static const fake_path merged_private[] = {
    {"/etc/security/opasswd", TND_SANDBOX_PATH_FILE, NULL},
    {"/etc/polkit-1/rules.d", TND_SANDBOX_PATH_DIR, NULL},
    {"/etc/shadow", TND_SANDBOX_PATH_FILE, NULL},
    {"/etc/ssh/ssh_host_rsa_key", TND_SANDBOX_PATH_FILE, NULL},
    {NULL, 0, NULL},
};

static tnd_sandbox_kind root_lookup(const char *path, char *target, size_t size)
{
    for (const fake_path *p = merged_private; p->path; p++)
        if (strcmp(p->path, path) == 0)
            return p->kind;
    return fake_lookup(path, target, size);
}

static char **root_private_entries(const char *dir)
{
    char **out = tnd_xcalloc(8, sizeof(*out));
    size_t n = 0;

    assert_string_equal(dir, "/etc");
    for (const fake_path *p = merged_private; p->path; p++)
        out[n++] = tnd_xstrdup(p->path);
    return out;
}

static const tnd_sandbox_host fake_root = {root_lookup, fake_executable,
                                           fake_readable, root_private_entries};

/* argv joined by spaces, for comparing whole command lines. */
static char *joined(char **argv)
{
    size_t len = 1;
    char *out;

    for (char **p = argv; *p; p++)
        len += strlen(*p) + 1;
    out = tnd_xcalloc(len, 1);
    for (char **p = argv; *p; p++) {
        if (p != argv)
            strcat(out, " ");
        strcat(out, *p);
    }
    return out;
}

static void assert_argv_is(const tnd_sandbox_spec *spec, const char *expect)
{
    char **argv = tnd_sandbox_argv(spec);
    char *line = joined(argv);

    assert_string_equal(line, expect);
    free(line);
    tnd_str_list_free(&argv);
}

/* The namespaces, the session and the capabilities: every command line
 * starts so. No user namespace can be made inside. */
#define HEAD                                                         \
    "/usr/bin/bwrap --die-with-parent --new-session --unshare-user " \
    "--disable-userns --unshare-pid --unshare-ipc --unshare-uts "    \
    "--unshare-cgroup-try "

/* Each tmpfs's size: 1 GiB, the most. */
#define GIB "1073741824"

/* bwrap's /dev with a /dev/shm of its own, and the rest of it
 * read-only. */
#define DEV "--dev /dev --size " GIB " --tmpfs /dev/shm --remount-ro /dev "

/* What follows the capabilities on the merged-/usr host, as root, for
 * the workspace below: the same in every test that uses it. */
#define MERGED_HOST_MOUNTS                                                   \
    "--ro-bind /usr /usr --symlink usr/bin /bin "                            \
    "--symlink usr/sbin /sbin --symlink usr/lib /lib "                       \
    "--symlink usr/lib64 /lib64 --ro-bind /etc /etc "                        \
    "--ro-bind /dev/null /etc/shadow "                                       \
    "--ro-bind /dev/null /etc/gshadow "                                      \
    "--tmpfs /etc/ssh --remount-ro /etc/ssh " DEV "--proc /proc --size " GIB \
    " --tmpfs /tmp "                                                         \
    "--size " GIB " --tmpfs /var/tmp "                                       \
    "--size " GIB " --tmpfs /home/u/tmp "                                    \
    "--size " GIB " --tmpfs /home/u "                                        \
    "--bind /home/u/tmp/tandem-1000/S/workspace "                            \
    "/home/u/tmp/tandem-1000/S/workspace --remount-ro / "                    \
    "--chdir /home/u/tmp/tandem-1000/S/workspace "

/* ---- the command line -------------------------------------------------- */

/* The default: no network; the system's directories read-only (symlinks
 * kept as symlinks), /etc's secrets covered, a /dev, a /proc and /tmp of
 * its own, $TMPDIR and $HOME private, each tmpfs bounded, the workspace
 * bound back on top (tandem keeps it inside $TMPDIR), the root made
 * read-only, then the command. */
static void merged_usr_host_without_network(void **state)
{
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/home/u/tmp/tandem-1000/S/workspace",
        .argv = ARGV("/usr/bin/make", "test"),
        .home = "/home/u",
        .tmpdir = "/home/u/tmp",
        .host = &fake,
    };

    (void)state;
    host_paths = merged;
    assert_argv_is(&spec,
                   HEAD "--unshare-net --cap-drop ALL " MERGED_HOST_MOUNTS
                        "-- /usr/bin/make test");
}

/* The holder (skills/holder.h): a skill's system directories, the
 * resolver's directory whatever the network, its pids on the info fd,
 * the roots bound writable instead of a workspace, cwd /; and it does
 * not die with the thread that starts it. */
static void a_holder_binds_its_roots(void **state)
{
    char **argv;
    char *line;

    (void)state;
    host_paths = merged;
    unreadable = NULL;
    argv = tnd_sandbox_holder_argv(
        "/usr/bin/bwrap", ARGV("/home/u/tmp/tandem-1000", "/srv/cache"), 3,
        ARGV("/usr/bin/cat"), &fake);
    line = joined(argv);
    assert_string_equal(
        line, "/usr/bin/bwrap --new-session --unshare-user --unshare-pid "
              "--unshare-ipc --unshare-uts --unshare-cgroup-try "
              "--unshare-net --cap-drop ALL "
              "--ro-bind /usr /usr --symlink usr/bin /bin "
              "--symlink usr/sbin /sbin --symlink usr/lib /lib "
              "--symlink usr/lib64 /lib64 --ro-bind /etc /etc "
              "--ro-bind /dev/null /etc/shadow "
              "--ro-bind /dev/null /etc/gshadow "
              "--tmpfs /etc/ssh --remount-ro /etc/ssh "
              "--dev /dev --proc /proc --size " GIB " --tmpfs /tmp "
              "--size " GIB " --tmpfs /var/tmp "
              "--ro-bind /run/systemd/resolve /run/systemd/resolve "
              "--info-fd 3 --bind /home/u/tmp/tandem-1000 "
              "/home/u/tmp/tandem-1000 --bind /srv/cache /srv/cache "
              "--chdir / -- /usr/bin/cat");
    free(line);
    tnd_str_list_free(&argv);
}

/* A skill's sandbox made from the holder: every root covered first (no
 * other workspace in sight), a fresh /tmp and /var/tmp, the resolver's
 * directory covered without the network, $TMPDIR and $HOME private as
 * in a sandbox of its own, then its workspace. */
static void an_entry_covers_every_root(void **state)
{
    tnd_sandbox_spec spec = {
        .workspace = "/home/u/tmp/tandem-1000/S/workspace",
        .argv = ARGV("/usr/bin/make", "test"),
        .home = "/home/u",
        .tmpdir = "/home/u/tmp",
        .host = &fake,
    };
    const char *const *roots = ARGV("/home/u/tmp/tandem-1000", "/srv/cache");
    char **argv;
    char *line;

    (void)state;
    host_paths = merged;
    argv = tnd_sandbox_enter_argv(&spec, "/opt/t/tandem-sandbox-enter", 42, 99,
                                  roots);
    line = joined(argv);
    assert_string_equal(line, "/opt/t/tandem-sandbox-enter 42 99 "
                              "--size " GIB " "
                              "--hide /home/u/tmp/tandem-1000 "
                              "--hide /srv/cache --cover /tmp "
                              "--cover /var/tmp "
                              "--cover /run/systemd/resolve "
                              "--cover /home/u/tmp --cover /home/u "
                              "--workspace /home/u/tmp/tandem-1000/S/workspace "
                              "-- /usr/bin/make test");
    free(line);
    tnd_str_list_free(&argv);
    /* with the network: the host's resolver stays; $TMPDIR inside /tmp
     * is an empty directory there */
    spec.network = true;
    spec.tmpdir = "/tmp";
    spec.home = "/tmp/h";
    argv = tnd_sandbox_enter_argv(&spec, "/e", 1, 2, roots);
    line = joined(argv);
    assert_string_equal(line, "/e 1 2 --size " GIB " --network "
                              "--hide /home/u/tmp/tandem-1000 "
                              "--hide /srv/cache --cover /tmp "
                              "--cover /var/tmp --dir /tmp/h "
                              "--workspace /home/u/tmp/tandem-1000/S/workspace "
                              "-- /usr/bin/make test");
    free(line);
    tnd_str_list_free(&argv);
}

/* A root is bound writable into every skill's starting point: never "/",
 * a system directory, one above it or above what the sandbox makes, and
 * never a path with "." or ".." in it. */
static void what_may_be_a_root(void **state)
{
    static const char *const ok[] = {"/tmp/tandem-0", "/home/u/.cache/t",
                                     "/srv/cache", "/var/tmp/x", NULL};
    static const char *const refused[] = {
        "/",        "/usr",     "/usr/lib/x", "/etc/t",   "/tmp",
        "/var",     "/var/tmp", "/home/../x", "/a/./b",   "/a//b",
        "relative", "",         "/proc/1",    "/dev/shm", NULL};

    (void)state;
    for (int i = 0; ok[i]; i++)
        if (!tnd_sandbox_root_ok(ok[i]))
            fail_msg("refused %s", ok[i]);
    for (int i = 0; refused[i]; i++)
        if (tnd_sandbox_root_ok(refused[i]))
            fail_msg("took %s", refused[i]);
    assert_false(tnd_sandbox_root_ok(NULL));
}

/* network: true keeps the host's network namespace and shows the
 * resolver's directory; real /bin and /lib are bound, not linked. */
static void split_host_with_network(void **state)
{
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/tmp/tandem-0/S/workspace",
        .argv = ARGV("/bin/sh", "-c", "make && make test"),
        .home = "/root",
        .tmpdir = "/tmp/tandem-0",
        .network = true,
        .host = &fake,
    };

    (void)state;
    host_paths = split;
    assert_argv_is(&spec,
                   HEAD "--cap-drop ALL "
                        "--ro-bind /usr /usr --ro-bind /bin /bin "
                        "--ro-bind /sbin /sbin --ro-bind /lib /lib "
                        "--ro-bind /lib32 /lib32 --ro-bind /etc /etc " DEV
                        "--proc /proc --size " GIB " --tmpfs /tmp "
                        "--size " GIB " --tmpfs /var/tmp --dir /tmp/tandem-0 "
                        "--size " GIB " --tmpfs /root "
                        "--bind /tmp/tandem-0/S/workspace "
                        "/tmp/tandem-0/S/workspace --remount-ro / "
                        "--chdir /tmp/tandem-0/S/workspace "
                        "-- /bin/sh -c make && make test");
    /* the resolver's directory only when the host has it */
    host_paths = merged;
    {
        char **argv = tnd_sandbox_argv(&spec);
        char *line = joined(argv);
        assert_non_null(strstr(line,
                               "--tmpfs /var/tmp --ro-bind "
                               "/run/systemd/resolve "
                               "/run/systemd/resolve --dir "
                               "/tmp/tandem-0 --size " GIB " --tmpfs /root"));
        free(line);
        tnd_str_list_free(&argv);
    }
}

/* A $HOME or $TMPDIR gets a tmpfs only where one cannot hide what the
 * sandbox needs: not "/", not above a system directory, not inside the
 * workspace, not relative; inside /tmp (private already) an empty
 * directory; one that equals the other is made once. */
static void home_and_tmpdir_are_private_where_that_is_safe(void **state)
{
    static const struct {
        const char *home, *tmpdir, *expect;
    } cases[] = {
        {"/", "/", "--tmpfs /var/tmp --bind"},
        {"/usr/home", NULL,
         "--tmpfs /var/tmp --size " GIB " --tmpfs /usr/home --bind"},
        {"/var", "/tmp/x", "--tmpfs /var/tmp --dir /tmp/x --bind"},
        {"/tmp/t/home", "/var/tmp",
         "--tmpfs /var/tmp --dir /tmp/t/home --bind"},
        {"/ws/home", "tmp", "--tmpfs /var/tmp --bind"},
        {"/srv/u", "/srv/u",
         "--tmpfs /var/tmp --size " GIB " --tmpfs /srv/u --bind"},
        {"/srv/u", "/data/tmp",
         "--tmpfs /var/tmp --size " GIB " --tmpfs /data/tmp --size " GIB
         " --tmpfs /srv/u --bind"},
        {NULL, NULL, "--tmpfs /var/tmp --bind"},
    };
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/ws",
        .argv = ARGV("/usr/bin/make"),
        .host = &fake,
    };

    (void)state;
    host_paths = split;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char **argv;
        char *line;
        spec.home = cases[i].home;
        spec.tmpdir = cases[i].tmpdir;
        argv = tnd_sandbox_argv(&spec);
        line = joined(argv);
        if (!strstr(line, cases[i].expect))
            fail_msg("case %zu: %s lacks %s", i, line, cases[i].expect);
        free(line);
        tnd_str_list_free(&argv);
    }
}

/* Each tmpfs holds the skill's memory limit at most (its pages are the
 * host's memory, which RLIMIT_AS does not count), and never more than
 * 1 GiB, a limit or not; an entry passes the same size on. */
static void each_tmpfs_is_bounded_by_the_memory_limit(void **state)
{
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/ws",
        .argv = ARGV("/usr/bin/make"),
        .home = "/srv/u",
        .host = &fake,
    };
    const char *const want[] = {"--size 67108864 --tmpfs /dev/shm ",
                                "--size 67108864 --tmpfs /tmp ",
                                "--size 67108864 --tmpfs /var/tmp ",
                                "--size 67108864 --tmpfs /srv/u ", NULL};
    char **argv;
    char *line;

    (void)state;
    host_paths = split;
    assert_int_equal(tnd_sandbox_tmpfs_bytes(&spec), 1ULL << 30);
    assert_int_equal(tnd_sandbox_tmpfs_bytes(NULL), 1ULL << 30);
    spec.memory_bytes = 8192ULL << 20;
    assert_int_equal(tnd_sandbox_tmpfs_bytes(&spec), 1ULL << 30);
    spec.memory_bytes = 64ULL << 20;
    assert_int_equal(tnd_sandbox_tmpfs_bytes(&spec), 64ULL << 20);
    argv = tnd_sandbox_argv(&spec);
    line = joined(argv);
    for (int i = 0; want[i]; i++)
        if (!strstr(line, want[i]))
            fail_msg("%s lacks %s", line, want[i]);
    assert_null(strstr(line, GIB));
    free(line);
    tnd_str_list_free(&argv);
    argv = tnd_sandbox_enter_argv(&spec, "/e", 1, 2, ARGV("/srv/cache"));
    line = joined(argv);
    assert_string_equal(line, "/e 1 2 --size 67108864 --hide /srv/cache "
                              "--cover /tmp --cover /var/tmp "
                              "--cover /srv/u --workspace /ws "
                              "-- /usr/bin/make");
    free(line);
    tnd_str_list_free(&argv);
}

/* ---- what the sandbox shows, and finding a program in it -------------- */

static void shows_the_system_and_the_workspace_only(void **state)
{
    (void)state;
    host_paths = merged;
    assert_true(tnd_sandbox_shows("/usr/bin/make", "/ws", &fake));
    assert_true(tnd_sandbox_shows("/bin/sh", "/ws", &fake)); /* via usr/bin */
    assert_true(tnd_sandbox_shows("/etc/passwd", "/ws", &fake));
    assert_true(tnd_sandbox_shows("/ws/tools/gen", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/etc/shadow", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/etc/ssh/ssh_host_rsa_key", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/root/.cargo/bin/cargo", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/home/u/bin/mytool", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/lib32/x", "/ws", &fake)); /* absent */
    assert_false(tnd_sandbox_shows("/wsx/a", "/ws", &fake));
    assert_false(tnd_sandbox_shows("/usrx/bin/make", "/ws", &fake));
}

static void programs_are_found_as_the_sandbox_sees_them(void **state)
{
    char *out = NULL;

    (void)state;
    host_paths = merged;
    assert_int_equal(
        tnd_sandbox_resolve(&out, "make", "/usr/local/bin:/bin", "/ws", &fake),
        0);
    assert_string_equal(out, "/bin/make");
    free(out);
    /* a PATH entry the sandbox does not show is passed over */
    assert_int_equal(tnd_sandbox_resolve(&out, "cargo",
                                         "/root/.cargo/bin:/usr/local/bin",
                                         "/ws", &fake),
                     0);
    assert_string_equal(out, "/usr/local/bin/cargo");
    free(out);
    /* relative entries and paths are the workspace's */
    assert_int_equal(tnd_sandbox_resolve(&out, "gen", "tools", "/ws", &fake),
                     0);
    assert_string_equal(out, "/ws/tools/gen");
    free(out);
    assert_int_equal(
        tnd_sandbox_resolve(&out, "./configure", NULL, "/ws", &fake), 0);
    assert_string_equal(out, "/ws/configure");
    free(out);
    /* no PATH: execvp's default, /bin first */
    assert_int_equal(tnd_sandbox_resolve(&out, "cc", NULL, "/ws", &fake), 0);
    assert_string_equal(out, "/bin/cc");
    free(out);
}

static void a_program_the_sandbox_lacks_is_an_error_naming_it(void **state)
{
    char *out = (char *)1;

    (void)state;
    host_paths = merged;
    assert_int_equal(
        tnd_sandbox_resolve(&out, "mkae", "/usr/bin:/bin", "/ws", &fake), -1);
    assert_null(out);
    assert_string_equal(tnd_error_last(),
                        "cannot run 'mkae': not found on PATH "
                        "(/usr/bin:/bin)");
    assert_int_equal(tnd_sandbox_resolve(&out, "mytool", "/home/u/bin:/usr/bin",
                                         "/ws", &fake),
                     -1);
    assert_string_equal(tnd_error_last(),
                        "cannot run 'mytool': /home/u/bin/mytool is not in "
                        "the sandbox (the sandbox shows the workspace and "
                        "the system's directories: /usr, /bin, /sbin, /lib*, "
                        "/etc)");
    assert_int_equal(
        tnd_sandbox_resolve(&out, "/root/.cargo/bin/cargo", NULL, "/ws", &fake),
        -1);
    assert_string_equal(tnd_error_last(),
                        "cannot run '/root/.cargo/bin/cargo': it is not in "
                        "the sandbox (the sandbox shows the workspace and "
                        "the system's directories: /usr, /bin, /sbin, /lib*, "
                        "/etc)");
    assert_int_equal(tnd_sandbox_resolve(&out, "/no/such", NULL, "/ws", &fake),
                     -1);
    assert_string_equal(tnd_error_last(),
                        "cannot run '/no/such': No such file or directory");
    assert_int_equal(tnd_sandbox_resolve(&out, "", NULL, "/ws", &fake), -1);
}

/* A secret this user cannot read gets no cover (each is a mount bwrap
 * pays for): the sandbox, the same user without capabilities, cannot
 * read it either. One it can read, or a directory it can look into, is
 * still covered. */
static void secrets_this_user_cannot_read_are_not_covered(void **state)
{
    static const char *const shadow_only[] = {"/etc/shadow", "/etc/gshadow",
                                              NULL};
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/ws",
        .argv = ARGV("/usr/bin/make"),
        .host = &fake,
    };

    (void)state;
    host_paths = merged;
    unreadable = shadow_only;
    assert_argv_is(&spec,
                   HEAD "--unshare-net --cap-drop ALL "
                        "--ro-bind /usr /usr --symlink usr/bin /bin "
                        "--symlink usr/sbin /sbin --symlink usr/lib /lib "
                        "--symlink usr/lib64 /lib64 --ro-bind /etc /etc "
                        "--tmpfs /etc/ssh --remount-ro /etc/ssh " DEV
                        "--proc /proc --size " GIB " --tmpfs /tmp "
                        "--size " GIB " --tmpfs /var/tmp --bind /ws /ws "
                        "--remount-ro / --chdir /ws -- /usr/bin/make");
    unreadable = NULL;
    /* tnd_sandbox_shows does not depend on it: a covered path is never a
     * place to run a program from */
    assert_false(tnd_sandbox_shows("/etc/shadow", "/ws", &fake));
}

/* As root, what else of /etc others may not read is covered too, each
 * once: a file by an empty one, a directory by an empty read-only one;
 * what a named cover hides already gets no second. */
static void as_root_every_private_entry_of_etc_is_covered(void **state)
{
    tnd_sandbox_spec spec = {
        .bwrap = "/usr/bin/bwrap",
        .workspace = "/ws",
        .argv = ARGV("/usr/bin/make"),
        .host = &fake_root,
    };
    char **argv;
    char *line;

    (void)state;
    host_paths = merged;
    unreadable = NULL;
    assert_argv_is(&spec,
                   HEAD "--unshare-net --cap-drop ALL "
                        "--ro-bind /usr /usr --symlink usr/bin /bin "
                        "--symlink usr/sbin /sbin --symlink usr/lib /lib "
                        "--symlink usr/lib64 /lib64 --ro-bind /etc /etc "
                        "--ro-bind /dev/null /etc/shadow "
                        "--ro-bind /dev/null /etc/gshadow "
                        "--tmpfs /etc/ssh --remount-ro /etc/ssh "
                        "--ro-bind /dev/null /etc/security/opasswd "
                        "--tmpfs /etc/polkit-1/rules.d "
                        "--remount-ro /etc/polkit-1/rules.d " DEV
                        "--proc /proc --size " GIB " --tmpfs /tmp "
                        "--size " GIB " --tmpfs /var/tmp --bind /ws /ws "
                        "--remount-ro / --chdir /ws -- /usr/bin/make");
    /* the holder too: entered skills have its /etc */
    argv = tnd_sandbox_holder_argv("/usr/bin/bwrap", ARGV("/srv/cache"), 3,
                                   ARGV("/usr/bin/cat"), &fake_root);
    line = joined(argv);
    assert_non_null(strstr(line, "--ro-bind /dev/null /etc/security/opasswd "
                                 "--tmpfs /etc/polkit-1/rules.d "
                                 "--remount-ro /etc/polkit-1/rules.d --dev"));
    free(line);
    tnd_str_list_free(&argv);
}

/* Make rel under dir with mode: a directory when it ends in '/'. */
static void make_entry(const char *dir, const char *rel, mode_t mode)
{
    char path[512];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    n = strlen(path);
    if (path[n - 1] == '/') {
        path[n - 1] = '\0';
        assert_int_equal(mkdir(path, 0755), 0);
    } else {
        assert_non_null(f = fopen(path, "w"));
        fputs("secret\n", f);
        fclose(f);
    }
    assert_int_equal(chmod(path, mode), 0);
}

/* The real host's walk, as root: regular files without o+r, directories
 * without o+x (not looked into), nothing through a symlink, sorted; and
 * it stops at TND_SANDBOX_SCAN_FOUND. Another user gets none. */
static void the_real_host_finds_what_others_may_not_read(void **state)
{
    char dir[] = "/tmp/tnd-test-private-XXXXXX", path[600], rel[64];
    char **found, *line;

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0755), 0);
    make_entry(dir, "a.conf", 0644);
    make_entry(dir, "secret", 0600);
    make_entry(dir, "group", 0640);
    make_entry(dir, "open/", 0755);
    make_entry(dir, "open/inner", 0600);
    make_entry(dir, "open/fine", 0444);
    make_entry(dir, "closed/", 0700);
    make_entry(dir, "closed/x", 0644);
    make_entry(dir, "traverse/", 0711);
    make_entry(dir, "traverse/y", 0600);
    snprintf(path, sizeof(path), "%s/link", dir);
    assert_int_equal(symlink("secret", path), 0);
    found = tnd_sandbox_real_host.private_entries(dir);
    if (getuid() != 0) {
        assert_null(found);
    } else {
        char want[1024];
        snprintf(want, sizeof(want),
                 "%s/closed %s/group %s/open/inner %s/secret %s/traverse/y",
                 dir, dir, dir, dir, dir);
        assert_non_null(found);
        line = joined(found);
        assert_string_equal(line, want);
        free(line);
        tnd_str_list_free(&found);
        /* bounded: past TND_SANDBOX_SCAN_FOUND it stops */
        make_entry(dir, "many/", 0755);
        for (int i = 0; i < TND_SANDBOX_SCAN_FOUND + 10; i++) {
            snprintf(rel, sizeof(rel), "many/%d", i);
            make_entry(dir, rel, 0600);
        }
        found = tnd_sandbox_real_host.private_entries(dir);
        assert_non_null(found);
        {
            size_t n = 0;
            while (found[n])
                n++;
            assert_int_equal(n, TND_SANDBOX_SCAN_FOUND);
        }
    }
    tnd_str_list_free(&found);
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

/* What a secret of this host holds; "" when absent or unreadable. */
static char *host_secret(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = tnd_xcalloc(64, 1);

    if (f) {
        if (!fgets(buf, 64, f))
            buf[0] = '\0';
        fclose(f);
    }
    return buf;
}

/* Run `sh -c script` in the sandbox this host gives ws, as uid (-1: as
 * this process); its exit code, or -1 when it did not exit. */
static int run_sandboxed(const char *bwrap, const char *ws, const char *script,
                         uid_t uid)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        tnd_sandbox_spec spec = {
            .bwrap = bwrap,
            .workspace = ws,
            .argv = ARGV("/bin/sh", "-c", script),
        };
        char **argv;
        if (uid != (uid_t)-1 &&
            (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0))
            _exit(125);
        /* built after the switch: the real host answers for this user */
        argv = tnd_sandbox_argv(&spec);
        execv(argv[0], argv);
        _exit(126);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The real host, the real bwrap: /etc's secrets cannot be read in the
 * sandbox, whether covered (this user could read them: root) or not
 * (run as nobody, when this is root). */
static void secrets_stay_unread_in_a_real_sandbox(void **state)
{
    static const char script[] =
        "for f in /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow-; do "
        "if [ -n \"$(cat $f 2>/dev/null)\" ]; then echo read $f; exit 3; fi; "
        "done; if ls -A /etc/ssl/private 2>/dev/null | grep -q .; then "
        "exit 4; fi; exit 0";
    char ws[] = "/tmp/tnd-test-sandbox-XXXXXX";
    char *bwrap = NULL, *secret = host_secret("/etc/shadow");

    (void)state;
    if (tnd_bwrap_find(&bwrap) < 0 || tnd_bwrap_probe(bwrap) < 0) {
        free(bwrap);
        free(secret);
        skip();
    }
    assert_non_null(mkdtemp(ws));
    assert_int_equal(chmod(ws, 0755), 0);
    assert_int_equal(run_sandboxed(bwrap, ws, script, (uid_t)-1), 0);
    /* as nobody /etc/shadow is not covered: its mode keeps it unread */
    if (geteuid() == 0 && secret[0])
        assert_int_equal(run_sandboxed(bwrap, ws, script, 65534), 0);
    rmdir(ws);
    free(bwrap);
    free(secret);
}

/* The real host, for once: this machine's make is found where the
 * sandbox shows it. */
static void the_real_host_is_the_default(void **state)
{
    char *out = NULL;

    (void)state;
    if (tnd_sandbox_resolve(&out, "sh", "/usr/bin:/bin", "/no-workspace",
                            NULL) < 0)
        fail_msg("%s", tnd_error_last());
    assert_true(strcmp(out, "/usr/bin/sh") == 0 || strcmp(out, "/bin/sh") == 0);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merged_usr_host_without_network),
        cmocka_unit_test(split_host_with_network),
        cmocka_unit_test(a_holder_binds_its_roots),
        cmocka_unit_test(an_entry_covers_every_root),
        cmocka_unit_test(what_may_be_a_root),
        cmocka_unit_test(home_and_tmpdir_are_private_where_that_is_safe),
        cmocka_unit_test(each_tmpfs_is_bounded_by_the_memory_limit),
        cmocka_unit_test(shows_the_system_and_the_workspace_only),
        cmocka_unit_test(programs_are_found_as_the_sandbox_sees_them),
        cmocka_unit_test(a_program_the_sandbox_lacks_is_an_error_naming_it),
        cmocka_unit_test(secrets_this_user_cannot_read_are_not_covered),
        cmocka_unit_test(as_root_every_private_entry_of_etc_is_covered),
        cmocka_unit_test(the_real_host_finds_what_others_may_not_read),
        cmocka_unit_test(secrets_stay_unread_in_a_real_sandbox),
        cmocka_unit_test(the_real_host_is_the_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
