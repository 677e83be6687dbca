/* Unit tests for orchestrator/supervisor: what an agent process starts
 * with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/supervisor.h"

static char dir[] = "/tmp/tnd-test-supervisor-XXXXXX";

/* An agent inherits no descriptor of tandem's but its standard three:
 * the child closed 3..1023 only, and a server past 1024 descriptors
 * (serve raises its limit) had higher ones, dup()ed without O_CLOEXEC,
 * open in every agent it started. */
static void an_agent_inherits_only_its_standard_descriptors(void **state)
{
    struct rlimit nofile;
    char *out = tnd_fs_join(dir, "fds"), *log = tnd_fs_join(dir, "log");
    char *script = tnd_xasprintf("ls /proc/self/fd >%s.part && mv %s.part %s",
                                 out, out, out);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    tnd_agent_spec spec = {"agent-1", "coder", argv, log};
    tnd_supervisor *sup;
    char *text = NULL;
    size_t len = 0;
    int64_t deadline;
    int high = -1, low;

    (void)state;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 2048 &&
        nofile.rlim_max >= 2048) {
        nofile.rlim_cur = 2048;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    low = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, on purpose */
    assert_true(low >= 0);
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur >= 2048)
        high = dup2(low, 1500);
    sup = tnd_supervisor_new();
    assert_int_equal(tnd_supervisor_add(sup, &spec), 0);
    deadline = tnd_now_ms() + 10000;
    while (!tnd_fs_exists(out) && tnd_now_ms() < deadline)
        usleep(10000); /* polling the file, with a deadline */
    assert_int_equal(tnd_fs_read(&text, &len, out, 4096), 0);
    /* 0, 1, 2 and the one ls opens to list them */
    assert_string_equal(text, "0\n1\n2\n3\n");
    free(text);
    tnd_supervisor_destroy(&sup, 1000);
    close(low);
    if (high >= 0)
        close(high);
    else
        print_message("no descriptor above 1024 could be made: only the "
                      "low one was checked\n");
    free(script);
    free(out);
    free(log);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_agent_inherits_only_its_standard_descriptors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
