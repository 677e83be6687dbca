/* Unit tests for skills/builtin: the git and docs skills, rule by rule,
 * and diffs made to hurt (huge, binary-looking, CRLF). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "skills/builtin.h"

static char tmpdir[] = "/tmp/tnd-test-builtin-XXXXXX";
static tnd_config *cfg;

static const char config_text[] = "agents: {reviewer: {skills: [git, docs]}}\n"
                                  "skills:\n"
                                  "  git:\n"
                                  "    builtin: git\n"
                                  "    forbid: [\"secrets/**\", \"*.pem\"]\n"
                                  "    max_changed_lines: 10\n"
                                  "    max_file_kb: 1\n"
                                  "  plain: {builtin: git}\n"
                                  "  docs:\n"
                                  "    builtin: docs\n"
                                  "    public: [\"include/**\", \"*.h\"]\n"
                                  "    docs: [README.md, \"docs/**\"]\n";

/* A diff creating path with the given lines (each without '\n'). */
static char *created(const char *path, const char *const *lines)
{
    tnd_buf b;
    size_t n = 0;

    while (lines[n])
        n++;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b,
                   "diff --git a/%s b/%s\nnew file mode 100644\n"
                   "--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%zu @@\n",
                   path, path, path, n);
    for (size_t i = 0; i < n; i++)
        tnd_buf_printf(&b, "+%s\n", lines[i]);
    return tnd_buf_detach(&b, NULL);
}

/* A diff changing line 5 of path into the given one. */
static char *changed(const char *path, const char *line)
{
    return tnd_xasprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n"
                         "@@ -4,3 +4,3 @@\n ctx\n-old\n+%s\n ctx\n",
                         path, path, path, path, line);
}

/* Run skill name over diff; the result's output, borrowed until the
 * next call. */
static tnd_skill_result result;

static const char *run(const char *name, const char *diff)
{
    tnd_skill_result_clear(&result);
    tnd_builtin_run(&result, tnd_config_skill(cfg, name), tmpdir, diff);
    return result.output;
}

static void expect_fail(const char *name, const char *diff, const char *what)
{
    const char *out = run(name, diff);

    if (result.status != TND_SKILL_FAIL || !strstr(out, what))
        fail_msg("expected a failure naming \"%s\", got %s:\n%s", what,
                 tnd_skill_status_name(result.status), out);
    assert_int_equal(result.exit_code, 1);
}

static void expect_pass(const char *name, const char *diff)
{
    const char *out = run(name, diff);

    if (result.status != TND_SKILL_PASS)
        fail_msg("expected a pass, got %s:\n%s",
                 tnd_skill_status_name(result.status), out);
    assert_int_equal(result.exit_code, 0);
}

/* ---- git ---------------------------------------------------------------- */

static void a_clean_change_passes_with_statistics(void **state)
{
    char *d = changed("src/a.c", "int x = 1;");
    const char *out;

    (void)state;
    expect_pass("git", d);
    out = result.output;
    assert_string_equal(out, "git: 1 file changed, +1 -1\n"
                             "  src/a.c +1 -1\n"
                             "git: no problems found\n");
    assert_string_equal(result.name, "git");
    assert_string_equal(result.command, "builtin: git");
    assert_true(result.required);
    free(d);
}

static void forbidden_paths(void **state)
{
    static const char *const one[] = {"x", NULL};
    char *d = created("secrets/prod.env", one);

    (void)state;
    expect_fail("git", d,
                "secrets/prod.env:1: changes a forbidden path (forbid: "
                "secrets/**)");
    free(d);
    d = changed("server.pem", "y");
    expect_fail("git", d,
                "server.pem:5: changes a forbidden path (forbid: "
                "*.pem)");
    free(d);
    /* '*' stays in its directory: a nested .pem is not matched */
    d = changed("certs/server.pem", "y");
    expect_pass("git", d);
    free(d);
    /* deleting or renaming away counts too */
    d = tnd_xstrdup("diff --git a/secrets/k b/secrets/k\n"
                    "deleted file mode 100644\n--- a/secrets/k\n+++ /dev/null\n"
                    "@@ -1 +0,0 @@\n-k\n"
                    "diff --git a/secrets/old b/public/new\n"
                    "rename from secrets/old\nrename to public/new\n");
    expect_fail("git", d, "secrets/k: changes a forbidden path");
    assert_non_null(strstr(result.output, "secrets/old: changes a forbidden"));
    assert_non_null(strstr(result.output, "git: 2 problems found"));
    free(d);
}

static void too_many_changed_lines(void **state)
{
    static const char *const ten[] = {"1", "2", "3", "4",  "5", "6",
                                      "7", "8", "9", "10", NULL};
    static const char *const eleven[] = {"1", "2", "3", "4",  "5",  "6",
                                         "7", "8", "9", "10", "11", NULL};
    char *d = created("ok.txt", ten);

    (void)state;
    expect_pass("git", d);
    free(d);
    d = created("ok.txt", eleven);
    expect_fail("git", d,
                "the change has 11 changed lines (+11 -0), over "
                "max_changed_lines 10");
    free(d);
    /* 0: no limit */
    d = created("ok.txt", eleven);
    expect_pass("plain", d);
    free(d);
}

static void conflict_markers(void **state)
{
    static const char *const markers[] = {
        "<<<<<<< HEAD", "=======", ">>>>>>> feature",
        "=======\r",    "<<<<<<<", NULL};
    static const char *const fine[] = {"  <<<<<<< indented is content",
                                       "========", "x = \"<<<<<<< SEARCH\";",
                                       "== not a marker", NULL};

    (void)state;
    for (int i = 0; markers[i]; i++) {
        char *d = changed("src/a.c", markers[i]);
        expect_fail("plain", d, "src/a.c:5: adds a merge conflict marker");
        free(d);
    }
    for (int i = 0; fine[i]; i++) {
        char *d = changed("src/a.c", fine[i]);
        expect_pass("plain", d);
        free(d);
    }
}

static void large_added_files(void **state)
{
    char big[2000], path[PATH_MAX + 16];
    const char *lines[] = {big, NULL};
    char *d;

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    /* sized from the diff when the workspace has no such file */
    d = created("data/blob.txt", lines);
    expect_fail("git", d,
                "data/blob.txt:1: adds a file of 2 KiB, over max_file_kb 1");
    free(d);
    /* the workspace's copy wins: a binary file has no lines to count */
    snprintf(path, sizeof(path), "%s/logo.png", tmpdir);
    assert_int_equal(tnd_fs_write(path, big, 1500), 0);
    d = tnd_xstrdup("diff --git a/logo.png b/logo.png\nnew file mode 100644\n"
                    "Binary files /dev/null and b/logo.png differ\n");
    expect_fail("git", d, "logo.png:1: adds a file of 2 KiB");
    assert_non_null(strstr(result.output, "  logo.png binary (new)"));
    free(d);
    unlink(path);
    /* a modified file is not an added one */
    d = changed("data/blob.txt", big);
    expect_pass("git", d);
    free(d);
}

static void secrets_are_found_by_kind_and_never_echoed(void **state)
{
    static const struct {
        const char *line, *kind;
    } found[] = {
        {"-----BEGIN RSA PRIVATE KEY-----", "a private key"},
        {"-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"},
        {"aws_id = AKIATANDEMTESTFAKE00", "an AWS access key id"},
        {"\"AKIATANDEMTESTFAKE00\"", "an AWS access key id"},
        {"token: ghp_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token"},
        {"gho_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token"},
        {"(ghs_0123456789abcdefghijABCDEFGHIJ012345)", "a GitHub token"},
        {"slack = xoxb-1234567890-abcdefghij", "a Slack token"},
        {"OPENAI=sk-proj-abcdefghijklmnopqrstuv", "an API secret key"},
        {"api_key = \"q8Zr2LmN0pXv7TbY3cKd\"", "a secret assigned"},
        {"  secret: 'q8Zr2LmN0pXv7TbY3cKd'", "a secret assigned"},
        {"\"client_secret\": \"q8Zr2LmN0pXv7TbY3cKd\",", "a secret assigned"},
        {"PASSWORD := `hunter2hunter2hunter2`", "a secret assigned"},
    };
    static const char *const clean[] = {
        "XAKIATANDEMTESTFAKE00",          /* inside a word */
        "AKIATANDEMTESTFAKE0",            /* 15 after AKIA */
        "AKIATANDEMTESTFAKE00X",          /* 17 */
        "ghp_short",                      /* too short */
        "task-runner-with-a-long-name-1", /* "sk-" inside a word */
        "sk-short",                       /* under 20 */
        "api_key = \"${API_KEY}\"",       /* a placeholder */
        "api_key = \"<your key here....>\"",
        "api_key = \"xxxxxxxxxxxxxxxxxxxx\"",
        "api_key = \"short\"",
        "api_key = os.environ['API_KEY']",
        "password_hint = \"your favourite colour\"",
        "max_tokens: 4096",
        "-----BEGIN CERTIFICATE-----",
        NULL};

    (void)state;
    for (size_t i = 0; i < sizeof(found) / sizeof(*found); i++) {
        char *d = changed("cfg.txt", found[i].line);
        char *want =
            tnd_xasprintf("cfg.txt:5: adds what looks like %s", found[i].kind);
        expect_fail("plain", d, want);
        assert_null(strstr(result.output, "TANDEMTESTFAKE"));
        assert_null(strstr(result.output, "q8Zr2"));
        assert_null(strstr(result.output, "abcdefghij"));
        free(want);
        free(d);
    }
    for (int i = 0; clean[i]; i++) {
        if (tnd_builtin_secret(clean[i], strlen(clean[i])))
            fail_msg("flagged as a secret: %s (%s)", clean[i],
                     tnd_builtin_secret(clean[i], strlen(clean[i])));
    }
}

/* Only what the change adds: removed and context lines are not its. */
static void only_added_lines_are_scanned(void **state)
{
    static const char d[] = "diff --git a/k b/k\n--- a/k\n+++ b/k\n"
                            "@@ -1,3 +1,2 @@\n"
                            " AKIATANDEMTESTFAKE00\n"
                            "-<<<<<<< HEAD\n"
                            "-AKIATANDEMTESTFAKE01\n"
                            "+clean\n"
                            " =======\n";

    (void)state;
    expect_pass("plain", d);
    expect_pass("plain", "");
    assert_string_equal(result.output, "plain: 0 files changed, +0 -0\n"
                                       "plain: no problems found\n");
}

/* ---- docs --------------------------------------------------------------- */

static void docs_rule(void **state)
{
    char *header = changed("include/api.h", "int api(void);");
    char *readme = changed("README.md", "Explains api().");
    char *both = tnd_xasprintf("%s%s", header, readme);
    char *source = changed("src/api.c", "int api(void) { return 1; }");

    (void)state;
    expect_fail("docs", header,
                "include/api.h:5: public path changed, but no documentation "
                "did (docs: README.md, docs/**)");
    expect_pass("docs", both);
    assert_non_null(strstr(result.output, "documentation changed: README.md"));
    assert_non_null(strstr(result.output, "1 public path changed, and so did "
                                          "the documentation"));
    expect_pass("docs", source);
    assert_non_null(strstr(result.output, "no public path changed"));
    free(header);
    header = changed("stats.h", "x");
    expect_fail("docs", header, "stats.h:5: public path changed");
    free(header);
    /* a removed public header needs documenting too */
    expect_fail("docs",
                "diff --git a/include/old.h b/include/old.h\n"
                "deleted file mode 100644\n--- a/include/old.h\n"
                "+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
                "include/old.h: public path changed");
    free(both);
    free(readme);
    free(source);
}

/* ---- hostile input ------------------------------------------------------ */

static void hostile_diffs_are_bounded(void **state)
{
    tnd_buf b;
    int64_t start;

    (void)state;
    /* 8 MiB of added lines, a secret near the end: found, quickly, and
     * the output stays within the skill's cap */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "diff --git a/big b/big\nnew file mode 100644\n"
                     "--- /dev/null\n+++ b/big\n@@ -0,0 +1,600000 @@\n");
    for (int i = 0; i < 599999; i++)
        tnd_buf_puts(&b, i % 2 ? "+<<<<<<< x\n" : "+ordinary text.\n");
    tnd_buf_puts(&b, "+AKIATANDEMTESTFAKE00\n");
    start = tnd_now_ms();
    expect_fail("plain", tnd_buf_str(&b), "an AWS access key id");
    assert_in_range(tnd_now_ms() - start, 0, 30000); /* valgrind: ~7 s */
    assert_true(strlen(result.output) <= 64 * 1024);
    assert_non_null(strstr(result.output, "... and "));
    assert_non_null(strstr(result.output, "plain: 300001 problems found"));

    /* control bytes, high bytes, NUL-free binary noise, CRLF */
    tnd_buf_reset(&b);
    tnd_buf_puts(&b, "diff --git a/bin b/bin\r\n--- a/bin\r\n+++ b/bin\r\n"
                     "@@ -1,2 +1,3 @@\r\n"
                     " \x01\x02\x03\r\n"
                     "-\xff\xfe\r\n"
                     "+\xff\xfe\x80\x7f\x1b[31m\r\n"
                     "+=======\r\n"
                     "+AKIA\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
                     "\xff\xff\xff\xff\r\n");
    expect_fail("plain", tnd_buf_str(&b), "bin:3: adds a merge conflict");
    assert_non_null(strstr(result.output, "plain: 1 problem found"));

    /* more files than a diff may name: an error, not a pass */
    tnd_buf_reset(&b);
    for (int i = 0; i <= 10000; i++)
        tnd_buf_printf(&b, "diff --git a/f%d b/f%d\n", i, i);
    run("plain", tnd_buf_str(&b));
    assert_int_equal(result.status, TND_SKILL_ERROR);
    assert_non_null(strstr(result.output, "more than 10000 files"));
    tnd_buf_free(&b);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    return tnd_config_parse(&cfg, config_text, strlen(config_text),
                            "agents.yaml", "/base");
}

static int teardown(void **state)
{
    (void)state;
    tnd_skill_result_clear(&result);
    tnd_config_destroy(&cfg);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_clean_change_passes_with_statistics),
        cmocka_unit_test(forbidden_paths),
        cmocka_unit_test(too_many_changed_lines),
        cmocka_unit_test(conflict_markers),
        cmocka_unit_test(large_added_files),
        cmocka_unit_test(secrets_are_found_by_kind_and_never_echoed),
        cmocka_unit_test(only_added_lines_are_scanned),
        cmocka_unit_test(docs_rule),
        cmocka_unit_test(hostile_diffs_are_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
