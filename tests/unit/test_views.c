/* Unit tests for orchestrator/views: the session files people read,
 * rebuilt from the journal after each step. Each view must show every
 * step it shows at once, though a step rebuilds only the views its record
 * can change; the first step and a resume write all three. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/journal.h"
#include "orchestrator/session.h"
#include "orchestrator/views.h"
#include "proto/json.h"

static char repo[64];

typedef struct fixture {
    tnd_session *session;
    tnd_journal *journal;
    tnd_views_state views; /* as a run keeps it */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *path;

    tnd_log_init("test", TND_LOG_ERROR);
    snprintf(repo, sizeof(repo), "/tmp/tnd-test-views-XXXXXX");
    if (!f || !mkdtemp(repo) || !(f->session = tnd_session_new(repo)))
        return -1;
    path = tnd_session_path(f->session, "journal.jsonl");
    f->journal = tnd_journal_open(path);
    free(path);
    *state = f;
    return f->journal ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;

    tnd_journal_close(&f->journal);
    tnd_views_state_clear(&f->views);
    tnd_session_destroy(&f->session);
    free(f);
    return tnd_fs_rmtree(repo);
}

/* Journal a step of type with fields (JSON text) and write the views, as
 * the run's tnd_loop_step does. */
static void step(fixture *f, const char *type, const char *fields)
{
    json_object *o = NULL;

    assert_int_equal(tnd_json_parse(&o, fields, strlen(fields)), 0);
    assert_int_equal(tnd_journal_append(f->journal, type, o), 0);
    assert_int_equal(tnd_views_write(f->session, f->journal, &f->views), 0);
}

/* The text of view name, or NULL when it is missing. Caller frees. */
static char *view(fixture *f, const char *name)
{
    char *path = tnd_session_path(f->session, name), *text = NULL;

    if (tnd_fs_exists(path))
        assert_int_equal(tnd_fs_read(&text, NULL, path, 1 << 20), 0);
    free(path);
    return text;
}

static void assert_view_has(fixture *f, const char *name, const char *what)
{
    char *text = view(f, name);

    if (!text || !strstr(text, what))
        fail_msg("%s does not show '%s':\n%s", name, what,
                 text ? text : "(missing)");
    free(text);
}

static void assert_view_lacks(fixture *f, const char *name, const char *what)
{
    char *text = view(f, name);

    assert_non_null(text);
    if (strstr(text, what))
        fail_msg("%s shows '%s' too early:\n%s", name, what, text);
    free(text);
}

/* reflection.md is exactly what the journal's records make now, rebuilt
 * whole (and made printable), though the run adds to it a step at a time. */
static void assert_reflection_current(fixture *f)
{
    char *whole = tnd_views_reflection(tnd_journal_records(f->journal));
    char *want = tnd_str_printable(whole, 3 * strlen(whole) + 1);
    char *have = view(f, "reflection.md");

    assert_non_null(have);
    assert_string_equal(have, want);
    free(whole);
    free(want);
    free(have);
}

static void remove_view(fixture *f, const char *name)
{
    char *path = tnd_session_path(f->session, name);

    assert_int_equal(unlink(path), 0);
    free(path);
}

/* A session's steps, in order: after each, every view shows what it
 * shows of the journal so far. */
static void each_view_follows_the_steps_it_shows(void **state)
{
    fixture *f = *state;

    step(f, "task", "{\"task\": \"set the value\", \"repo\": \"/r\"}");
    assert_view_has(f, "reflection.md", "Task: set the value");
    assert_view_has(f, "decisions.md", "# Decisions");
    assert_view_has(f, "failures.json", "\"patterns\"");

    step(f, "workspace", "{\"files\": 1, \"source\": \"git\"}");
    step(f, "proposal", "{\"attempt\": 1, \"reply\": {}}");
    step(f, "audit", "{\"attempt\": 1, \"reply\": {}}");
    assert_reflection_current(f);
    assert_view_has(f, "reflection.md", "## Attempt 1");
    assert_view_lacks(f, "decisions.md", "attempt 1");

    step(f, "decision",
         "{\"attempt\": 1, \"action\": \"revise\", "
         "\"reason\": \"the check failed\", "
         "\"signature\": \"check:exit-1\"}");
    assert_reflection_current(f);
    assert_view_has(f, "decisions.md", "attempt 1: revise: the check failed");
    assert_view_has(f, "failures.json", "check:exit-1");

    step(f, "escalation", "{\"reason\": \"two revisions\", \"mode\": \"ask\"}");
    assert_view_has(f, "decisions.md", "to a human (ask): two revisions");
    step(f, "answer", "{\"kind\": \"guide\", \"text\": \"use 3\"}");
    assert_view_has(f, "decisions.md", "a person answered guide");
    assert_view_has(f, "reflection.md", "> use 3");

    step(f, "proposal", "{\"attempt\": 2, \"reply\": {}}");
    step(f, "decision",
         "{\"attempt\": 2, \"action\": \"approve\", "
         "\"reason\": \"all checks pass\"}");
    step(f, "finish", "{\"status\": \"approved\", \"reason\": \"done\"}");
    assert_reflection_current(f);
    assert_view_has(f, "reflection.md", "## Finished: approved");
    assert_view_has(f, "decisions.md", "attempt 2: approve: all checks pass");
    assert_view_has(f, "decisions.md", "finished: approved");
}

/* reflection.md grows by each step's section, made printable alone: the
 * same bytes as the whole rebuilt from the journal, with text a terminal
 * must not get (escape codes, C1 controls, a character a section's cut
 * splits), and after a resume, whose run starts with nothing kept. */
static void reflection_grows_as_it_is_rebuilt_whole(void **state)
{
    fixture *f = *state;
    char *path, long_why[2048];
    size_t n = 0;

    /* "x" then 2-byte characters: the reasoning's cut at 600 bytes
     * splits one */
    n += (size_t)snprintf(long_why + n, sizeof(long_why) - n, "x");
    for (int i = 0; i < 400; i++)
        n += (size_t)snprintf(long_why + n, sizeof(long_why) - n, "\u00e9");
    step(f, "task",
         "{\"task\": \"fix \\u001b[31mred\\u001b[0m, caf\u00e9\", "
         "\"repo\": \"/r\"}");
    assert_reflection_current(f);
    step(f, "workspace", "{\"files\": 3, \"source\": \"git\"}");
    step(f, "asked", "{\"attempt\": 1}"); /* no section */
    assert_reflection_current(f);
    {
        char *fields = tnd_xasprintf("{\"attempt\": 1, \"reply\": "
                                     "{\"rationale\": \"%s\", \"edits\": "
                                     "[{\"path\": \"a\\u009b.c\"}]}}",
                                     long_why);
        step(f, "proposal", fields);
        free(fields);
    }
    assert_reflection_current(f);
    step(f, "audit",
         "{\"attempt\": 1, \"reply\": {\"skills\": [{\"name\": "
         "\"test\", \"status\": \"fail\", \"exit_code\": 2}], "
         "\"critique\": {\"verdict\": \"revise\", \"confidence\": 0.5, "
         "\"summary\": \"\\u0007bell\", \"issues\": []}}}");
    step(f, "decision",
         "{\"attempt\": 1, \"action\": \"revise\", \"reason\": \"r\"}");
    assert_reflection_current(f);

    /* a resume: the journal opened again, and a run keeping nothing yet */
    tnd_journal_close(&f->journal);
    tnd_views_state_clear(&f->views);
    path = tnd_session_path(f->session, "journal.jsonl");
    assert_non_null(f->journal = tnd_journal_open(path));
    free(path);
    step(f, "resume", "{}");
    assert_reflection_current(f);
    step(f, "proposal", "{\"attempt\": 2, \"reply\": {}}");
    step(f, "finish", "{\"status\": \"approved\", \"reason\": \"ok\"}");
    assert_reflection_current(f);
    assert_view_has(f, "reflection.md", "## Finished: approved");
}

/* A view lost (deleted, or never written: a crash between a step and its
 * views) comes back at the next step that shows something in it, and a
 * resume, with or without an answer, writes all three. */
static void a_lost_view_comes_back(void **state)
{
    fixture *f = *state;

    step(f, "task", "{\"task\": \"t\"}");
    remove_view(f, "decisions.md");
    remove_view(f, "failures.json");
    step(f, "decision",
         "{\"attempt\": 1, \"action\": \"revise\", "
         "\"reason\": \"r\", \"signature\": \"s\"}");
    assert_view_has(f, "decisions.md", "attempt 1: revise");
    assert_view_has(f, "failures.json", "\"s\"");

    remove_view(f, "decisions.md");
    remove_view(f, "failures.json");
    remove_view(f, "reflection.md");
    step(f, "resume", "{}");
    assert_view_has(f, "decisions.md", "attempt 1: revise");
    assert_view_has(f, "failures.json", "\"s\"");
    assert_reflection_current(f);

    /* a resume with a person's answer journals the answer, not resume */
    remove_view(f, "failures.json");
    step(f, "answer", "{\"kind\": \"guide\", \"text\": \"g\"}");
    assert_view_has(f, "failures.json", "\"s\"");
}

/* Records a hand or a bug made wrong (a number where text goes, a
 * field missing) give '?' in the views, not a crash: a decision with
 * "reason": 42 crashed every resume of its session (a review found it). */
static void wrong_fields_do_not_crash_a_view(void **state)
{
    fixture *f = *state;

    step(f, "task", "{\"task\": 7}");
    step(f, "proposal",
         "{\"attempt\": 1, \"reply\": {\"edits\": [{\"path\": 7}]}}");
    step(f, "audit",
         "{\"attempt\": 1, \"reply\": {\"skills\": [{\"name\": 1}], "
         "\"critique\": {\"issues\": [{\"type\": 2}]}}}");
    step(f, "decision",
         "{\"attempt\": 1, \"action\": 3, \"reason\": 42, "
         "\"signature\": \"s\"}");
    /* lists that are not lists: json-c aborted on their length */
    step(f, "proposal", "{\"attempt\": 2, \"reply\": {\"edits\": \"x\"}}");
    step(f, "audit",
         "{\"attempt\": 2, \"reply\": {\"skills\": 5, "
         "\"critique\": {\"verdict\": \"approve\", \"issues\": {}}}}");
    step(f, "escalation", "{\"reason\": [], \"mode\": {}}");
    step(f, "answer", "{\"kind\": 5}");
    step(f, "finish", "{\"status\": false}");
    assert_view_has(f, "decisions.md", "attempt 1: ?: ?");
    assert_view_has(f, "decisions.md", "to a human (?): ?");
    assert_view_has(f, "failures.json", "\"reason\": \"\"");
    assert_view_has(f, "reflection.md", "## Finished: ?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_view_follows_the_steps_it_shows,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(wrong_fields_do_not_crash_a_view, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_lost_view_comes_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reflection_grows_as_it_is_rebuilt_whole,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
