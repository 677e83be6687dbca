/* Unit tests for skills/proc: running programs with deadlines, bounded
 * output and a scrubbed environment. Real processes throughout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/str.h"
#include "skills/proc.h"

static char tmpdir[] = "/tmp/tnd-test-proc-XXXXXX";
static char pid_file[PATH_MAX], ready_file[PATH_MAX], big_file[PATH_MAX];

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

/* The pid a shell wrote to pid_file. */
static pid_t read_pid_file(void)
{
    FILE *f = fopen(pid_file, "r");
    int pid = 0;

    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    assert_true(pid > 0);
    return (pid_t)pid;
}

/* Poll (with a deadline) until pid no longer exists. We are the
 * subreaper (see main), so an orphan that died is ours to reap. */
static void assert_gone(pid_t pid)
{
    int64_t deadline = tnd_now_ms() + 5000;

    for (;;) {
        waitpid(pid, NULL, WNOHANG);
        if (kill(pid, 0) == -1 && errno == ESRCH)
            return;
        assert_true(tnd_now_ms() < deadline);
        nap_ms(5);
    }
}

/* Poll (with a deadline) until path exists. */
static void wait_for_file(const char *path)
{
    int64_t deadline = tnd_now_ms() + 5000;

    while (access(path, F_OK) != 0) {
        assert_true(tnd_now_ms() < deadline);
        nap_ms(5);
    }
}

static void exit_codes_are_reported(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("true")};

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_EXITED);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.output, "");
    assert_string_equal(res.errors, "");
    assert_string_equal(tnd_proc_describe(&res), "exit 0");
    tnd_proc_result_free(&res);

    spec.argv = ARGV("sh", "-c", "exit 3");
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_EXITED);
    assert_int_equal(res.exit_code, 3);
    assert_string_equal(tnd_proc_describe(&res), "exit 3");
    tnd_proc_result_free(&res);
    tnd_proc_result_free(&res); /* twice is fine */
}

static void stdout_and_stderr_are_kept_apart(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", "echo out; echo err >&2; echo out2"),
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, "out\nout2\n");
    assert_int_equal(res.output_len, 9);
    assert_int_equal(res.output_total, 9);
    assert_string_equal(res.errors, "err\n");
    assert_int_equal(res.errors_total, 4);
    tnd_proc_result_free(&res);
}

static void merged_stderr_keeps_the_order_written(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", "echo out; echo err >&2; echo out2"),
        .merge_stderr = 1,
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, "out\nerr\nout2\n");
    assert_string_equal(res.errors, "");
    assert_int_equal(res.errors_len, 0);
    tnd_proc_result_free(&res);
}

static void input_is_fed_to_stdin(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("cat"), .input = "hello\nworld\n", .input_len = 12};
    size_t big = 1024 * 1024;
    char *data = malloc(big);

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, "hello\nworld\n");
    tnd_proc_result_free(&res);

    /* More than a pipe holds in both directions at once. */
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    spec.input = data;
    spec.input_len = big;
    spec.output_cap = 2 * big;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.output_len, big);
    assert_memory_equal(res.output, data, big);
    tnd_proc_result_free(&res);
    free(data);
}

static void big_input_to_a_program_that_ignores_it_does_not_hang(void **state)
{
    size_t big = 1024 * 1024;
    char *data = calloc(1, big);
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", "head -c 300000 /dev/zero"),
        .input = data,
        .input_len = big,
        .timeout_ms = 5000,
    };
    tnd_proc_result res;
    sigset_t pending;

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_EXITED);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.output_total, 300000);
    /* Our write hit EPIPE; the SIGPIPE it raised was swallowed. */
    sigpending(&pending);
    assert_false(sigismember(&pending, SIGPIPE));
    tnd_proc_result_free(&res);
    free(data);
}

static void runs_in_the_given_directory(void **state)
{
    char real[PATH_MAX], expect[PATH_MAX + 2];
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("pwd"), .cwd = tmpdir};

    (void)state;
    assert_non_null(realpath(tmpdir, real));
    snprintf(expect, sizeof(expect), "%s\n", real);
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, expect);
    tnd_proc_result_free(&res);
}

static void missing_program_is_an_error_naming_it(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("tnd-no-such-program", "x")};

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), -1);
    assert_string_equal(tnd_error_last(), "cannot run 'tnd-no-such-program': "
                                          "No such file or directory");
    assert_null(res.output);
    tnd_proc_result_free(&res);

    spec.argv = ARGV("/nonexistent/tnd-prog");
    assert_int_equal(tnd_proc_run(&res, &spec), -1);
    assert_non_null(strstr(tnd_error_last(), "'/nonexistent/tnd-prog'"));
    tnd_proc_result_free(&res);

    spec.argv = ARGV(tmpdir); /* a directory: found, but not runnable */
    assert_int_equal(tnd_proc_run(&res, &spec), -1);
    assert_non_null(strstr(tnd_error_last(), "Permission denied"));
    tnd_proc_result_free(&res);
}

static void missing_directory_is_an_error_naming_it(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("true"), .cwd = "/nonexistent/tnd"};

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), -1);
    assert_string_equal(tnd_error_last(),
                        "cannot run 'true': cannot enter directory "
                        "'/nonexistent/tnd': No such file or directory");
    tnd_proc_result_free(&res);
}

static void timeout_kills_the_program(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("sleep", "30"), .timeout_ms = 200};

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_TIMEOUT);
    assert_int_equal(res.signal, SIGTERM);
    assert_in_range(res.duration_ms, 200, 2000);
    assert_memory_equal(tnd_proc_describe(&res), "timed out after ", 16);
    tnd_proc_result_free(&res);
}

static void timeout_kills_the_whole_process_group(void **state)
{
    char script[PATH_MAX + 64];
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", script),
        .timeout_ms = 300,
    };

    (void)state;
    snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; wait", pid_file);
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_TIMEOUT);
    assert_gone(read_pid_file());
    tnd_proc_result_free(&res);
}

/* A program that leaves its process group for another of the session
 * (ours: a model-written test can) still gets the timeout's signals; the
 * group's reached no one, and the run waited for it to end by itself (a
 * review found it). perl is in every Debian (perl-base). */
static void timeout_reaches_a_program_that_left_its_group(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("perl", "-e",
                     "setpgrp(0, getpgrp(getppid())) or die; sleep 20"),
        .timeout_ms = 300,
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_TIMEOUT);
    assert_int_equal(res.signal, SIGTERM);
    assert_in_range(res.duration_ms, 300, 5000);
    tnd_proc_result_free(&res);
}

static void term_ignored_means_kill_after_the_grace(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", "trap '' TERM; exec sleep 30"),
        .timeout_ms = 200,
        .kill_grace_ms = 300,
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_TIMEOUT);
    assert_int_equal(res.signal, SIGKILL);
    assert_in_range(res.duration_ms, 500, 3000);
    tnd_proc_result_free(&res);
}

static void background_grandchild_does_not_hold_up_a_run(void **state)
{
    char script[PATH_MAX + 64];
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("sh", "-c", script)};

    (void)state;
    /* The sleep inherits stdout, so EOF alone would take 30 s. */
    snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; echo hi",
             pid_file);
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_EXITED);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.output, "hi\n");
    assert_in_range(res.duration_ms, 0, 2000);
    assert_gone(read_pid_file());
    tnd_proc_result_free(&res);
}

typedef struct canceller {
    atomic_int flag;
    const char *ready; /* the child creates this file once running */
} canceller;

static void *cancel_when_ready(void *arg)
{
    canceller *c = arg;
    int64_t deadline = tnd_now_ms() + 5000;

    while (access(c->ready, F_OK) != 0 && tnd_now_ms() < deadline)
        nap_ms(5);
    atomic_store(&c->flag, 1);
    return NULL;
}

static void cancel_from_another_thread_stops_the_run(void **state)
{
    char script[PATH_MAX + 64];
    canceller c = {.ready = ready_file};
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("sh", "-c", script), .cancel = &c.flag};
    pthread_t thread;

    (void)state;
    atomic_init(&c.flag, 0);
    snprintf(script, sizeof(script), "echo > %s; exec sleep 30", ready_file);
    assert_int_equal(pthread_create(&thread, NULL, cancel_when_ready, &c), 0);
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    pthread_join(thread, NULL);
    assert_int_equal(res.status, TND_PROC_CANCELLED);
    assert_int_equal(res.signal, SIGTERM);
    assert_in_range(res.duration_ms, 0, 5000);
    assert_string_equal(tnd_proc_describe(&res), "cancelled");
    tnd_proc_result_free(&res);
}

static void output_cap_keeps_head_and_tail(void **state)
{
    char marker[64];
    size_t mlen, total = 5 + 50000000 + 3;
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", "printf 0123456789abcdefghij"),
        .output_cap = 10,
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, "01234\n[... 10 bytes omitted ...]\nfghij");
    assert_int_equal(res.output_total, 20);
    tnd_proc_result_free(&res);

    spec.argv = ARGV("printf", "0123456789"); /* exactly the cap */
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_string_equal(res.output, "0123456789");
    tnd_proc_result_free(&res);

    /* 50 MB through the default 64 KiB cap. */
    spec.argv = ARGV("sh", "-c",
                     "printf START; head -c 50000000 /dev/zero | tr '\\0' x; "
                     "printf END");
    spec.output_cap = 0;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.output_total, total);
    mlen = (size_t)snprintf(marker, sizeof(marker),
                            "\n[... %zu bytes omitted ...]\n", total - 65536);
    assert_int_equal(res.output_len, 65536 + mlen);
    assert_memory_equal(res.output, "STARTxxx", 8);
    assert_memory_equal(res.output + 32768, marker, mlen);
    assert_string_equal(res.output + res.output_len - 6, "xxxEND");
    tnd_proc_result_free(&res);
}

/* A test that failed in the middle of 400 KB of build output is kept
 * from the omitted part, right after the marker. */
static void a_failure_in_the_omitted_middle_is_kept(void **state)
{
    const char *fail = "[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, "
                       "expected 0\n";
    size_t total = 200000 + strlen(fail) + 200000;
    char marker[128];
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c",
                     "yes 'filler line of the build' | head -c 200000; "
                     "echo '[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, "
                     "expected 0'; "
                     "yes 'more filler, still fine' | head -c 200000"),
    };

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.output_total, total);
    snprintf(marker, sizeof(marker),
             "\n[... %zu bytes omitted; this line among them names a "
             "failure ...]\n",
             total - 65536);
    assert_memory_equal(res.output, "filler line of the build\n", 25);
    assert_memory_equal(res.output + 32768, marker, strlen(marker));
    assert_memory_equal(res.output + 32768 + strlen(marker), fail,
                        strlen(fail));
    assert_int_equal(res.output_len, 65536 + strlen(marker) + strlen(fail));
    /* 200000 is no multiple of 24: the last line is cut */
    assert_string_equal(res.output + res.output_len - 19,
                        "still fine\nmore fil");
    tnd_proc_result_free(&res);
}

/* Thousands of failure lines in the middle: the first ones are kept up
 * to TND_PROC_MIDDLE_MAX bytes, the others counted. */
static void failure_lines_from_the_middle_are_bounded(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c",
                     "yes 'filler line of the build' | head -c 100000; "
                     "yes '[FAIL] test_x.c:1 something went wrong' | "
                     "head -n 3000; "
                     "yes 'filler line of the build' | head -c 100000"),
    };
    size_t omitted, nfail, kept;
    const char *m, *after;

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.output_total, 200000 + 3000 * 39);
    assert_true(res.output_len <= 65536 + 128 + TND_PROC_MIDDLE_MAX);
    m = strstr(res.output, "\n[... ");
    assert_non_null(m);
    assert_int_equal(sscanf(m,
                            "\n[... %zu bytes omitted; %zu lines among them "
                            "name a failure, the first %zu follow ...]\n",
                            &omitted, &nfail, &kept),
                     3);
    assert_int_equal(omitted, res.output_total - 65536);
    assert_int_equal(nfail, 3000);
    assert_int_equal(kept, TND_PROC_MIDDLE_MAX / 39);
    after = strstr(m, "follow ...]\n") + 12;
    for (size_t i = 0; i < kept; i++)
        assert_memory_equal(after + 39 * i,
                            "[FAIL] test_x.c:1 something went wrong\n", 39);
    assert_null(strstr(after + 39 * kept, "[FAIL]")); /* the tail */
    tnd_proc_result_free(&res);
}

/* A line leaves the capture in pieces, as the ring turns and as the pipe
 * delivers it; a long one is cut to its first 1 KiB. */
static void failure_lines_are_read_across_pieces(void **state)
{
    char script[512];
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("sh", "-c", script), .output_cap = 64};
    const char *m;

    (void)state;
    snprintf(script, sizeof(script),
             "printf 'start\\n'; head -c 300000 /dev/zero | tr '\\0' a; echo; "
             "printf '[FA'; printf 'IL] spl'; printf 'it line\\n'; "
             "printf '[FAIL] '; head -c 3000 /dev/zero | tr '\\0' b; echo; "
             "printf 'Segmentation fault\\r\\n'; "
             "head -c 5000 /dev/zero | tr '\\0' c; echo; echo end");
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    m = strstr(res.output, " ...]\n");
    assert_non_null(m);
    assert_non_null(strstr(res.output, "bytes omitted; these 3 lines among "
                                       "them name a failure ...]\n"));
    assert_memory_equal(m + 6, "[FAIL] split line\n[FAIL] bbb", 28);
    m = strstr(m, " [...]\nSegmentation fault\n");
    assert_non_null(m);
    /* the long line: its first 1024 bytes */
    assert_memory_equal(m - 3, "bbb", 3);
    assert_non_null(strstr(res.output, "[FAIL] split line\n[FAIL] "));
    assert_int_equal(strstr(res.output, " [...]\n") -
                         strstr(res.output, "[FAIL] bbb"),
                     1024);
    assert_string_equal(res.output + res.output_len - 4, "end\n");
    tnd_proc_result_free(&res);
}

static void death_by_signal_is_reported(void **state)
{
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("sh", "-c", "kill -9 $$")};

    (void)state;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.status, TND_PROC_SIGNALED);
    assert_int_equal(res.signal, SIGKILL);
    assert_string_equal(tnd_proc_describe(&res), "killed by signal 9 (Killed)");
    tnd_proc_result_free(&res);
}

/* The process running a program is killed outright (an agent's SIGKILL):
 * the program goes at once, rather than run on with nobody left to
 * enforce its deadline or read its output. */
static void the_program_dies_with_the_process_running_it(void **state)
{
    char script[3 * PATH_MAX + 64];
    pid_t runner, program;

    (void)state;
    unlink(pid_file);
    snprintf(script, sizeof(script),
             "echo $$ > %s.new && mv %s.new %s && exec sleep 60", pid_file,
             pid_file, pid_file);
    runner = fork();
    assert_true(runner >= 0);
    if (runner == 0) {
        tnd_proc_result res;
        tnd_proc_spec spec = {.argv = ARGV("sh", "-c", script)};

        tnd_proc_run(&res, &spec);
        _exit(0);
    }
    wait_for_file(pid_file);
    program = read_pid_file();
    assert_int_equal(kill(runner, SIGKILL), 0);
    assert_int_equal(waitpid(runner, NULL, 0), runner);
    assert_gone(program);
}

static void file_size_limit_stops_a_big_write(void **state)
{
    char script[PATH_MAX + 64];
    tnd_proc_result res;
    tnd_proc_spec spec = {
        .argv = ARGV("sh", "-c", script),
        .rlimit_fsize_bytes = 4096,
    };
    struct stat st;

    (void)state;
    snprintf(script, sizeof(script), "head -c 100000 /dev/zero > %s", big_file);
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_false(res.status == TND_PROC_EXITED && res.exit_code == 0);
    assert_int_equal(stat(big_file, &st), 0);
    assert_true(st.st_size <= 4096);
    tnd_proc_result_free(&res);
}

static void describe_says_how_it_ended(void **state)
{
    tnd_proc_result r = {0};

    (void)state;
    r.status = TND_PROC_EXITED;
    r.exit_code = 2;
    assert_string_equal(tnd_proc_describe(&r), "exit 2");
    r.status = TND_PROC_SIGNALED;
    r.signal = SIGKILL;
    assert_string_equal(tnd_proc_describe(&r), "killed by signal 9 (Killed)");
    r.status = TND_PROC_TIMEOUT;
    r.duration_ms = 1500;
    assert_string_equal(tnd_proc_describe(&r), "timed out after 1.5s");
    r.status = TND_PROC_CANCELLED;
    assert_string_equal(tnd_proc_describe(&r), "cancelled");
    r.status = TND_PROC_STOPPED;
    assert_string_equal(tnd_proc_describe(&r), "stopped");
    tnd_proc_result_free(&r); /* zeroed: fine */
}

typedef struct watch_log {
    int calls, stop_at, pid;
} watch_log;

static int watch_counting(int pid, void *payload)
{
    watch_log *w = payload;

    w->pid = pid;
    return ++w->calls >= w->stop_at;
}

/* The watch is asked while the program runs, about once a tick however
 * much it writes; when it says stop, the program's group is killed at
 * once and the run says it was stopped. */
static void a_watch_can_stop_the_run(void **state)
{
    tnd_proc_spec spec = {0};
    tnd_proc_result r;
    watch_log w = {0, 3, 0};
    int64_t t0 = tnd_now_ms();

    (void)state;
    spec.argv = ARGV("/bin/sh", "-c", "yes | head -c 100000000; sleep 30");
    spec.watch = watch_counting;
    spec.watch_payload = &w;
    spec.output_cap = 1024;
    assert_int_equal(tnd_proc_run(&r, &spec), 0);
    assert_int_equal(r.status, TND_PROC_STOPPED);
    assert_int_equal(w.calls, 3);
    assert_true(w.pid > 0);
    /* three looks 50 ms apart, not one for each read of its output */
    assert_true(r.duration_ms >= 90);
    assert_true(tnd_now_ms() - t0 < 5000);
    assert_true(kill(w.pid, 0) < 0); /* the group went with it */
    tnd_proc_result_free(&r);

    /* a program that ends first is not stopped */
    w.calls = 0;
    w.stop_at = 1000;
    spec.argv = ARGV("/bin/sh", "-c", "exit 4");
    assert_int_equal(tnd_proc_run(&r, &spec), 0);
    assert_int_equal(r.status, TND_PROC_EXITED);
    assert_int_equal(r.exit_code, 4);
    tnd_proc_result_free(&r);
}

/* output_stop: stdout past it stops the program at once (a model
 * command that floods it ran to its deadline); within it, nothing. */
static void too_much_output_stops_the_run(void **state)
{
    tnd_proc_spec spec = {0};
    tnd_proc_result r;
    int64_t t0 = tnd_now_ms();

    (void)state;
    spec.argv = ARGV("/bin/sh", "-c", "yes; sleep 30");
    spec.output_cap = 1024;
    spec.output_stop = 100000;
    spec.timeout_ms = 30000;
    assert_int_equal(tnd_proc_run(&r, &spec), 0);
    assert_int_equal(r.status, TND_PROC_STOPPED);
    assert_true(r.output_total > 100000);
    assert_true(tnd_now_ms() - t0 < 10000);
    tnd_proc_result_free(&r);

    spec.argv = ARGV("/bin/sh", "-c", "head -c 100000 /dev/zero; exit 3");
    assert_int_equal(tnd_proc_run(&r, &spec), 0);
    assert_int_equal(r.status, TND_PROC_EXITED);
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.output_total, 100000);
    tnd_proc_result_free(&r);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(pid_file, sizeof(pid_file), "%s/pid", tmpdir);
    snprintf(ready_file, sizeof(ready_file), "%s/ready", tmpdir);
    snprintf(big_file, sizeof(big_file), "%s/big", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(pid_file);
    unlink(ready_file);
    unlink(big_file);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exit_codes_are_reported),
        cmocka_unit_test(stdout_and_stderr_are_kept_apart),
        cmocka_unit_test(merged_stderr_keeps_the_order_written),
        cmocka_unit_test(input_is_fed_to_stdin),
        cmocka_unit_test(big_input_to_a_program_that_ignores_it_does_not_hang),
        cmocka_unit_test(runs_in_the_given_directory),
        cmocka_unit_test(missing_program_is_an_error_naming_it),
        cmocka_unit_test(missing_directory_is_an_error_naming_it),
        cmocka_unit_test(timeout_kills_the_program),
        cmocka_unit_test(timeout_kills_the_whole_process_group),
        cmocka_unit_test(timeout_reaches_a_program_that_left_its_group),
        cmocka_unit_test(term_ignored_means_kill_after_the_grace),
        cmocka_unit_test(background_grandchild_does_not_hold_up_a_run),
        cmocka_unit_test(cancel_from_another_thread_stops_the_run),
        cmocka_unit_test(output_cap_keeps_head_and_tail),
        cmocka_unit_test(a_failure_in_the_omitted_middle_is_kept),
        cmocka_unit_test(failure_lines_from_the_middle_are_bounded),
        cmocka_unit_test(failure_lines_are_read_across_pieces),
        cmocka_unit_test(death_by_signal_is_reported),
        cmocka_unit_test(the_program_dies_with_the_process_running_it),
        cmocka_unit_test(file_size_limit_stops_a_big_write),
        cmocka_unit_test(describe_says_how_it_ended),
        cmocka_unit_test(a_watch_can_stop_the_run),
        cmocka_unit_test(too_much_output_stops_the_run),
    };

    /* Orphans of killed process groups are reparented to the nearest
     * subreaper; in a container whose init never reaps they would linger
     * as zombies and kill(pid, 0) would still succeed. Be that reaper. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return cmocka_run_group_tests(tests, setup, teardown);
}
