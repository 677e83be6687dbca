/* Unit tests for orchestrator/prune: which sessions go (a table, one row
 * per rule), and a repository of hand-made sessions of every state and
 * age pruned for real: what goes, what stays, a dry run, the lessons
 * bank, a kept workspace, a prune stopped halfway. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/prune.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"

#define DAY (24LL * 3600 * 1000)

static char scratch[] = "/tmp/tnd-test-prune-XXXXXX";
static char *repo;
static int64_t now; /* wall ms: "now" for every test */

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
    repo = tnd_fs_join(scratch, "repo");
    now = tnd_wall_ms();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(repo);
    return tnd_fs_rmtree(scratch);
}

static void rule_table(void **state)
{
    static const struct {
        tnd_session_status state;
        int64_t age;
        bool waiting;
        tnd_prune_verdict want;
    } rows[] = {
        {TND_SESSION_APPROVED, 31 * DAY, false, TND_PRUNE_REMOVE},
        /* at the age */
        {TND_SESSION_APPROVED, 30 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_APPROVED, 29 * DAY, false, TND_PRUNE_NEWER},
        {TND_SESSION_REJECTED, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_ESCALATED, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_FAILED, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_INTERRUPTED, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_UNREADABLE, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_UNSTARTED, 31 * DAY, false, TND_PRUNE_REMOVE},
        {TND_SESSION_UNSTARTED, 29 * DAY, false, TND_PRUNE_NEWER},
        {TND_SESSION_RUNNING, 999 * DAY, false, TND_PRUNE_RUNNING},
        {TND_SESSION_RUNNING, 999 * DAY, true, TND_PRUNE_RUNNING},
        {TND_SESSION_QUEUED, 999 * DAY, true, TND_PRUNE_QUEUED},
        {TND_SESSION_WAITING, 999 * DAY, false, TND_PRUNE_WAITING},
        {TND_SESSION_WAITING, 31 * DAY, true, TND_PRUNE_REMOVE},
        {TND_SESSION_WAITING, 29 * DAY, true, TND_PRUNE_NEWER},
        /* a clock set back */
        {TND_SESSION_APPROVED, -DAY, false, TND_PRUNE_NEWER},
    };
    tnd_prune_options o = {.older_than_ms = 30 * DAY};

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        o.waiting = rows[i].waiting;
        if (tnd_prune_decide(rows[i].state, rows[i].age, &o) != rows[i].want)
            fail_msg("row %zu (%s)", i, tnd_session_status_name(rows[i].state));
    }
}

/* A session of repo whose journal ends with last (a JSON record body, or
 * NULL for no journal at all), days_ago old. */
static char *session(const char *id, const char *last, int days_ago)
{
    char *dir = tnd_xasprintf("%s/.tandem/sessions/%s", repo, id);
    char *file = tnd_fs_join(dir, "journal.jsonl");
    char iso[32], *text;
    struct timespec t[2];

    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    tnd_clock_iso8601(iso, sizeof(iso), now - days_ago * DAY);
    if (last) {
        text = tnd_xasprintf(
            "{\"seq\":1,\"time\":\"2020-01-01T00:00:00.000Z\",\"type\":"
            "\"task\",\"task\":\"t\"}\n"
            "{\"seq\":2,\"time\":\"%s\",%s}\n",
            iso, last);
        assert_int_equal(tnd_fs_write(file, text, strlen(text)), 0);
        free(text);
    }
    /* the directory's own time says nothing when there is a journal */
    t[0].tv_sec = t[1].tv_sec = (now - (last ? 0 : days_ago) * DAY) / 1000;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, dir, t, 0), 0);
    free(file);
    return dir;
}

/* An empty repository for each test. */
static void fresh(void)
{
    char *top = tnd_fs_join(repo, ".tandem");

    assert_int_equal(tnd_fs_rmtree(top), 0);
    free(top);
}

static const tnd_prune_item *item(const tnd_prune_result *r, const char *id)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->items[i].id, id) == 0)
            return &r->items[i];
    fail_msg("no item for %s", id);
    return NULL;
}

static bool gone(const char *id)
{
    char *dir = tnd_xasprintf("%s/.tandem/sessions/%s", repo, id);
    bool yes = !tnd_fs_exists(dir);

    free(dir);
    return yes;
}

#define APPROVED    "20200101-000000-0001"
#define REJECTED    "20200101-000000-0002"
#define ESCALATED   "20200101-000000-0003"
#define FAILED      "20200101-000000-0004"
#define INTERRUPTED "20200101-000000-0005"
#define UNSTARTED   "20200101-000000-0006" /* killed before its task */
#define WAITING     "20200101-000000-0007"
#define RUNNING     "20200101-000000-0008"
#define RECENT      "20200101-000000-0009"
#define ANSWERED    "20200101-000000-000a"

static void a_repository_of_every_state_and_age(void **state)
{
    tnd_prune_options o = {.older_than_ms = 30 * DAY, .now_ms = 0};
    tnd_prune_result r;
    char *dir, *lock, *lessons, *text = NULL;
    int fd;

    (void)state;
    fresh();
    o.repo = repo;
    o.now_ms = now;
    free(session(APPROVED,
                 "\"type\":\"finish\",\"status\":\"approved\",\"reason\":\"\"",
                 40));
    free(session(REJECTED,
                 "\"type\":\"finish\",\"status\":\"rejected\",\"reason\":\"\"",
                 40));
    free(session(ESCALATED,
                 "\"type\":\"finish\",\"status\":\"escalated\",\"reason\":\"\"",
                 40));
    dir = session(FAILED, "\"type\":\"decision\",\"attempt\":1", 40);
    text = tnd_fs_join(dir, "report.json");
    assert_int_equal(tnd_fs_write(text, "{\"status\": \"failed\"}", 20), 0);
    free(text);
    free(dir);
    free(session(INTERRUPTED, "\"type\":\"proposal\",\"attempt\":1", 40));
    free(session(UNSTARTED, NULL, 40));
    free(session(WAITING, "\"type\":\"escalation\",\"attempt\":1", 40));
    dir = session(RUNNING, "\"type\":\"proposal\",\"attempt\":1", 40);
    free(session(RECENT,
                 "\"type\":\"finish\",\"status\":\"approved\",\"reason\":\"\"",
                 2));
    /* started long ago, answered lately: its age is from the answer */
    free(session(ANSWERED,
                 "\"type\":\"finish\",\"status\":\"rejected\",\"reason\":\"\"",
                 1));
    /* a tandem works on RUNNING */
    lock = tnd_fs_join(dir, "lock");
    fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    lessons = tnd_xasprintf("%s/.tandem/lessons.json", repo);
    assert_int_equal(tnd_fs_write(lessons, "{\"lessons\": []}\n", 16), 0);

    /* a dry run says what would go and removes nothing */
    o.dry_run = true;
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(r.count, 10);
    assert_false(r.more);
    assert_int_equal(item(&r, APPROVED)->verdict, TND_PRUNE_REMOVE);
    assert_string_equal(tnd_session_status_name(item(&r, APPROVED)->state),
                        "approved");
    assert_true(item(&r, APPROVED)->age_ms >= 40 * DAY);
    assert_true(item(&r, APPROVED)->age_ms < 41 * DAY);
    assert_true(item(&r, APPROVED)->bytes > 0);
    assert_int_equal(item(&r, UNSTARTED)->verdict, TND_PRUNE_REMOVE);
    assert_string_equal(tnd_session_status_name(item(&r, UNSTARTED)->state),
                        "unstarted");
    assert_true(item(&r, UNSTARTED)->age_ms >= 40 * DAY);
    assert_string_equal(tnd_session_status_name(item(&r, FAILED)->state),
                        "failed");
    assert_string_equal(tnd_session_status_name(item(&r, INTERRUPTED)->state),
                        "interrupted");
    assert_int_equal(item(&r, WAITING)->verdict, TND_PRUNE_WAITING);
    assert_int_equal(item(&r, RUNNING)->verdict, TND_PRUNE_RUNNING);
    assert_int_equal(item(&r, RECENT)->verdict, TND_PRUNE_NEWER);
    assert_int_equal(item(&r, ANSWERED)->verdict, TND_PRUNE_NEWER);
    tnd_prune_result_clear(&r);
    assert_false(gone(APPROVED));
    assert_false(gone(UNSTARTED));

    /* for real */
    o.dry_run = false;
    assert_int_equal(tnd_prune(&r, &o), 0);
    for (size_t i = 0; i < r.count; i++)
        assert_null(r.items[i].error);
    tnd_prune_result_clear(&r);
    assert_true(gone(APPROVED));
    assert_true(gone(REJECTED));
    assert_true(gone(ESCALATED));
    assert_true(gone(FAILED));
    assert_true(gone(INTERRUPTED));
    assert_true(gone(UNSTARTED));
    assert_false(gone(WAITING));
    assert_false(gone(RUNNING));
    assert_false(gone(RECENT));
    assert_false(gone(ANSWERED));
    /* the lessons bank is not a session */
    assert_int_equal(tnd_fs_read(&text, NULL, lessons, 4096), 0);
    assert_string_equal(text, "{\"lessons\": []}\n");
    free(text);

    /* --waiting: the waiting one goes; the running one never does */
    o.waiting = true;
    o.older_than_ms = 0;
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(item(&r, RUNNING)->verdict, TND_PRUNE_RUNNING);
    tnd_prune_result_clear(&r);
    assert_true(gone(WAITING));
    assert_true(gone(RECENT));
    assert_true(gone(ANSWERED));
    assert_false(gone(RUNNING));

    close(fd);
    free(lock);
    free(lessons);
    free(dir);
}

static void a_kept_workspace_goes_with_its_session(void **state)
{
    tnd_prune_options o = {.older_than_ms = DAY};
    tnd_prune_result r;
    char *base = tnd_rundir_base(), *dir, *ws;
    tnd_rundir *rd;

    (void)state;
    fresh();
    assert_non_null(base);
    o.repo = repo;
    o.now_ms = now;
    dir = session(APPROVED,
                  "\"type\":\"finish\",\"status\":\"approved\",\"reason\":\"\"",
                  3);
    /* the run that kept its workspace */
    assert_non_null(rd = tnd_rundir_new(base, APPROVED, dir, 0));
    ws = tnd_fs_join(tnd_rundir_path(rd), "workspace");
    assert_int_equal(mkdir(ws, 0700), 0);
    tnd_rundir_destroy(&rd, true);
    o.dry_run = true;
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_true(item(&r, APPROVED)->workspace);
    tnd_prune_result_clear(&r);
    assert_true(tnd_fs_exists(ws));
    o.dry_run = false;
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_true(item(&r, APPROVED)->workspace);
    tnd_prune_result_clear(&r);
    assert_true(gone(APPROVED));
    assert_false(tnd_fs_exists(ws));
    free(ws);
    free(dir);
    free(base);
}

static void a_prune_stopped_halfway_is_finished(void **state)
{
    tnd_prune_options o = {.older_than_ms = DAY};
    tnd_prune_result r;
    char *half =
        tnd_xasprintf("%s/.tandem/sessions/.pruned-%s/llm", repo, REJECTED);

    (void)state;
    fresh();
    o.repo = repo;
    o.now_ms = now;
    assert_int_equal(tnd_fs_mkdirs(half, 0755), 0);
    /* a dry run does not */
    o.dry_run = true;
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(r.count, 0); /* .pruned- is no session */
    tnd_prune_result_clear(&r);
    assert_true(tnd_fs_exists(half));
    o.dry_run = false;
    assert_int_equal(tnd_prune(&r, &o), 0);
    tnd_prune_result_clear(&r);
    assert_false(tnd_fs_exists(half));
    free(half);
}

static void a_session_that_cannot_be_removed_says_why(void **state)
{
    tnd_prune_options o = {.older_than_ms = DAY};
    tnd_prune_result r;
    char name[256], *dir;

    char *shallow = repo, deep[PATH_MAX];
    size_t len;

    (void)state;
    fresh();
    /* a session whose hidden name would be a path too long to rename to,
     * as its own lock file's is not: a failure that even root meets. The
     * repository deep enough that .tandem/sessions/ID is 4089 bytes */
    snprintf(name, sizeof(name), "20261122-014455-3fa2c91b");
    len = (size_t)snprintf(deep, sizeof(deep), "%s", scratch);
    while (len < 4089 - 18 - 24) {
        size_t seg = 4089 - 18 - 24 - len - 1;
        seg = seg > 200 ? 200 : seg;
        deep[len++] = '/';
        memset(deep + len, 'd', seg);
        len += seg;
        deep[len] = '\0';
    }
    repo = deep;
    o.repo = repo;
    o.now_ms = now;
    free(session(name, NULL, 3));
    assert_int_equal(tnd_prune(&r, &o), -1);
    assert_non_null(item(&r, name)->error);
    assert_non_null(strstr(item(&r, name)->error,
                           "cannot remove .tandem/sessions/20261122-014455"));
    /* the error names the path (cut, its length being the point) */
    if (!strstr(item(&r, name)->error, "cannot move ")) {
        repo = shallow;
        fail_msg("%s", item(&r, name)->error);
    }
    tnd_prune_result_clear(&r);
    assert_false(gone(name));
    dir = tnd_xasprintf("%s/.tandem/sessions/%s", repo, name);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
    free(dir);
    repo = shallow;
}

/* A repository can carry links in .tandem (a clone holds what was
 * committed): prune acts on nothing they lead to (it removed a sibling
 * directory of the repository, and the repository itself). */
static void links_in_tandem_lead_nowhere(void **state)
{
    tnd_prune_options o = {.older_than_ms = DAY};
    tnd_prune_result r;
    char *outside = tnd_fs_join(scratch, "precious");
    char *old = tnd_fs_join(outside, "old");
    char *half = tnd_fs_join(outside, ".pruned-x");
    char *top = tnd_fs_join(repo, ".tandem");
    char *sessions = tnd_fs_join(top, "sessions");
    char *inner = tnd_fs_join(sessions, "20200101-000000-0001");
    struct timespec t[2] = {{0, 0}, {0, 0}};

    (void)state;
    fresh();
    o.repo = repo;
    o.now_ms = now;
    assert_int_equal(tnd_fs_mkdirs(old, 0755), 0);
    assert_int_equal(tnd_fs_mkdirs(half, 0755), 0);
    assert_int_equal(utimensat(AT_FDCWD, old, t, 0), 0); /* 1970 */
    /* .tandem/sessions a link */
    assert_int_equal(tnd_fs_mkdirs(top, 0755), 0);
    assert_int_equal(symlink(outside, sessions), 0);
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(r.count, 0);
    tnd_prune_result_clear(&r);
    assert_true(tnd_fs_exists(old));
    assert_true(tnd_fs_exists(half));
    assert_int_equal(tnd_session_check_home(repo), -1);
    assert_non_null(strstr(tnd_error_last(), "is a symbolic link"));
    /* .tandem a link */
    fresh();
    assert_int_equal(symlink(scratch, top), 0);
    assert_int_equal(tnd_session_check_home(repo), -1);
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(r.count, 0);
    tnd_prune_result_clear(&r);
    assert_int_equal(unlink(top), 0);
    /* a session that is a link to a directory */
    assert_int_equal(tnd_fs_mkdirs(sessions, 0755), 0);
    assert_int_equal(symlink(outside, inner), 0);
    assert_int_equal(tnd_prune(&r, &o), 0);
    assert_int_equal(r.count, 0);
    tnd_prune_result_clear(&r);
    assert_true(tnd_fs_exists(old));
    fresh();
    free(inner);
    free(sessions);
    free(top);
    free(half);
    free(old);
    free(outside);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rule_table),
        cmocka_unit_test(a_repository_of_every_state_and_age),
        cmocka_unit_test(a_kept_workspace_goes_with_its_session),
        cmocka_unit_test(a_prune_stopped_halfway_is_finished),
        cmocka_unit_test(a_session_that_cannot_be_removed_says_why),
        cmocka_unit_test(links_in_tandem_lead_nowhere),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
