/* Unit tests for common/fs: reading files a person names.
 *
 * tnd_fs_read takes paths from the command line and agents.yaml, so it
 * must refuse what is not a regular file (a FIFO would block it forever,
 * /dev/zero never ends) and what is too large, before reading;
 * tnd_fs_read_fd reads stdin, which may be a pipe, capped the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "tests/unit/deep_chain.h"

static char tmpdir[] = "/tmp/tnd-test-fs-XXXXXX";

/* tmpdir/name, in a static buffer. */
static const char *in_tmp(const char *name)
{
    static char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    return path;
}

/* A join puts one slash between the parts, none more when the first
 * ends in one. */
static void join_puts_one_slash_between(void **state)
{
    static const char *const cases[][3] = {
        {"a", "b", "a/b"}, {"a/", "b", "a/b"},        {"/", "etc", "/etc"},
        {"", "b", "/b"},   {"a/b", "c/d", "a/b/c/d"}, {"a", "", "a/"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *j = tnd_fs_join(cases[i][0], cases[i][1]);
        assert_string_equal(j, cases[i][2]);
        free(j);
    }
}

/* A replacing write never writes through a link planted at its
 * temporary name (a directory another user may write in): it wrote the
 * data where the link pointed. Links are planted at every name the next
 * writes of this process may take. */
static void a_replacing_write_follows_no_planted_link(void **state)
{
    char *victim = tnd_xstrdup(in_tmp("victim")), *text;
    char *path = tnd_xstrdup(in_tmp("change.diff"));
    char name[4096];

    (void)state;
    assert_int_equal(tnd_fs_write(victim, "mine\n", 5), 0);
    snprintf(name, sizeof(name), "%s.tmp.%ld", path, (long)getpid());
    assert_int_equal(symlink(victim, name), 0); /* the name it had */
    for (unsigned n = 0; n < 2048; n++) {
        snprintf(name, sizeof(name), "%s.tmp.%ld.%u", path, (long)getpid(), n);
        assert_int_equal(symlink(victim, name), 0);
    }
    assert_int_equal(tnd_fs_write_atomic(path, "planted?\n", 9), 0);
    assert_int_equal(tnd_fs_read(&text, NULL, victim, 64), 0);
    assert_string_equal(text, "mine\n");
    free(text);
    assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
    assert_string_equal(text, "planted?\n");
    free(text);
    for (unsigned n = 0; n < 2048; n++) {
        snprintf(name, sizeof(name), "%s.tmp.%ld.%u", path, (long)getpid(), n);
        unlink(name);
    }
    snprintf(name, sizeof(name), "%s.tmp.%ld", path, (long)getpid());
    unlink(name);
    unlink(path);
    unlink(victim);
    free(path);
    free(victim);
}

/* tnd_fs_read of path with cap must fail with exactly expect. */
static void assert_refused(const char *path, size_t cap, const char *expect)
{
    char *text = (char *)1;

    assert_int_equal(tnd_fs_read(&text, NULL, path, cap), -1);
    assert_null(text);
    assert_string_equal(tnd_error_last(), expect);
}

/* Both replacing writes leave the new contents and no temporary file. */
static void replacing_writes_leave_the_new_contents_alone(void **state)
{
    int (*writers[2])(const char *, const void *,
                      size_t) = {tnd_fs_write_atomic, tnd_fs_write_replace};
    const char *path = in_tmp("view.md");
    char *text;
    DIR *d;
    struct dirent *e;
    int files;

    (void)state;
    for (int w = 0; w < 2; w++) {
        assert_int_equal(writers[w](path, "old\n", 4), 0);
        assert_int_equal(writers[w](path, "new contents\n", 13), 0);
        assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
        assert_string_equal(text, "new contents\n");
        free(text);
        files = 0;
        assert_non_null(d = opendir(tmpdir));
        while ((e = readdir(d)) != NULL)
            if (strstr(e->d_name, "view.md") &&
                strcmp(e->d_name, ".view.md.spare") != 0)
                files++;
        closedir(d);
        assert_int_equal(files, 1);
        assert_int_equal(unlink(path), 0);
    }
}

/* A view rewritten with the contents it holds stays the same file; new
 * contents, or a symlink in its place, are replaced. */
static void replace_skips_a_file_that_holds_the_contents(void **state)
{
    char path[PATH_MAX], other[PATH_MAX];
    struct stat a, b;
    char *text;

    (void)state;
    snprintf(path, sizeof(path), "%s", in_tmp("same.md"));
    snprintf(other, sizeof(other), "%s", in_tmp("other.md"));
    assert_int_equal(tnd_fs_write_replace(path, "same\n", 5), 0);
    assert_int_equal(stat(path, &a), 0);
    assert_int_equal(tnd_fs_write_replace(path, "same\n", 5), 0);
    assert_int_equal(stat(path, &b), 0);
    assert_true(a.st_ino == b.st_ino);
    assert_int_equal(tnd_fs_write_replace(path, "samE\n", 5), 0);
    assert_int_equal(stat(path, &b), 0);
    assert_true(a.st_ino != b.st_ino); /* a reader of the old one keeps it */
    assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
    assert_string_equal(text, "samE\n");
    free(text);
    /* a symlink to a file with the same contents is replaced by a file */
    assert_int_equal(tnd_fs_write(other, "samE\n", 5), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(other, path), 0);
    assert_int_equal(tnd_fs_write_replace(path, "samE\n", 5), 0);
    assert_int_equal(lstat(path, &b), 0);
    assert_true(S_ISREG(b.st_mode));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(unlink(other), 0);
}

/* A swap (now.json's write) does not compare first: the same text is
 * written again, through the spare; a link planted at path is replaced,
 * never written through. */
static void swap_writes_without_comparing(void **state)
{
    char path[PATH_MAX], *text;
    struct stat a, b;

    (void)state;
    snprintf(path, sizeof(path), "%s", in_tmp("now.json"));
    assert_int_equal(tnd_fs_write_swap(path, "{}", 2), 0);
    assert_int_equal(tnd_fs_write_swap(path, "{\"a\":1}", 7), 0);
    assert_int_equal(lstat(path, &a), 0);
    assert_int_equal(tnd_fs_write_swap(path, "{\"a\":1}", 7), 0);
    assert_int_equal(lstat(path, &b), 0);
    assert_true(a.st_ino != b.st_ino); /* written again: the spare's inode */
    assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
    assert_string_equal(text, "{\"a\":1}");
    free(text);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(in_tmp("target"), path), 0);
    assert_int_equal(tnd_fs_write_swap(path, "{}", 2), 0);
    assert_int_equal(lstat(path, &a), 0);
    assert_true(S_ISREG(a.st_mode));
    assert_int_equal(access(in_tmp("target"), F_OK), -1);
    unlink(path);
    unlink(in_tmp(".now.json.spare"));
}

/* Changing a view swaps it with its spare: two inodes serve every
 * update, none is made or freed after the first two, and each holds the
 * contents written (the spare the ones before). */
static void replace_swaps_with_a_spare(void **state)
{
    char path[PATH_MAX], spare[PATH_MAX], want[32];
    ino_t seen[2] = {0, 0};
    struct stat st;
    char *text;

    (void)state;
    snprintf(path, sizeof(path), "%s", in_tmp("swap.md"));
    snprintf(spare, sizeof(spare), "%s", in_tmp(".swap.md.spare"));
    for (int i = 0; i < 6; i++) {
        snprintf(want, sizeof(want), "update %d\n", i);
        assert_int_equal(tnd_fs_write_replace(path, want, strlen(want)), 0);
        assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
        assert_string_equal(text, want);
        free(text);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        if (i < 2)
            seen[i] = st.st_ino;
        else
            assert_true(st.st_ino == seen[i % 2]);
        if (i > 0) {
            snprintf(want, sizeof(want), "update %d\n", i - 1);
            assert_int_equal(tnd_fs_read(&text, NULL, spare, 64), 0);
            assert_string_equal(text, want);
            free(text);
        }
    }
    assert_true(seen[0] != seen[1]);
    /* a spare that is a symlink is never written through */
    assert_int_equal(unlink(spare), 0);
    assert_int_equal(symlink(in_tmp("elsewhere"), spare), 0);
    assert_int_equal(tnd_fs_write_replace(path, "after\n", 6), 0);
    assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
    assert_string_equal(text, "after\n");
    free(text);
    assert_int_equal(access(in_tmp("elsewhere"), F_OK), -1);
    assert_int_equal(lstat(spare, &st), 0); /* and it is a file again */
    assert_true(S_ISREG(st.st_mode));
    unlink(spare);
    assert_int_equal(unlink(path), 0);
}

/* A spare is written over and cut to length (never emptied first: ext4
 * then writes the file out at close): shorter and longer contents, and
 * none, come out exactly. */
static void replace_cuts_a_longer_spare_to_length(void **state)
{
    const char *texts[] = {"a long first text\n",
                           "short\n",
                           "a longer third text than both\n",
                           "x\n",
                           "",
                           "back again\n"};
    char path[PATH_MAX];
    char *text;
    size_t len;

    (void)state;
    snprintf(path, sizeof(path), "%s", in_tmp("cut.md"));
    for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
        assert_int_equal(tnd_fs_write_replace(path, texts[i], strlen(texts[i])),
                         0);
        assert_int_equal(tnd_fs_read(&text, &len, path, 64), 0);
        assert_int_equal(len, strlen(texts[i]));
        assert_memory_equal(text, texts[i], len);
        free(text);
    }
    unlink(in_tmp(".cut.md.spare"));
    assert_int_equal(unlink(path), 0);
}

static void reads_a_file_whole(void **state)
{
    const char *path = in_tmp("small.txt");
    char *text;
    size_t len;

    (void)state;
    assert_int_equal(tnd_fs_write(path, "a\0b\n", 4), 0);
    assert_int_equal(tnd_fs_read(&text, &len, path, 4), 0);
    assert_int_equal(len, 4);
    assert_memory_equal(text, "a\0b\n", 5); /* NUL-terminated */
    free(text);
    /* empty is fine, and still a C string */
    assert_int_equal(tnd_fs_write(path, "", 0), 0);
    assert_int_equal(tnd_fs_read(&text, NULL, path, 0), 0);
    assert_string_equal(text, "");
    free(text);
    unlink(path);
}

/* Directories are listed, empty ones included, sorted, without .git
 * and without following a link; files and links are not; a tree with
 * more directories than allowed is an error naming it. */
static void lists_the_directories(void **state)
{
    char **dirs = NULL;
    size_t n = 0;

    (void)state;
    assert_int_equal(mkdir(in_tmp("ls"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("ls/src/empty"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("ls/build"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("ls/.git/objects"), 0700), 0);
    assert_int_equal(tnd_fs_write(in_tmp("ls/src/main.c"), "x", 1), 0);
    assert_int_equal(symlink("src", in_tmp("ls/link")), 0);
    assert_int_equal(tnd_fs_list_dirs(&dirs, &n, in_tmp("ls"), 10), 0);
    assert_int_equal(n, 3);
    assert_string_equal(dirs[0], "build");
    assert_string_equal(dirs[1], "src");
    assert_string_equal(dirs[2], "src/empty");
    assert_null(dirs[3]);
    tnd_str_list_free(&dirs);
    assert_int_equal(tnd_fs_list_dirs(&dirs, &n, in_tmp("ls"), 2), -1);
    assert_null(dirs);
    assert_non_null(strstr(tnd_error_last(), "holds more than 2 directories"));
    assert_int_equal(tnd_fs_rmtree(in_tmp("ls")), 0);
}

/* A tree is counted as the reviewers' tree lists it: files and links
 * (not followed), in every directory but .git and the top-level names
 * skipped; the count stops one past the most asked for, so a tree too
 * large for a task is told before it is copied. */
static void counts_the_files_and_links(void **state)
{
    const char *const skip[] = {".tandem", NULL};
    size_t n = 0;

    (void)state;
    assert_int_equal(tnd_fs_mkdirs(in_tmp("cnt/src/empty"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("cnt/.git/objects"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("cnt/.tandem"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("cnt/sub/.git"), 0700), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/src/a.c"), "x", 1), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/src/b.c"), "", 0), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/top"), "", 0), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/.git/HEAD"), "", 0), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/sub/.git/HEAD"), "", 0), 0);
    assert_int_equal(tnd_fs_write(in_tmp("cnt/.tandem/s"), "", 0), 0);
    assert_int_equal(symlink("src", in_tmp("cnt/link")), 0);
    assert_int_equal(tnd_fs_count(&n, in_tmp("cnt"), skip, 10), 0);
    assert_int_equal(n, 4); /* src/a.c, src/b.c, top, link */
    assert_int_equal(tnd_fs_count(&n, in_tmp("cnt"), skip, 4), 0);
    assert_int_equal(n, 4);
    /* past the most: one more than it, not an error */
    assert_int_equal(tnd_fs_count(&n, in_tmp("cnt"), skip, 3), 0);
    assert_int_equal(n, 4);
    assert_int_equal(tnd_fs_count(&n, in_tmp("cnt"), skip, 1), 0);
    assert_int_equal(n, 2);
    assert_int_equal(tnd_fs_count(&n, in_tmp("cnt"), NULL, 10), 0);
    assert_int_equal(n, 5); /* .tandem/s as well */
    assert_int_equal(tnd_fs_count(&n, in_tmp("nothing-here"), NULL, 10), -1);
    assert_non_null(strstr(tnd_error_last(), "cannot read directory"));
    assert_int_equal(tnd_fs_rmtree(in_tmp("cnt")), 0);
}

/* mkdirs makes every missing part (with doubled and trailing slashes),
 * succeeds on a directory that exists, and names the part in the way
 * when a file is. */
static void mkdirs_makes_the_missing_parts(void **state)
{
    char expect[PATH_MAX + 64];
    struct stat st;

    (void)state;
    assert_int_equal(tnd_fs_mkdirs(in_tmp("mk/a//b/c/"), 0700), 0);
    assert_int_equal(stat(in_tmp("mk/a/b/c"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("mk/a/b/c"), 0700), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("mk/a/b/d"), 0700), 0);
    assert_true(tnd_fs_is_dir(in_tmp("mk/a/b/d")));

    assert_int_equal(tnd_fs_write(in_tmp("mk/file"), "x", 1), 0);
    assert_int_equal(tnd_fs_mkdirs(in_tmp("mk/file/sub/deeper"), 0700), -1);
    snprintf(expect, sizeof(expect),
             "cannot create directory %s: ", in_tmp("mk/file/sub"));
    assert_non_null(strstr(tnd_error_last(), expect));
    assert_int_equal(tnd_fs_mkdirs(in_tmp("mk/file"), 0700), -1);
    snprintf(expect, sizeof(expect), "%s exists and is not a directory",
             in_tmp("mk/file"));
    assert_string_equal(tnd_error_last(), expect);
    assert_int_equal(tnd_fs_mkdirs("", 0700), -1);
    assert_int_equal(tnd_fs_rmtree(in_tmp("mk")), 0);
}

static void a_missing_file_is_not_found(void **state)
{
    char *text = (char *)1;
    char expect[PATH_MAX + 32];

    (void)state;
    assert_int_equal(tnd_fs_read(&text, NULL, in_tmp("none"), 10),
                     TND_ENOTFOUND);
    assert_null(text);
    snprintf(expect, sizeof(expect), "%s: no such file", in_tmp("none"));
    assert_string_equal(tnd_error_last(), expect);
}

/* A FIFO with no writer: open() for reading would wait for one forever.
 * The alarm only turns that hang into a failed test; it is no deadline
 * (the call returns at once or never). */
static void a_fifo_is_refused_without_blocking(void **state)
{
    char expect[PATH_MAX + 64];
    const char *path = in_tmp("fifo");

    (void)state;
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(expect, sizeof(expect), "%s is not a regular file (it is a FIFO)",
             path);
    alarm(60);
    assert_refused(path, 1024, expect);
    alarm(0);
    unlink(path);
}

static void a_directory_is_refused(void **state)
{
    char expect[PATH_MAX + 64];

    (void)state;
    snprintf(expect, sizeof(expect),
             "%s is not a regular file (it is a directory)", tmpdir);
    assert_refused(tmpdir, 1024, expect);
}

/* /dev/zero never ends; /dev/null would look empty. Both are devices. */
static void a_device_is_refused(void **state)
{
    (void)state;
    alarm(60);
    assert_refused("/dev/zero", 1 << 20,
                   "/dev/zero is not a regular file (it is a character "
                   "device)");
    assert_refused("/dev/null", 1 << 20,
                   "/dev/null is not a regular file (it is a character "
                   "device)");
    alarm(0);
}

/* Over the cap is refused, by the size fstat gives before any read. */
static void a_file_over_the_cap_is_refused_before_reading(void **state)
{
    const char *path = in_tmp("big");
    char expect[PATH_MAX + 64];
    char *text;

    (void)state;
    assert_int_equal(tnd_fs_write(path, "12345", 5), 0);
    snprintf(expect, sizeof(expect), "%s is larger than 4 bytes", path);
    assert_refused(path, 4, expect);
    assert_int_equal(tnd_fs_read(&text, NULL, path, 5), 0);
    assert_string_equal(text, "12345");
    free(text);
    /* a gigabyte (sparse): the size alone says no */
    assert_int_equal(truncate(path, 1L << 30), 0);
    snprintf(expect, sizeof(expect), "%s is larger than 1048576 bytes", path);
    assert_refused(path, 1 << 20, expect);
    unlink(path);
}

/* The check before a run: the same verdicts as tnd_fs_read, without
 * opening anything. */
static void check_regular_says_what_a_path_is(void **state)
{
    const char *path = in_tmp("plain");
    char expect[PATH_MAX + 64];

    (void)state;
    assert_int_equal(tnd_fs_write(path, "x", 1), 0);
    assert_int_equal(tnd_fs_check_regular(path), 0);
    unlink(path);
    assert_int_equal(tnd_fs_check_regular(path), TND_ENOTFOUND);
    snprintf(expect, sizeof(expect), "%s: no such file", path);
    assert_string_equal(tnd_error_last(), expect);

    path = in_tmp("fifo2");
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(tnd_fs_check_regular(path), -1);
    snprintf(expect, sizeof(expect), "%s is not a regular file (it is a FIFO)",
             path);
    assert_string_equal(tnd_error_last(), expect);
    unlink(path);
    assert_int_equal(tnd_fs_check_regular(tmpdir), -1);
    snprintf(expect, sizeof(expect),
             "%s is not a regular file (it is a directory)", tmpdir);
    assert_string_equal(tnd_error_last(), expect);
    assert_int_equal(tnd_fs_check_regular("/dev/zero"), -1);
    assert_string_equal(tnd_error_last(), "/dev/zero is not a regular file "
                                          "(it is a character device)");
}

/* A pipe, as stdin is for `--task-file -`: read to its end, capped, and
 * never more than cap + 1 bytes taken from it. */
static void a_pipe_is_read_to_its_end_and_capped(void **state)
{
    char chunk[300], *text = (char *)1;
    int p[2];
    size_t len;

    (void)state;
    memset(chunk, 'x', sizeof(chunk));
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "task\n", 5), 5);
    close(p[1]);
    assert_int_equal(tnd_fs_read_fd(&text, &len, p[0], "stdin", 5), 0);
    assert_int_equal(len, 5);
    assert_string_equal(text, "task\n");
    free(text);
    close(p[0]);

    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], chunk, sizeof(chunk)), sizeof(chunk));
    close(p[1]);
    assert_int_equal(tnd_fs_read_fd(&text, NULL, p[0], "stdin", 100), -1);
    assert_null(text);
    assert_string_equal(tnd_error_last(), "stdin is larger than 100 bytes");
    /* 101 bytes were taken; the rest is still in the pipe */
    assert_int_equal(read(p[0], chunk, sizeof(chunk)), 300 - 101);
    close(p[0]);
}

/* An endless descriptor stops at the cap. */
static void an_endless_descriptor_stops_at_the_cap(void **state)
{
    char *text = (char *)1;
    int fd = open("/dev/zero", O_RDONLY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(tnd_fs_read_fd(&text, NULL, fd, "stdin", 1 << 20), -1);
    assert_null(text);
    assert_string_equal(tnd_error_last(), "stdin is larger than 1048576 bytes");
    close(fd);
}

/* A directory as stdin (`tandem run --task-file - < dir`) is an error,
 * not an empty task. */
static void a_directory_descriptor_is_an_error(void **state)
{
    char *text = (char *)1;
    int fd = open(tmpdir, O_RDONLY | O_DIRECTORY);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(tnd_fs_read_fd(&text, NULL, fd, "stdin", 100), -1);
    assert_null(text);
    assert_string_equal(tnd_error_last(), "cannot read stdin: Is a directory");
    close(fd);
}

/* A non-blocking pipe (a shell may hand one down) is waited for, not
 * taken as empty or as an error. */
static void a_non_blocking_pipe_is_waited_for(void **state)
{
    char *text;
    int p[2];
    pid_t child;

    (void)state;
    assert_int_equal(pipe(p), 0);
    assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(p[0]);
        _exit(write(p[1], "later", 5) == 5 ? 0 : 1);
    }
    close(p[1]);
    assert_int_equal(tnd_fs_read_fd(&text, NULL, p[0], "stdin", 100), 0);
    assert_string_equal(text, "later");
    free(text);
    close(p[0]);
    assert_int_equal(waitpid(child, NULL, 0), child);
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

/* Whether another open file description of path can take the lock. */
static int can_lock(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

    assert_true(fd >= 0);
    ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return ok;
}

/* A tree deeper than the copy goes is refused, not a crash (2,000
 * nested directories overflowed the stack). */
static void a_tree_too_deep_is_refused(void **state)
{
    char src[PATH_MAX], dst[PATH_MAX];

    (void)state;
    snprintf(src, sizeof(src), "%s/deep", tmpdir);
    snprintf(dst, sizeof(dst), "%s/deep-copy", tmpdir);
    deep_chain(AT_FDCWD, src, 300, NULL);
    assert_int_equal(tnd_fs_copytree(src, dst, NULL, 1 << 20), -1);
    assert_non_null(strstr(tnd_error_last(), "more than 256 directories deep"));
    assert_int_equal(tnd_fs_rmtree(dst), 0);
    assert_int_equal(tnd_fs_rmtree(src), 0);
}

/* A tree deeper than the descriptors a process may open is removed all
 * the same: a skill (model-written code run by make test) made one
 * 30,000 deep in seconds, and the workspace could be neither reset for
 * the next attempt ("Too many open files": the run failed) nor removed
 * at the end (left behind in the runtime directory). Its levels are
 * closed to us too, as a build may leave them. */
static void a_tree_deeper_than_the_open_files_is_removed(void **state)
{
    struct rlimit was, low;
    char top[PATH_MAX];
    int fd;

    (void)state;
    snprintf(top, sizeof(top), "%s/deeper", tmpdir);
    deep_chain(AT_FDCWD, top, 1000,
               &(deep_chain_extras){.files = 1000, .closed_every = 100});
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    low = was;
    low.rlim_cur = 200;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    fd = tnd_fs_rmtree(top);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    if (fd != 0)
        fail_msg("%s", tnd_error_last());
    assert_int_equal(access(top, F_OK), -1);
}

static void a_new_lock_is_held_until_its_descriptor_closes(void **state)
{
    int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, again;
    char text[64] = "", want[64];
    ssize_t n;

    (void)state;
    assert_true(dfd >= 0);
    assert_true((fd = tnd_fs_lock_new(dfd, "held.lock")) >= 0);
    assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    assert_false(can_lock(in_tmp("held.lock")));
    /* the pid, for a person looking */
    n = pread(fd, text, sizeof(text) - 1, 0);
    assert_true(n > 0);
    snprintf(want, sizeof(want), "%ld\n", (long)getpid());
    assert_string_equal(text, want);
    /* one that exists is not taken over */
    assert_int_equal(tnd_fs_lock_new(dfd, "held.lock"), -1);
    assert_int_equal(errno, EEXIST);
    close(fd);
    assert_true(can_lock(in_tmp("held.lock")));
    /* nor a link in its place */
    assert_int_equal(symlink("held.lock", in_tmp("link.lock")), 0);
    again = tnd_fs_lock_new(dfd, "link.lock");
    assert_int_equal(again, -1);
    unlink(in_tmp("held.lock"));
    unlink(in_tmp("link.lock"));
    close(dfd);
}

/* A file or directory made held: its name made as mkstemps and
 * mkdtemp make one, locked until the descriptor closes, so a sweep
 * tells it from one a killed process left however old it is. */
static void a_made_file_or_directory_is_held_until_closed(void **state)
{
    char file[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    int fd, dfd;

    (void)state;
    snprintf(file, sizeof(file), "%s", in_tmp("held-XXXXXX.diff"));
    assert_true((fd = tnd_fs_mkstemps_held(file, 5)) >= 0);
    assert_null(strstr(file, "XXXXXX"));
    assert_string_equal(file + strlen(file) - 5, ".diff");
    assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    assert_int_equal(lstat(file, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(write(fd, "x", 1), 1);
    assert_false(can_lock(file));
    close(fd);
    assert_true(can_lock(file));
    unlink(file);

    snprintf(dir, sizeof(dir), "%s", in_tmp("held-XXXXXX"));
    assert_true((dfd = tnd_fs_mkdtemp_held(dir)) >= 0);
    assert_null(strstr(dir, "XXXXXX"));
    assert_int_equal(fcntl(dfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_false(can_lock(dir));
    close(dfd);
    assert_true(can_lock(dir));
    rmdir(dir);
}

/* The soft limit of open files goes up to what is asked, never past it
 * nor past the hard limit; 0 only reads it. */
static void the_files_limit_is_raised_as_far_as_asked(void **state)
{
    struct rlimit was, now;
    unsigned long long got;

    (void)state;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_cur == RLIM_INFINITY || was.rlim_max == RLIM_INFINITY ||
        was.rlim_max < was.rlim_cur + 8) {
        print_message("no room between the soft and hard limits here\n");
        return;
    }
    assert_int_equal(tnd_fs_files_raise(0), was.rlim_cur);
    got = tnd_fs_files_raise(was.rlim_cur + 8);
    assert_int_equal(got, was.rlim_cur + 8);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_int_equal(now.rlim_cur, was.rlim_cur + 8);
    assert_int_equal(tnd_fs_files_raise(was.rlim_cur), was.rlim_cur + 8);
    assert_int_equal(tnd_fs_files_raise((unsigned long long)was.rlim_max + 1),
                     was.rlim_max);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(join_puts_one_slash_between),
        cmocka_unit_test(replace_skips_a_file_that_holds_the_contents),
        cmocka_unit_test(replace_swaps_with_a_spare),
        cmocka_unit_test(swap_writes_without_comparing),
        cmocka_unit_test(replace_cuts_a_longer_spare_to_length),
        cmocka_unit_test(reads_a_file_whole),
        cmocka_unit_test(lists_the_directories),
        cmocka_unit_test(mkdirs_makes_the_missing_parts),
        cmocka_unit_test(replacing_writes_leave_the_new_contents_alone),
        cmocka_unit_test(a_missing_file_is_not_found),
        cmocka_unit_test(a_fifo_is_refused_without_blocking),
        cmocka_unit_test(a_directory_is_refused),
        cmocka_unit_test(a_device_is_refused),
        cmocka_unit_test(a_file_over_the_cap_is_refused_before_reading),
        cmocka_unit_test(check_regular_says_what_a_path_is),
        cmocka_unit_test(a_pipe_is_read_to_its_end_and_capped),
        cmocka_unit_test(an_endless_descriptor_stops_at_the_cap),
        cmocka_unit_test(a_directory_descriptor_is_an_error),
        cmocka_unit_test(a_non_blocking_pipe_is_waited_for),
        cmocka_unit_test(a_new_lock_is_held_until_its_descriptor_closes),
        cmocka_unit_test(a_made_file_or_directory_is_held_until_closed),
        cmocka_unit_test(a_tree_too_deep_is_refused),
        cmocka_unit_test(a_tree_deeper_than_the_open_files_is_removed),
        cmocka_unit_test(the_files_limit_is_raised_as_far_as_asked),
        cmocka_unit_test(counts_the_files_and_links),
        cmocka_unit_test(a_replacing_write_follows_no_planted_link),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
