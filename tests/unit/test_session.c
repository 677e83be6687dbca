/* Unit tests for orchestrator/session: ids that runs started together do
 * not share, finding a session by the part of its id a person typed, the
 * names of a session's status, and the id a client proposes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/session.h"

static char repo[] = "/tmp/tnd-test-session-XXXXXX";

static int setup(void **state)
{
    (void)state;
    tnd_log_init("test", TND_LOG_ERROR);
    return mkdtemp(repo) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(repo);
}

/* a session directory named id, as an earlier run left it */
static void plant(const char *id)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/.tandem/sessions/%s", repo, id);
    assert_int_equal(tnd_fs_mkdirs(path, 0755), 0);
}

static void remove_sessions(void)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/.tandem", repo);
    assert_int_equal(tnd_fs_rmtree(path), 0);
}

/* the id part opens, or NULL; with want, the session opened is want */
static void opens(const char *part, const char *want)
{
    tnd_session *s = tnd_session_open(repo, part);

    if (!want) {
        assert_null(s);
        return;
    }
    if (!s)
        fail_msg("'%s' opened nothing: %s", part, tnd_error_last());
    assert_string_equal(tnd_session_id(s), want);
    tnd_session_destroy(&s);
}

/* YYYYMMDD-HHMMSS- then 8 hex digits: 32 random bits */
static void test_new_id_shape(void **state)
{
    tnd_session *s = tnd_session_new(repo);
    const char *id;

    (void)state;
    assert_non_null(s);
    id = tnd_session_id(s);
    assert_int_equal(strlen(id), 24);
    for (int i = 0; i < 24; i++) {
        if (i == 8 || i == 15)
            assert_int_equal(id[i], '-');
        else if (i < 15)
            assert_true(isdigit((unsigned char)id[i]));
        else
            assert_non_null(strchr("0123456789abcdef", id[i]));
    }
    tnd_session_destroy(&s);
    remove_sessions();
}

/* Many sessions made in the same second get distinct ids: the 16 random
 * bits before gave two of 64 concurrent runs the same id now and then. */
static void test_new_ids_are_distinct(void **state)
{
    enum { N = 256 };
    char *ids[N];
    char **listed;
    size_t n = 0;

    (void)state;
    for (int i = 0; i < N; i++) {
        tnd_session *s = tnd_session_new(repo);
        assert_non_null(s);
        ids[i] = strdup(tnd_session_id(s));
        tnd_session_destroy(&s);
    }
    listed = tnd_session_list(repo);
    while (listed[n])
        n++;
    assert_int_equal(n, N);
    for (int i = 0; i < N; i++) {
        /* the random part alone tells them apart */
        for (int j = i + 1; j < N; j++)
            assert_string_not_equal(ids[i] + 16, ids[j] + 16);
        free(ids[i]);
    }
    for (size_t i = 0; listed[i]; i++)
        free(listed[i]);
    free(listed);
    remove_sessions();
}

/* A directory of another name under .tandem/sessions is no session: it
 * was listed as an unreadable one, and prune removed it (a user's notes). */
static void only_session_ids_are_sessions(void **state)
{
    char **listed;

    (void)state;
    plant("20261122-014455-3fa2c91b");
    plant("my-notes");
    plant("20261122-014455-3FA2C91B"); /* tandem writes lowercase */
    listed = tnd_session_list(repo);
    assert_non_null(listed[0]);
    assert_string_equal(listed[0], "20261122-014455-3fa2c91b");
    assert_null(listed[1]);
    assert_true(tnd_session_id_valid("20261123-101010-ffff"));
    assert_false(tnd_session_id_valid("20261123-101010-fff"));
    assert_false(tnd_session_id_valid(".new-abc"));
    tnd_str_list_free(&listed);
    remove_sessions();
}

static void test_open_by_part(void **state)
{
    (void)state;
    plant("20261122-014455-3fa2c91b");
    plant("20261122-020000-77aa0144");
    plant("20261123-101010-ffff"); /* a 16-bit id of an older tandem */

    opens("20261122-014455-3fa2c91b", "20261122-014455-3fa2c91b"); /* exact */
    opens("20261122-0", NULL); /* two prefixes match */
    assert_non_null(strstr(tnd_error_last(), "matches 2 sessions"));
    opens("20261122-0144", "20261122-014455-3fa2c91b"); /* prefix */
    opens("c91b", "20261122-014455-3fa2c91b");          /* suffix */
    opens("ffff", "20261123-101010-ffff");
    opens("3fa2", "20261122-014455-3fa2c91b"); /* substring */
    /* "0144" is inside the first id's time and ends the second's random
     * part: two sessions have it, wherever it sits (the suffix used to
     * win, and an answer went to a session the person may not have
     * meant) */
    opens("0144", NULL);
    assert_non_null(strstr(tnd_error_last(), "matches 2 sessions"));
    opens("abcdef", NULL);
    assert_non_null(strstr(tnd_error_last(), "no session matches 'abcdef'"));
    opens("", NULL);
    remove_sessions();
}

/* An ambiguity lists a bounded number of ids, and says how many more. */
static void test_ambiguity_is_bounded(void **state)
{
    char id[32];

    (void)state;
    for (int i = 0; i < 40; i++) {
        snprintf(id, sizeof(id), "20261122-0100%02d-aaaa%04x", i, i);
        plant(id);
    }
    opens("aaaa", NULL);
    assert_non_null(strstr(tnd_error_last(), "matches 40 sessions"));
    assert_non_null(strstr(tnd_error_last(), "and 32 more"));
    remove_sessions();
}

/* tandem serve: a thread lets a session's lock go while a child another
 * thread forked still holds the descriptor (until its exec); the next
 * lock in this process waits for it instead of calling the session
 * another tandem's. A lock another process holds still fails at once. */
static void a_lock_a_forked_child_holds_is_waited_for(void **state)
{
    tnd_session *s = tnd_session_new(repo), *again;
    char *id;
    pid_t child;
    int64_t start;

    (void)state;
    assert_non_null(s);
    id = strdup(tnd_session_id(s));
    assert_int_equal(tnd_session_lock(s), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* holds the inherited lock a while, never execs */
        struct timespec t = {0, 300 * 1000 * 1000};
        nanosleep(&t, NULL);
        _exit(0);
    }
    tnd_session_destroy(&s); /* ours is let go; the child's copy is not */
    again = tnd_session_open(repo, id);
    assert_non_null(again);
    start = tnd_now_ms();
    assert_int_equal(tnd_session_lock(again), 0);
    assert_true(tnd_now_ms() - start < TND_SESSION_OWN_LOCK_WAIT_MS);
    assert_int_equal(waitpid(child, NULL, 0), child);
    tnd_session_destroy(&again);
    free(id);
    remove_sessions();
}

static void statuses_have_their_names(void **state)
{
    static const struct {
        tnd_session_status status;
        const char *name;
        bool outcome; /* a run ends with it; files name it */
    } rows[] = {
        {TND_SESSION_APPROVED, "approved", true},
        {TND_SESSION_REJECTED, "rejected", true},
        {TND_SESSION_ESCALATED, "escalated", true},
        {TND_SESSION_FAILED, "failed", true},
        {TND_SESSION_INTERRUPTED, "interrupted", true},
        {TND_SESSION_RUNNING, "running", false},
        {TND_SESSION_WAITING, "waiting", false},
        {TND_SESSION_UNREADABLE, "unreadable", false},
        {TND_SESSION_QUEUED, "queued", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_session_status got = TND_SESSION_OPEN;
        assert_string_equal(tnd_session_status_name(rows[i].status),
                            rows[i].name);
        assert_int_equal(tnd_session_status_parse(&got, rows[i].name),
                         rows[i].outcome ? 0 : -1);
        assert_int_equal(got,
                         rows[i].outcome ? rows[i].status : TND_SESSION_OPEN);
    }
    assert_string_equal(tnd_session_status_name(TND_SESSION_OPEN), "?");
    assert_string_equal(tnd_session_status_name((tnd_session_status)99), "?");
}

static void an_unknown_status_names_the_outcomes(void **state)
{
    tnd_session_status got = TND_SESSION_OPEN;

    (void)state;
    assert_int_equal(tnd_session_status_parse(&got, "Approved"), -1);
    assert_string_equal(tnd_error_last(),
                        "unknown session status 'Approved' (known: approved, "
                        "rejected, escalated, failed, interrupted)");
    assert_int_equal(tnd_session_status_parse(&got, "?"), -1);
    assert_int_equal(got, TND_SESSION_OPEN);
}

/* A lock that is a link truncated the file it led to; one that is a
 * FIFO hung every reader. Neither is opened now. */
static void a_lock_is_only_ever_a_regular_file(void **state)
{
    char victim[512], lock[512];
    tnd_session *s;

    (void)state;
    remove_sessions();
    plant("20200101-000000-00000001");
    snprintf(victim, sizeof(victim), "%s/victim", repo);
    snprintf(lock, sizeof(lock),
             "%s/.tandem/sessions/20200101-000000-00000001/lock", repo);
    assert_int_equal(tnd_fs_write(victim, "keep me\n", 8), 0);
    assert_int_equal(symlink(victim, lock), 0);
    s = tnd_session_open(repo, "20200101-000000-00000001");
    assert_non_null(s);
    assert_int_equal(tnd_session_lock(s), -1);
    assert_false(tnd_session_locked(tnd_session_dir(s)));
    {
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(tnd_fs_read(&text, &len, victim, 64), 0);
        assert_string_equal(text, "keep me\n");
        free(text);
    }
    assert_int_equal(unlink(lock), 0);
    assert_int_equal(mkfifo(lock, 0644), 0);
    /* returns at once: no writer will ever come */
    assert_false(tnd_session_locked(tnd_session_dir(s)));
    assert_int_equal(tnd_session_lock(s), -1);
    assert_non_null(strstr(tnd_error_last(), "not a regular file"));
    tnd_session_destroy(&s);
    remove_sessions();
}

/* tandem serve holds a queued session's lock and says so in the lock
 * file: `tandem sessions` reads queued, not running, until its thread
 * takes it. */
static void a_queued_session_says_so_in_its_lock(void **state)
{
    tnd_session *s = tnd_session_new(repo);
    int fd;

    (void)state;
    assert_non_null(s);
    fd = tnd_session_lock_dir(tnd_session_dir(s));
    assert_true(fd >= 0);
    assert_true(tnd_session_locked(tnd_session_dir(s)));
    assert_false(tnd_session_queued(tnd_session_dir(s)));
    tnd_session_lock_queued(fd, true);
    assert_true(tnd_session_queued(tnd_session_dir(s)));
    tnd_session_lock_queued(fd, false);
    assert_false(tnd_session_queued(tnd_session_dir(s)));
    assert_true(tnd_session_locked(tnd_session_dir(s)));
    tnd_session_lock_queued(fd, true);
    close(fd);
    /* a file that says queued, held by no one: no queue */
    assert_false(tnd_session_queued(tnd_session_dir(s)));
    tnd_session_destroy(&s);
    remove_sessions();
}

/* a session under the id a client proposed: made; taken again only
 * while its journal holds nothing (a server killed while it made it);
 * refused once the journal holds a record, and for a malformed id */
static void a_proposed_id_is_taken_once(void **state)
{
    const char *id = "20261124-000000-0a0b0c0d";
    char journal[512];
    tnd_session *s;

    (void)state;
    s = tnd_session_new_as(repo, id);
    assert_non_null(s);
    assert_string_equal(tnd_session_id(s), id);
    tnd_session_destroy(&s);
    /* no journal, then an empty one: a session never journaled */
    assert_non_null(s = tnd_session_new_as(repo, id));
    tnd_session_destroy(&s);
    snprintf(journal, sizeof(journal), "%s/.tandem/sessions/%s/journal.jsonl",
             repo, id);
    assert_int_equal(tnd_fs_write_atomic(journal, "", 0), 0);
    assert_non_null(s = tnd_session_new_as(repo, id));
    tnd_session_destroy(&s);
    assert_int_equal(tnd_fs_write_atomic(journal, "{}\n", 3), 0);
    assert_null(tnd_session_new_as(repo, id));
    assert_non_null(strstr(tnd_error_last(), "is in"));
    assert_non_null(strstr(tnd_error_last(), "already"));
    assert_null(tnd_session_new_as(repo, "../escape"));
    assert_non_null(strstr(tnd_error_last(), "is not a session id"));
    remove_sessions();
}

/* A directory of the id made by someone else, or that others may write
 * in, is not taken as the server's own: another user could have put a
 * link where the server writes (change.diff.tmp.PID to a file of the
 * server's user), with no race to win, and proposed its id. */
static void a_proposed_id_takes_no_directory_others_write(void **state)
{
    const char *id = "20261126-120000-abcdef02";
    char dir[4096];
    tnd_session *s;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/.tandem/sessions", repo);
    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    snprintf(dir, sizeof(dir), "%s/.tandem/sessions/%s", repo, id);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(chmod(dir, 0777), 0); /* mkdir's mode is umask'd */
    assert_null(tnd_session_new_as(repo, id));
    assert_non_null(strstr(tnd_error_last(), dir));
    assert_non_null(strstr(tnd_error_last(), "others may write"));
    assert_int_equal(chmod(dir, 0755), 0);
    s = tnd_session_new_as(repo, id);
    assert_non_null(s);
    tnd_session_destroy(&s);
    remove_sessions();
}

/* tnd_session_dir_open of id in repo refuses, naming want in its
 * error. */
static void dir_open_refuses(const char *id, const char *want)
{
    int fd = tnd_session_dir_open(repo, id);

    if (fd >= 0)
        close(fd);
    assert_int_equal(fd, -1);
    if (!strstr(tnd_error_last(), want))
        fail_msg("'%s' not in: %s", want, tnd_error_last());
}

/* A session's directory, opened for a reader a client sent (tandem
 * serve): .tandem, sessions and the session's each a directory of this
 * user's that nobody else writes in, none a link, or it is refused,
 * naming the path and why (a link there led the server to another
 * repository's session, whose report it sent). */
static void a_session_dir_opens_only_through_own_directories(void **state)
{
    const char *id = "20261126-120000-abcdef03";
    char dir[4096], top[4096], sessions[4096], other[4096], moved[4096];
    int fd;

    (void)state;
    snprintf(top, sizeof(top), "%s/.tandem", repo);
    snprintf(sessions, sizeof(sessions), "%s/sessions", top);
    snprintf(dir, sizeof(dir), "%s/%s", sessions, id);
    snprintf(other, sizeof(other), "%s/other", repo);
    snprintf(moved, sizeof(moved), "%s/moved", repo);
    assert_int_equal(tnd_session_dir_open(repo, id), TND_ENOTFOUND);
    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    assert_int_equal(mkdir(other, 0755), 0);
    fd = tnd_session_dir_open(repo, id);
    assert_true(fd >= 0);
    close(fd);
    dir_open_refuses("../x", "is not a session id");

    /* the session's directory a link to another's */
    assert_int_equal(rename(dir, moved), 0);
    assert_int_equal(symlink(other, dir), 0);
    dir_open_refuses(id, "is a symbolic link");
    assert_int_equal(unlink(dir), 0);
    assert_int_equal(rename(moved, dir), 0);
    /* sessions a link */
    assert_int_equal(rename(sessions, moved), 0);
    assert_int_equal(symlink(moved, sessions), 0);
    dir_open_refuses(id, "sessions is a symbolic link");
    assert_int_equal(unlink(sessions), 0);
    assert_int_equal(rename(moved, sessions), 0);
    /* .tandem others may write in */
    assert_int_equal(chmod(top, 0777), 0);
    dir_open_refuses(id, "others may write in");
    assert_int_equal(chmod(top, 0755), 0);
    /* another user's: only root can make one */
    if (geteuid() == 0) {
        assert_int_equal(chown(top, 65534, 65534), 0);
        dir_open_refuses(id, "belongs to another user (uid 65534)");
        assert_int_equal(chown(top, 0, 0), 0);
    }
    fd = tnd_session_dir_open(repo, id);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rmdir(other), 0);
    remove_sessions();
}

/* Where a server runs a session by path: .tandem and its sessions, where
 * they are, this user's alone and no link; none there is fine (the
 * server makes them). */
static void a_home_of_own_directories_is_checked(void **state)
{
    char top[4096], sessions[4096], moved[4096];

    (void)state;
    snprintf(top, sizeof(top), "%s/.tandem", repo);
    snprintf(sessions, sizeof(sessions), "%s/sessions", top);
    snprintf(moved, sizeof(moved), "%s/moved", repo);
    assert_int_equal(tnd_session_check_own_home(repo), 0);
    assert_int_equal(mkdir(top, 0755), 0);
    assert_int_equal(tnd_session_check_own_home(repo), 0);
    assert_int_equal(mkdir(sessions, 0755), 0);
    assert_int_equal(tnd_session_check_own_home(repo), 0);

    assert_int_equal(chmod(sessions, 0775), 0);
    assert_int_equal(tnd_session_check_own_home(repo), -1);
    assert_non_null(strstr(tnd_error_last(), "others may write in"));
    assert_non_null(strstr(tnd_error_last(), sessions));
    assert_int_equal(chmod(sessions, 0755), 0);

    assert_int_equal(rename(top, moved), 0);
    assert_int_equal(symlink(moved, top), 0);
    assert_int_equal(tnd_session_check_own_home(repo), -1);
    assert_non_null(strstr(tnd_error_last(), ".tandem is a symbolic link"));
    assert_int_equal(unlink(top), 0);
    assert_int_equal(rename(moved, top), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(sessions, 65534, 65534), 0);
        assert_int_equal(tnd_session_check_own_home(repo), -1);
        assert_non_null(strstr(tnd_error_last(), "uid 65534"));
    }
    remove_sessions();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_id_shape),
        cmocka_unit_test(test_new_ids_are_distinct),
        cmocka_unit_test(test_open_by_part),
        cmocka_unit_test(test_ambiguity_is_bounded),
        cmocka_unit_test(only_session_ids_are_sessions),
        cmocka_unit_test(a_lock_a_forked_child_holds_is_waited_for),
        cmocka_unit_test(statuses_have_their_names),
        cmocka_unit_test(an_unknown_status_names_the_outcomes),
        cmocka_unit_test(a_lock_is_only_ever_a_regular_file),
        cmocka_unit_test(a_queued_session_says_so_in_its_lock),
        cmocka_unit_test(a_proposed_id_is_taken_once),
        cmocka_unit_test(a_proposed_id_takes_no_directory_others_write),
        cmocka_unit_test(a_session_dir_opens_only_through_own_directories),
        cmocka_unit_test(a_home_of_own_directories_is_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
