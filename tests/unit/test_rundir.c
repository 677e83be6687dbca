/* Unit tests for orchestrator/rundir: runtime directories held by a lock
 * for their owner's life, and the sweep of those whose owner is gone.
 * Dead owners are real: child processes killed with SIGKILL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/rundir.h"

static char scratch[] = "/tmp/tnd-test-rundir-XXXXXX";
static char *base; /* scratch/tmp/tandem-UID */

#define ID1 "20261122-014455-3fa2c91b"
#define ID2 "20261122-014455-0b0e"
#define ID3 "20261123-101010-ffff"

static int setup(void **state)
{
    char *tmp;

    (void)state;
    if (!mkdtemp(scratch))
        return -1;
    tnd_log_init("test", TND_LOG_ERROR);
    tmp = tnd_fs_join(scratch, "tmp");
    mkdir(tmp, 0755);
    setenv("TMPDIR", tmp, 1);
    free(tmp);
    return (base = tnd_rundir_base()) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(base);
    return tnd_fs_rmtree(scratch);
}

/* expr made a directory, or the test fails saying why not */
#define made(expr)                                       \
    do {                                                 \
        if (!(expr))                                     \
            fail_msg("%s: %s", #expr, tnd_error_last()); \
    } while (0)

static char *at(const char *name)
{
    return tnd_fs_join(base, name);
}

static bool there(const char *name)
{
    char *p = at(name);
    bool yes = tnd_fs_exists(p);

    free(p);
    return yes;
}

/* The entries of the base. */
static int entries(void)
{
    DIR *d = opendir(base);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* An empty base for each test. */
static void clean(void)
{
    assert_int_equal(tnd_fs_rmtree(base), 0);
    free(base);
    assert_non_null(base = tnd_rundir_base());
}

/* A directory name in the base, as a run that died left it: with a lock
 * file nobody holds (lock) or none, and its mtime age_s in the past. */
static void leftover(const char *name, bool lock, long age_s)
{
    char *dir = at(name), *file = tnd_fs_join(dir, "lock"), *junk;
    struct timespec t[2];

    assert_int_equal(mkdir(dir, 0700), 0);
    junk = tnd_fs_join(dir, "workspace");
    assert_int_equal(mkdir(junk, 0700), 0);
    free(junk);
    if (lock)
        assert_int_equal(tnd_fs_write(file, "4242\n", 5), 0);
    t[0].tv_sec = t[1].tv_sec = time(NULL) - age_s;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, dir, t, 0), 0);
    free(file);
    free(dir);
}

/* A child that makes name (NULL: a review directory) and waits to be
 * killed; its pid, once the directory exists. */
static pid_t owner_child(const char *name)
{
    int pipefd[2];
    char ok;
    pid_t pid;

    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tnd_rundir *r;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test ends it too */
        r = tnd_rundir_new(base, name, NULL, 0);
        close(pipefd[0]);
        if (write(pipefd[1], r ? "y" : "n", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(pipefd[1]);
    assert_int_equal(read(pipefd[0], &ok, 1), 1);
    assert_int_equal(ok, 'y');
    close(pipefd[0]);
    return pid;
}

static void kill_child(pid_t pid)
{
    int status;

    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* ---- a run that meets a sweep ------------------------------------------
 * unlinkat and renameat2 as the library calls them, with a hook that
 * plays another process at the worst moment: the run of a session taken
 * over making its runtime directory while a sweep removes the old one. */

typedef enum race {
    RACE_NONE,
    RACE_AT_LOCK_GONE, /* once the dead directory's lock file is unlinked */
    RACE_BEFORE_MOVE,  /* before a sweep moves a directory out of the way */
} race;

static race race_at = RACE_NONE;
static tnd_rundir *race_made; /* what the other run made */

static void race_now(race when)
{
    if (race_at != when)
        return;
    race_at = RACE_NONE; /* once: the hook's own calls come back here */
    race_made = tnd_rundir_new(base, ID1, NULL, 0);
    if (!race_made)
        fail_msg("the run meeting the sweep: %s", tnd_error_last());
}

int unlinkat(int dirfd, const char *path, int flags)
{
    int rc = (int)syscall(SYS_unlinkat, dirfd, path, flags);

    if (rc == 0 && strcmp(path, "lock") == 0)
        race_now(RACE_AT_LOCK_GONE);
    return rc;
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd,
              const char *newpath, unsigned int flags)
{
    if (strcmp(oldpath, ID1) == 0 && race_at == RACE_BEFORE_MOVE) {
        /* the old one went (its run's resume removed it), and the new
         * one took its name, between the sweep's look and its move */
        char *old = at(ID1);
        assert_int_equal(tnd_fs_rmtree(old), 0);
        free(old);
        race_now(RACE_BEFORE_MOVE);
    }
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath,
                        flags);
}

static void the_base_is_private_to_the_user(void **state)
{
    struct stat st;
    char *again;

    (void)state;
    assert_int_equal(lstat(base, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_true(strstr(base, "/tmp/tandem-") != NULL);
    /* anyone else could enter it: refused, with the fix */
    assert_int_equal(chmod(base, 0755), 0);
    assert_null(tnd_rundir_base());
    assert_non_null(strstr(tnd_error_last(), "must be a directory owned by "
                                             "you with mode 0700"));
    assert_int_equal(chmod(base, 0700), 0);
    assert_non_null(again = tnd_rundir_base());
    assert_string_equal(again, base);
    free(again);
}

static void a_run_holds_its_directory_until_destroyed(void **state)
{
    tnd_rundir *r;
    tnd_rundir_sweep sw;
    char *lock, *text = NULL, pid[32];

    (void)state;
    clean();
    made(r = tnd_rundir_new(base, ID1, "/repo/.tandem/x", 0));
    assert_true(strcmp(tnd_rundir_path(r), base) > 0);
    assert_true(there(ID1));
    /* the lock file names the owner */
    lock = tnd_fs_join(tnd_rundir_path(r), "lock");
    assert_int_equal(tnd_fs_read(&text, NULL, lock, 64), 0);
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    assert_string_equal(text, pid);
    free(text);
    free(lock);
    /* a sweep sees it live (another open file: the lock conflicts even
     * within one process) */
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.live, 1);
    assert_int_equal(sw.removed, 0);
    assert_true(there(ID1));
    /* no temporary name is left behind */
    assert_int_equal(entries(), 1);
    tnd_rundir_destroy(&r, false);
    assert_null(r);
    assert_false(there(ID1));
    tnd_rundir_destroy(&r, false); /* NULL-safe */
}

static void a_killed_owner_leaves_a_directory_the_sweep_removes(void **state)
{
    tnd_rundir_sweep sw;
    pid_t dead, alive;

    (void)state;
    clean();
    dead = owner_child(ID1);
    alive = owner_child(ID2);
    kill_child(dead); /* kill -9: no cleanup ran */
    assert_true(there(ID1));
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 1);
    assert_int_equal(sw.live, 1);
    assert_false(sw.more);
    assert_false(there(ID1));
    assert_true(there(ID2));
    kill_child(alive);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 1);
    assert_false(there(ID2));
}

static void a_kept_directory_stays_until_pruned_with_its_session(void **state)
{
    tnd_rundir *r;
    tnd_rundir_sweep sw;
    char *kept, *text = NULL;

    (void)state;
    clean();
    made(r = tnd_rundir_new(base, ID1, "/repo/.tandem/s/" ID1, 0));
    tnd_rundir_destroy(&r, true);
    assert_true(there(ID1));
    kept = at(ID1 "/kept");
    assert_int_equal(tnd_fs_read(&text, NULL, kept, 4096), 0);
    assert_string_equal(text, "/repo/.tandem/s/" ID1 "\n");
    free(text);
    free(kept);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.kept, 1);
    assert_int_equal(sw.removed, 0);
    assert_true(there(ID1));
    /* only for its own session, and a dry run removes nothing */
    assert_int_equal(tnd_rundir_remove_kept(base, ID1, "/other/" ID1, false),
                     0);
    assert_int_equal(tnd_rundir_remove_kept(base, ID2, "/repo", false), 0);
    assert_int_equal(
        tnd_rundir_remove_kept(base, ID1, "/repo/.tandem/s/" ID1, true), 1);
    assert_true(there(ID1));
    assert_int_equal(
        tnd_rundir_remove_kept(base, ID1, "/repo/.tandem/s/" ID1, false), 1);
    assert_false(there(ID1));
    /* a directory that is not kept is not remove_kept's */
    made(r = tnd_rundir_new(base, ID1, "/repo/.tandem/s/" ID1, 0));
    assert_int_equal(
        tnd_rundir_remove_kept(base, ID1, "/repo/.tandem/s/" ID1, false), 0);
    assert_true(there(ID1));
    tnd_rundir_destroy(&r, false);
}

static void a_resumed_session_replaces_its_leftover(void **state)
{
    tnd_rundir *r;
    char *junk;
    pid_t pid;

    (void)state;
    clean();
    /* killed: its lock is free */
    pid = owner_child(ID1);
    junk = at(ID1 "/stale");
    assert_int_equal(tnd_fs_write(junk, "x", 1), 0);
    kill_child(pid);
    made(r = tnd_rundir_new(base, ID1, NULL, 0));
    assert_false(tnd_fs_exists(junk));
    tnd_rundir_destroy(&r, true);
    /* kept: the session's own, so replaced too */
    assert_int_equal(tnd_fs_write(junk, "x", 1), 0);
    made(r = tnd_rundir_new(base, ID1, NULL, 0));
    assert_false(tnd_fs_exists(junk));
    tnd_rundir_destroy(&r, false);
    /* made by an older tandem: no lock file at all */
    leftover(ID1, false, 0);
    made(r = tnd_rundir_new(base, ID1, NULL, 0));
    tnd_rundir_destroy(&r, false);
    free(junk);
}

static void a_held_name_waits_then_says_who_holds_it(void **state)
{
    tnd_rundir *r;
    int pipefd[2];
    char ok, *msg;
    pid_t pid;
    int status;

    (void)state;
    clean();
    /* held for good: refused after the wait, naming the holder */
    pid = owner_child(ID1);
    assert_null(tnd_rundir_new(base, ID1, NULL, 100));
    assert_non_null(strstr(tnd_error_last(), "is in use by another process"));
    {
        char want[64];
        snprintf(want, sizeof(want), "(pid %ld)", (long)pid);
        assert_non_null(strstr(tnd_error_last(), want));
    }
    kill_child(pid);
    /* held for a moment (a sweep removing it): waited for */
    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tnd_rundir *mine = tnd_rundir_new(base, ID2, NULL, 0);
        struct timespec t = {0, 200 * 1000 * 1000};
        if (write(pipefd[1], mine ? "y" : "n", 1) != 1)
            _exit(1);
        nanosleep(&t, NULL);
        tnd_rundir_destroy(&mine, false);
        _exit(0);
    }
    close(pipefd[1]);
    assert_int_equal(read(pipefd[0], &ok, 1), 1);
    assert_int_equal(ok, 'y');
    close(pipefd[0]);
    made(r = tnd_rundir_new(base, ID2, NULL, 10000));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(there(ID2));
    tnd_rundir_destroy(&r, false);
    /* in the way and not a directory */
    msg = at(ID3);
    assert_int_equal(tnd_fs_write(msg, "x", 1), 0);
    assert_null(tnd_rundir_new(base, ID3, NULL, 0));
    assert_non_null(strstr(tnd_error_last(), "is in the way"));
    free(msg);
}

static void review_directories_get_fresh_names(void **state)
{
    tnd_rundir *a, *b;
    tnd_rundir_sweep sw;
    const char *name;
    pid_t pid;

    (void)state;
    clean();
    made(a = tnd_rundir_new(base, NULL, NULL, 0));
    made(b = tnd_rundir_new(base, NULL, NULL, 0));
    name = strrchr(tnd_rundir_path(a), '/') + 1;
    assert_int_equal(strncmp(name, "review-", 7), 0);
    assert_int_equal(strlen(name), 13);
    assert_string_not_equal(tnd_rundir_path(a), tnd_rundir_path(b));
    tnd_rundir_destroy(&a, false);
    tnd_rundir_destroy(&b, false);
    /* a review killed outright is swept like a run */
    pid = owner_child(NULL);
    kill_child(pid);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 1);
}

static void the_sweep_touches_only_what_tandem_makes(void **state)
{
    tnd_rundir_sweep sw;
    char *p, *outside;

    (void)state;
    clean();
    /* dead look-alikes that are not ours by name */
    leftover("notes", true, 0);
    leftover("2026112-014455-3fa2", true, 0);  /* one digit short */
    leftover("20261122-014455-3FA2", true, 0); /* hex is lower case */
    leftover("review-abc", true, 0);
    leftover(".new-abc!ef", true, 0);
    /* a symlink with a session's name, to a dead-looking directory */
    outside = tnd_fs_join(scratch, "outside");
    assert_int_equal(mkdir(outside, 0700), 0);
    p = tnd_fs_join(outside, "lock");
    assert_int_equal(tnd_fs_write(p, "1\n", 2), 0);
    free(p);
    p = at(ID1);
    assert_int_equal(symlink(outside, p), 0);
    free(p);
    /* a regular file with a session's name */
    p = at(ID2);
    assert_int_equal(tnd_fs_write(p, "x", 1), 0);
    free(p);
    /* a lock that is not a regular file */
    assert_int_equal(mkdir((p = at(ID3)), 0700), 0);
    free(p);
    assert_int_equal(mkdir((p = at(ID3 "/lock")), 0700), 0);
    free(p);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 0);
    assert_true(there("notes"));
    assert_true(there("2026112-014455-3fa2"));
    assert_true(there("20261122-014455-3FA2"));
    assert_true(there("review-abc"));
    assert_true(there(".new-abc!ef"));
    assert_true(there(ID1));
    assert_true(there(ID2));
    assert_true(there(ID3));
    p = tnd_fs_join(outside, "lock");
    assert_true(tnd_fs_exists(p));
    free(p);
    free(outside);
}

static void another_users_directory_is_never_touched(void **state)
{
    tnd_rundir_sweep sw;
    char *p;

    (void)state;
    if (getuid() != 0)
        skip(); /* only root can make one */
    clean();
    leftover(ID1, true, 0);
    p = at(ID1);
    assert_int_equal(chown(p, 12345, 12345), 0);
    free(p);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 0);
    assert_true(there(ID1));
}

static void without_a_lock_file_age_decides(void **state)
{
    tnd_rundir_sweep sw;
    long day = TND_RUNDIR_LOCKLESS_AGE_S, grace = TND_RUNDIR_NEW_GRACE_S;

    (void)state;
    clean();
    leftover(ID1, false, day + 60);    /* an older tandem's, a day old */
    leftover(ID2, false, 60);          /* an older tandem's, running? */
    leftover(".new-AAAAAA", false, 0); /* being made right now */
    leftover(".new-BBBBBB", true, 0);  /* being locked right now */
    leftover(".new-CCCCCC", false, grace + 5); /* killed while made */
    leftover(".new-DDDDDD", true, grace + 5);  /* killed before rename */
    /* where a sandbox is tried: killed while it tried, or trying now */
    leftover("probe-EEEEEE", false, grace + 5);
    leftover("probe-FFFFFF", false, 0);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 4);
    assert_int_equal(sw.young, 4);
    assert_false(there("probe-EEEEEE"));
    assert_true(there("probe-FFFFFF"));
    assert_false(there(ID1));
    assert_true(there(ID2));
    assert_true(there(".new-AAAAAA"));
    assert_true(there(".new-BBBBBB"));
    assert_false(there(".new-CCCCCC"));
    assert_false(there(".new-DDDDDD"));
}

/* A file in the base, its mtime age_s in the past. */
static void old_file(const char *name, long age_s)
{
    char *p = at(name);
    struct timespec t[2];

    assert_int_equal(tnd_fs_write(p, "diff\n", 5), 0);
    t[0].tv_sec = t[1].tv_sec = time(NULL) - age_s;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
    free(p);
}

/* A review's diff that tandem serve received and was killed before it
 * removed (it does so within the call that made the session): it
 * stayed in the base for good, a copy of the user's code. */
static void a_diff_a_killed_server_left_is_swept(void **state)
{
    tnd_rundir_sweep sw;
    long grace = TND_RUNDIR_NEW_GRACE_S;

    (void)state;
    clean();
    old_file("submitted-AbC123.diff", grace + 5); /* its server was killed */
    old_file("submitted-XyZ789.diff", 0);         /* being made right now */
    old_file("submitted-AbC123.txt", grace + 5);  /* not ours */
    old_file("submitted-AbC12.diff", grace + 5);  /* not ours */
    leftover("submitted-DDDDDD.diff", false, grace + 5); /* a directory */
    tnd_rundir_sweep_dead(&sw, base, 100, 100, true);
    assert_int_equal(sw.removed, 1);
    assert_true(there("submitted-AbC123.diff"));
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 1);
    assert_false(there("submitted-AbC123.diff"));
    assert_true(there("submitted-XyZ789.diff"));
    assert_true(there("submitted-AbC123.txt"));
    assert_true(there("submitted-AbC12.diff"));
    assert_true(there("submitted-DDDDDD.diff"));
}

/* A child that makes, as a server and a bubblewrap probe do, a diff and a
 * probe directory, holds them and waits to be killed: its pid, with the
 * two names (in the base) in diff and probe. */
static pid_t holder_child(char diff[64], char probe[64])
{
    char names[128] = "";
    int pipefd[2];
    pid_t pid;

    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *d = at(TND_RUNDIR_DIFF_PREFIX "XXXXXX" TND_RUNDIR_DIFF_SUFFIX);
        char *p = at(TND_FS_PROBE_PREFIX "XXXXXX");
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test ends it too */
        close(pipefd[0]);
        if (tnd_fs_mkstemps_held(d, strlen(TND_RUNDIR_DIFF_SUFFIX)) < 0 ||
            tnd_fs_mkdtemp_held(p) < 0)
            _exit(1);
        snprintf(names, sizeof(names), "%s %s", strrchr(d, '/') + 1,
                 strrchr(p, '/') + 1);
        if (write(pipefd[1], names, sizeof(names)) != sizeof(names))
            _exit(1);
        for (;;)
            pause();
    }
    close(pipefd[1]);
    assert_int_equal(read(pipefd[0], names, sizeof(names)), sizeof(names));
    close(pipefd[0]);
    assert_int_equal(sscanf(names, "%63s %63s", diff, probe), 2);
    return pid;
}

/* name's mtime, age_s in the past */
static void age(const char *name, long age_s)
{
    char *p = at(name);
    struct timespec t[2];

    t[0].tv_sec = t[1].tv_sec = time(NULL) - age_s;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW), 0);
    free(p);
}

/* A server that takes longer than a minute to make a session from a
 * review's diff (loaded, or stopped with SIGSTOP), or a probe that long,
 * still holds its file: it was removed under it, the review failed. */
static void what_a_live_process_holds_is_never_swept(void **state)
{
    char diff1[64], probe1[64], diff2[64], probe2[64];
    long grace = TND_RUNDIR_NEW_GRACE_S;
    tnd_rundir_sweep sw;
    pid_t live, dead;

    (void)state;
    clean();
    live = holder_child(diff1, probe1);
    dead = holder_child(diff2, probe2);
    age(diff1, grace + 3600);
    age(probe1, grace + 3600);
    age(diff2, grace + 5);
    age(probe2, grace + 5);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 0);
    assert_int_equal(sw.live, 4);
    kill_child(dead);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 2);
    assert_int_equal(sw.live, 2);
    assert_true(there(diff1));
    assert_true(there(probe1));
    assert_false(there(diff2));
    assert_false(there(probe2));
    kill_child(live);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.removed, 2);
    assert_int_equal(entries(), 0);
}

static void a_sweep_is_bounded_and_a_dry_run_removes_nothing(void **state)
{
    tnd_rundir_sweep sw;
    char name[32];

    (void)state;
    clean();
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "20261122-0000%02d-beef", i);
        leftover(name, true, 0);
    }
    tnd_rundir_sweep_dead(&sw, base, 100, 100, true);
    assert_int_equal(sw.removed, 20);
    assert_true(there("20261122-000000-beef"));
    assert_true(there("20261122-000019-beef"));
    tnd_rundir_sweep_dead(&sw, base, 100, 16, false);
    assert_int_equal(sw.removed, 16);
    assert_true(sw.more);
    tnd_rundir_sweep_dead(&sw, base, 3, 100, false);
    assert_true(sw.removed <= 3);
    assert_true(sw.more);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_false(sw.more);
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "20261122-0000%02d-beef", i);
        assert_false(there(name));
    }
}

/* Runs that start and end while others sweep: none may lose its
 * directory, and none may fail to make it. */
static void sweeps_never_take_a_directory_being_made(void **state)
{
    enum { CHILDREN = 4, ROUNDS = 100 };
    pid_t kids[CHILDREN];
    tnd_rundir_sweep sw;
    int status, running = CHILDREN;

    (void)state;
    clean();
    for (int k = 0; k < CHILDREN; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            for (int i = 0; i < ROUNDS; i++) {
                tnd_rundir *r = tnd_rundir_new(base, NULL, NULL, 0);
                char *lock;
                if (!r) {
                    fprintf(stderr, "child: %s\n", tnd_error_last());
                    _exit(2);
                }
                lock = tnd_fs_join(tnd_rundir_path(r), "lock");
                if (!tnd_fs_exists(lock))
                    _exit(3); /* swept from under its owner */
                free(lock);
                tnd_rundir_destroy(&r, false);
            }
            _exit(0);
        }
    }
    while (running > 0) {
        pid_t pid;
        tnd_rundir_sweep_dead(&sw, base, 1000, 1000, false);
        assert_int_equal(sw.failed, 0);
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
            running--;
        }
    }
}

/* serve restarted after a kill -9: one session's thread sweeps while
 * another takes its own session over, making its directory under the
 * same name. The sweep removed the old one by name once it had emptied
 * it, and by then the name was the new one's: "Directory not empty", or
 * a live run's directory gone. */
static void a_sweep_removes_only_the_directory_it_judged(void **state)
{
    tnd_rundir_sweep sw;
    char *lock;

    (void)state;
    clean();
    kill_child(owner_child(ID1));
    race_at = RACE_AT_LOCK_GONE;
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(race_at, RACE_NONE); /* the other run did meet it */
    assert_non_null(race_made);
    assert_int_equal(sw.failed, 0);
    assert_int_equal(sw.removed, 1);
    lock = tnd_fs_join(tnd_rundir_path(race_made), "lock");
    assert_true(tnd_fs_exists(lock));
    free(lock);
    assert_int_equal(entries(), 1); /* nothing left on the way out */
    tnd_rundir_destroy(&race_made, false);

    /* without a lock file, nothing keeps the name while the sweep looks:
     * a directory made under it since is put back, not removed */
    leftover(ID1, false, TND_RUNDIR_LOCKLESS_AGE_S + 60);
    race_at = RACE_BEFORE_MOVE;
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(race_at, RACE_NONE);
    assert_non_null(race_made);
    assert_int_equal(sw.removed, 0);
    lock = tnd_fs_join(tnd_rundir_path(race_made), "lock");
    assert_true(tnd_fs_exists(lock));
    free(lock);
    assert_int_equal(entries(), 1);
    tnd_rundir_sweep_dead(&sw, base, 100, 100, false);
    assert_int_equal(sw.live, 1);
    tnd_rundir_destroy(&race_made, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_base_is_private_to_the_user),
        cmocka_unit_test(a_run_holds_its_directory_until_destroyed),
        cmocka_unit_test(a_killed_owner_leaves_a_directory_the_sweep_removes),
        cmocka_unit_test(a_kept_directory_stays_until_pruned_with_its_session),
        cmocka_unit_test(a_resumed_session_replaces_its_leftover),
        cmocka_unit_test(a_held_name_waits_then_says_who_holds_it),
        cmocka_unit_test(review_directories_get_fresh_names),
        cmocka_unit_test(the_sweep_touches_only_what_tandem_makes),
        cmocka_unit_test(another_users_directory_is_never_touched),
        cmocka_unit_test(without_a_lock_file_age_decides),
        cmocka_unit_test(a_diff_a_killed_server_left_is_swept),
        cmocka_unit_test(what_a_live_process_holds_is_never_swept),
        cmocka_unit_test(a_sweep_is_bounded_and_a_dry_run_removes_nothing),
        cmocka_unit_test(sweeps_never_take_a_directory_being_made),
        cmocka_unit_test(a_sweep_removes_only_the_directory_it_judged),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
