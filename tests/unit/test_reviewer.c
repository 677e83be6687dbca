/* Unit tests for agents/reviewer: one audit request handled whole, its
 * skills run for real (unsandboxed: `sandbox: none`), no critique asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/reviewer.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "proto/audit.h"
#include "proto/mdp.h"

extern char **environ;

static char tmpdir[] = "/tmp/tnd-test-reviewer-XXXXXX";

#define S(x) ((char *)(x))

/* Audit diff in tmpdir/NAME under config text; the decoded reply, which
 * fits in one body. */
static void audit_in(tnd_audit_reply *reply, const char *name, const char *text,
                     const char *diff)
{
    char ws[PATH_MAX];
    tnd_config *cfg = NULL;
    tnd_reviewer_ctx ctx;
    tnd_audit_request req;
    char *body, *out;
    size_t len, out_len;

    snprintf(ws, sizeof(ws), "%s/%s", tmpdir, name);
    assert_int_equal(
        tnd_config_parse(&cfg, text, strlen(text), "test.yaml", tmpdir), 0);
    memset(&ctx, 0, sizeof(ctx));
    ctx.config = cfg;
    ctx.envp = environ;
    ctx.runtime = tmpdir;
    memset(&req, 0, sizeof(req));
    req.task_id = S("t1");
    req.attempt = 1;
    req.task = S("add the data");
    req.workspace = ws;
    req.diff = S(diff);
    req.critique = false;
    body = tnd_audit_request_encode(&req, &len);
    out = tnd_reviewer_handle(&ctx, body, len, &out_len);
    assert_non_null(out);
    if (out_len > TND_MDP_MAX_BODY)
        fail_msg("a reply of %zu bytes, more than one body holds", out_len);
    if (tnd_audit_reply_decode(reply, out, out_len) < 0)
        fail_msg("not an audit reply: %s", out);
    free(out);
    free(body);
    tnd_config_destroy(&cfg);
}

static void audit(tnd_audit_reply *reply, const char *text, const char *diff)
{
    audit_in(reply, "ws", text, diff);
}

/* A built-in judges the change as it came: a command listed before it
 * that shrinks an added file does not get the file under max_file_kb (a
 * review found `skills: [build, gitcheck]` approving what
 * `[gitcheck, build]` rejected). */
static void builtins_judge_the_change_before_any_command(void **state)
{
    static const char text[] =
        "agents: {reviewer: {skills: [shrink, gitcheck]}}\n"
        "skills:\n"
        "  shrink: {command: \": > big.txt\", sandbox: none}\n"
        "  gitcheck: {builtin: git, max_file_kb: 1}\n";
    char path[PATH_MAX], line[4001];
    tnd_audit_reply reply;
    tnd_buf diff;
    struct stat st;

    (void)state;
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\0';
    snprintf(path, sizeof(path), "%s/ws", tmpdir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/ws/big.txt", tmpdir);
    tnd_buf_init(&diff, TND_BUF_NOCAP);
    tnd_buf_printf(&diff, "%s\n", line);
    assert_int_equal(tnd_fs_write(path, diff.data, diff.len), 0);
    tnd_buf_reset(&diff);
    tnd_buf_printf(&diff,
                   "diff --git a/big.txt b/big.txt\nnew file mode 100644\n"
                   "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1 @@\n+%s\n",
                   line);
    memset(&reply, 0, sizeof(reply));
    audit(&reply, text, tnd_buf_str(&diff));
    /* the command did run, after */
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(reply.nskills, 2);
    assert_string_equal(reply.skills[0].name, "shrink");
    assert_int_equal(reply.skills[0].status, TND_SKILL_PASS);
    assert_string_equal(reply.skills[1].name, "gitcheck");
    assert_int_equal(reply.skills[1].status, TND_SKILL_FAIL);
    assert_non_null(strstr(reply.skills[1].output, "big.txt:1: adds a file"));
    tnd_audit_reply_clear(&reply);
    tnd_buf_free(&diff);
}

/* Skills' outputs are fitted to a reply by their size as JSON: four
 * skills printing 1 MiB of control characters each (4 MiB of text, under
 * the 8 MiB the outputs may take) made a 24 MiB reply, which the agent
 * refused to send: the audit failed with an agent error, and `tandem
 * review --on-error pass` let the change through. */
static void outputs_fit_a_reply_as_json(void **state)
{
    static const char text[] =
        "agents: {reviewer: {skills: [c1, c2, c3, c4]}}\n"
        "skills:\n"
        "  c1: &c {command: \"head -c 1040000 /dev/zero | tr '\\\\0' "
        "'\\\\1'; echo; echo FAILED: c\", sandbox: none, output_max_kb: "
        "1024}\n"
        "  c2: *c\n"
        "  c3: *c\n"
        "  c4: *c\n";
    char path[PATH_MAX];
    tnd_audit_reply reply;

    (void)state;
    snprintf(path, sizeof(path), "%s/ws", tmpdir);
    (void)tnd_fs_rmtree(path); /* another test's */
    assert_int_equal(mkdir(path, 0700), 0);
    memset(&reply, 0, sizeof(reply));
    audit(&reply, text, "");
    assert_int_equal(reply.nskills, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(reply.skills[i].status, TND_SKILL_PASS);
        /* what it said last is kept */
        assert_non_null(strstr(reply.skills[i].output, "FAILED: c"));
    }
    tnd_audit_reply_clear(&reply);
}

/* A workspace the request names through a link beneath --runtime is
 * used by the real path checked, not the path sent: a link that changed
 * after the check ran the next skill elsewhere (here the first skill
 * moves the link; the second one's file lands in the workspace). */
static void a_workspace_is_used_by_the_path_checked(void **state)
{
    static const char text[] =
        "agents: {reviewer: {skills: [move, mark]}}\n"
        "skills:\n"
        "  move: {command: \"ln -sfn elsewhere ../link\", sandbox: none}\n"
        "  mark: {command: \"touch marker\", sandbox: none}\n";
    char ws[PATH_MAX], link[PATH_MAX], other[PATH_MAX], path[PATH_MAX];
    tnd_audit_reply reply;

    (void)state;
    snprintf(ws, sizeof(ws), "%s/ws", tmpdir);
    snprintf(link, sizeof(link), "%s/link", tmpdir);
    snprintf(other, sizeof(other), "%s/elsewhere", tmpdir);
    (void)tnd_fs_rmtree(ws); /* another test's */
    assert_int_equal(mkdir(ws, 0700), 0);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(symlink("ws", link), 0);
    memset(&reply, 0, sizeof(reply));
    audit_in(&reply, "link", text, "");
    assert_int_equal(reply.nskills, 2);
    assert_int_equal(reply.skills[1].status, TND_SKILL_PASS);
    snprintf(path, sizeof(path), "%s/marker", ws);
    assert_true(tnd_fs_exists(path));
    snprintf(path, sizeof(path), "%s/marker", other);
    assert_false(tnd_fs_exists(path));
    tnd_audit_reply_clear(&reply);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(tnd_fs_rmtree(other), 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtins_judge_the_change_before_any_command),
        cmocka_unit_test(outputs_fit_a_reply_as_json),
        cmocka_unit_test(a_workspace_is_used_by_the_path_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
