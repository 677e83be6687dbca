/* The reviewed tree against git apply's (see gitapply.h). */
#include "orchestrator/gitapply.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "proto/code.h"
#include "skills/env.h"
#include "skills/proc.h"

/* git apply's list of names: a few bytes a file, bounded by the patch */
#define NAMES_CAP ((size_t)64 << 20)

/* The environment git apply runs in: the scrubbed one without any of
 * git's own variables (GIT_DIR a hook has; GIT_CONFIG_PARAMETERS and
 * GIT_CONFIG_COUNT/KEY_n/VALUE_n that `git -c` passes a hook), HOME and
 * XDG_CONFIG_HOME at dir, which holds no config or attributes (the
 * user's `* text eol=crlf` made git write other bytes than the patch
 * says), and the system's files not read. */
static char **environment(const char *dir)
{
    static const char *const keep_out[] = {"HOME", "XDG_CONFIG_HOME", "LC_ALL",
                                           NULL};
    char **all = tnd_env_scrubbed(keep_out), **envp;
    size_t n = 0, k = 0;

    while (all[n])
        n++;
    envp = tnd_xcalloc(n + 9, sizeof(*envp));
    for (size_t i = 0; i < n; i++) {
        if (strncmp(all[i], "GIT_", 4) == 0)
            free(all[i]);
        else
            envp[k++] = all[i];
    }
    free(all);
    envp[k++] = tnd_xstrdup("LC_ALL=C");
    envp[k++] = tnd_xasprintf("HOME=%s", dir);
    envp[k++] = tnd_xasprintf("XDG_CONFIG_HOME=%s", dir);
    envp[k++] = tnd_xasprintf("GIT_CEILING_DIRECTORIES=%s", dir);
    envp[k++] = tnd_xstrdup("GIT_CONFIG_NOSYSTEM=1");
    envp[k++] = tnd_xstrdup("GIT_ATTR_NOSYSTEM=1");
    envp[k++] = tnd_xstrdup("GIT_CONFIG_GLOBAL=/dev/null");
    envp[k] = NULL;
    return envp;
}

/* git apply in dir, reading the patch on stdin, as on a machine of no
 * one's: no repository around dir, no user or system config or
 * attributes (see environment), messages in English. 0 with its stdout
 * in *out and its length in *out_len (both may be NULL); 1 when it ran and
 * failed, *why its stderr; -1 when it could not run. */
static int git_apply(char **out, size_t *out_len, char **why, const char *dir,
                     const char *const *argv, const char *diff, size_t len)
{
    char *parent = tnd_fs_dirname(dir);
    char **envp = environment(parent);
    tnd_proc_spec spec;
    tnd_proc_result res;
    int rc;

    memset(&spec, 0, sizeof(spec));
    spec.argv = argv;
    spec.cwd = dir;
    spec.envp = (const char *const *)envp;
    spec.timeout_ms = TND_GIT_TIMEOUT_MS;
    spec.output_cap = NAMES_CAP;
    spec.input = diff;
    spec.input_len = len;
    if (tnd_proc_run(&res, &spec) < 0) {
        rc = tnd_error_set("cannot run git apply: %s", tnd_error_last());
    } else if (res.status != TND_PROC_EXITED || res.exit_code != 0) {
        *why = tnd_xstrdup(res.errors ? res.errors : "");
        tnd_str_trim(*why);
        if (!**why) {
            free(*why);
            *why = tnd_xasprintf("it %s", tnd_proc_describe(&res));
        }
        rc = 1;
    } else if (res.output_total > res.output_len) {
        rc = tnd_error_set("git apply listed more than %zu bytes of names",
                           (size_t)NAMES_CAP);
    } else {
        if (out) {
            *out = res.output ? res.output : tnd_xstrdup("");
            *out_len = res.output ? res.output_len : 0;
            res.output = NULL;
        }
        rc = 0;
    }
    tnd_proc_result_free(&res);
    tnd_str_list_free(&envp);
    free(parent);
    return rc;
}

/* ---- the names ---------------------------------------------------------- */

typedef struct names {
    char **at;
    size_t n, alloc;
} names;

static void add(names *l, const char *path)
{
    TND_GROW(l->at, l->alloc, l->n + 1);
    l->at[l->n++] = tnd_xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(names *l)
{
    size_t k = 0;

    if (l->n)
        qsort(l->at, l->n, sizeof(*l->at), cmp_str);
    for (size_t i = 0; i < l->n; i++) {
        if (k && strcmp(l->at[k - 1], l->at[i]) == 0)
            free(l->at[i]);
        else
            l->at[k++] = l->at[i];
    }
    l->n = k;
}

static void names_free(names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->at[i]);
    free(l->at);
}

/* `git apply --numstat -z`: "ADDED\tDELETED\tNAME\0" a file patch, NAME
 * the one it leaves (a rename's new name: the old one is among the
 * paths the caller names). Every name into l. */
static void numstat_names(names *l, const char *s, size_t len)
{
    const char *end = s + len;

    while (s < end) {
        const char *tab = memchr(s, '\t', (size_t)(end - s));
        tab = tab ? memchr(tab + 1, '\t', (size_t)(end - tab - 1)) : NULL;
        if (!tab)
            return;
        s = tab + 1;
        add(l, s);
        s += strlen(s) + 1;
    }
}

/* ---- the files ---------------------------------------------------------- */

/* The directory of rel beneath root, opened through no symbolic link
 * (made first when make): its descriptor and rel's last name in *name,
 * or -1 (errno ELOOP or ENOTDIR: a link or a file on the way). */
static int parent_of(int root, const char *rel, bool make, const char **name)
{
    char *dir = tnd_fs_dirname(rel);
    int fd;

    *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    if (make && strcmp(dir, ".") != 0 &&
        tnd_beneath_mkdirs(root, dir, NULL, NULL) < 0) {
        free(dir);
        return -1;
    }
    fd = tnd_beneath_open(root, dir, O_PATH | O_DIRECTORY, 0);
    free(dir);
    return fd;
}

/* base's rel into scratch, as it is there: a file with its mode, a
 * symbolic link; nothing when base has no such file. Both sides are
 * reached through no symbolic link: a link in the base (lnk) and a name
 * beneath it (lnk/x) must not lead a copy outside either tree. 0; 1 with
 * *why set when rel passes through a link; -1 with the error set. */
static int copy_in(int base, int scratch, const char *rel, char **why)
{
    const char *name;
    char target[PATH_MAX];
    int from = parent_of(base, rel, false, &name), to = -1, fd = -1, rc = 0;
    struct stat st;
    ssize_t n;

    if (from < 0) {
        tnd_error_clear(); /* none there, or a link on the way: git decides */
        return 0;
    }
    if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
        goto out; /* git apply finds nothing there, as the review did */
    if ((to = parent_of(scratch, rel, true, &name)) < 0) {
        *why = tnd_xasprintf("it names %s, through a symbolic link", rel);
        tnd_error_clear();
        rc = 1;
    } else if (S_ISLNK(st.st_mode)) {
        if ((n = readlinkat(from, name, target, sizeof(target) - 1)) < 0 ||
            (target[n] = '\0', symlinkat(target, to, name) < 0))
            rc = tnd_error_set("%s: %s", rel, strerror(errno));
    } else if ((fd = openat(from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) <
               0) {
        rc = tnd_error_set("%s: %s", rel, strerror(errno));
    } else {
        rc = tnd_fs_copy_fd_at(fd, to, name, &st);
    }
out:
    if (fd >= 0)
        close(fd);
    if (to >= 0)
        close(to);
    close(from);
    return rc;
}

/* What the tree at root holds at rel, for a message. */
static const char *kind(const struct stat *st, bool there)
{
    if (!there)
        return "no file";
    if (S_ISLNK(st->st_mode))
        return "a symbolic link";
    if (S_ISDIR(st->st_mode))
        return "a directory";
    if (!S_ISREG(st->st_mode))
        return "no regular file";
    return st->st_mode & 0100 ? "an executable file" : "a file";
}

/* Up to size bytes, fewer only at the end of the file; -1 on an error. */
static ssize_t read_full(int fd, char *buf, size_t size)
{
    size_t got = 0;

    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* The two files' bytes differ: 1-based line of the first difference in
 * *line; 0 when the same, -1 when one cannot be read. */
static int differ(const char *a, const char *b, long *line)
{
    char x[8192], y[8192];
    int fa = open(a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int fb = open(b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int rc = -1;

    *line = 1;
    if (fa < 0 || fb < 0)
        goto out;
    for (;;) {
        ssize_t na = read_full(fa, x, sizeof(x));
        ssize_t nb = read_full(fb, y, sizeof(y));
        size_t i = 0;
        if (na < 0 || nb < 0)
            goto out;
        while (i < (size_t)na && i < (size_t)nb && x[i] == y[i])
            *line += x[i++] == '\n';
        if (na != nb || i < (size_t)na) {
            rc = 1;
            break;
        }
        if (na == 0) {
            rc = 0;
            break;
        }
    }
out:
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return rc;
}

/* Compare rel in ws (the review's) with rel in scratch (git's): NULL
 * when the same, else what differs (caller frees). */
static char *compare(const char *ws, const char *scratch, const char *rel)
{
    char *ours = tnd_fs_join(ws, rel), *theirs = tnd_fs_join(scratch, rel);
    char a[PATH_MAX], b[PATH_MAX], *why = NULL;
    struct stat so, st;
    bool in_ours = lstat(ours, &so) == 0, in_theirs = lstat(theirs, &st) == 0;
    ssize_t na, nb;
    long line;
    int rc;

    if (in_ours != in_theirs ||
        (in_ours && ((so.st_mode & S_IFMT) != (st.st_mode & S_IFMT) ||
                     (S_ISREG(so.st_mode) &&
                      (so.st_mode & 0100) != (st.st_mode & 0100))))) {
        why = tnd_xasprintf("git apply leaves %s there, the review had %s",
                            kind(&st, in_theirs), kind(&so, in_ours));
    } else if (in_ours && S_ISLNK(so.st_mode)) {
        na = readlink(ours, a, sizeof(a));
        nb = readlink(theirs, b, sizeof(b));
        if (na != nb || na < 0 || memcmp(a, b, (size_t)na) != 0)
            why = tnd_xstrdup("git apply points the symbolic link elsewhere");
    } else if (in_ours && S_ISREG(so.st_mode) &&
               (rc = differ(ours, theirs, &line)) != 0) {
        why = rc < 0 ? tnd_xasprintf("cannot compare it: %s", strerror(errno))
                     : tnd_xasprintf("git apply writes other bytes, from "
                                     "line %ld on",
                                     line);
    }
    free(ours);
    free(theirs);
    return why;
}

/* In a fresh scratch directory under parent: base's files named in l
 * copied in, git apply (argv) of diff there, each file compared with
 * ws's. 0 when they agree; 1 with *why (caller frees) when they do not
 * or git cannot apply it; -1 with the error set. */
static int attempt(const char *const *argv, const char *diff, size_t len,
                   int base_fd, const names *l, const char *ws,
                   const char *parent, char **why)
{
    char *scratch = tnd_fs_join(parent, "gitapply-XXXXXX"), *failed = NULL;
    int rc = 0, scratch_fd = -1;

    *why = NULL;
    if (!mkdtemp(scratch)) {
        rc = tnd_error_set("cannot make %s: %s", scratch, strerror(errno));
        free(scratch);
        return rc;
    }
    if ((scratch_fd = open(scratch, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = tnd_error_set("cannot open %s: %s", scratch, strerror(errno));
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = copy_in(base_fd, scratch_fd, l->at[i], &failed);
    if (rc == 0)
        rc = git_apply(NULL, NULL, &failed, scratch, argv, diff, len);
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        char *what = compare(ws, scratch, l->at[i]);
        if (what) {
            *why = tnd_xasprintf("%s: %s", l->at[i], what);
            free(what);
            rc = 1;
        }
    }
    if (rc == 1 && !*why)
        *why = tnd_xasprintf("git apply cannot apply it to the same files: "
                             "%s",
                             failed);
    free(failed);
    if (scratch_fd >= 0)
        close(scratch_fd);
    tnd_fs_rmtree(scratch);
    free(scratch);
    return rc;
}

/* A name an attributes file can hold as it is: no blank, quote,
 * backslash or glob character that would make it another pattern. */
static bool plain_name(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || strchr("\"\\*?[]!#", *s))
            return false;
    return true;
}

/* An attributes file in parent giving each of l's files the line-end
 * attributes (text, eol, crlf) the repository gives it, as
 * "-c core.attributesFile=FILE" into *opt (caller frees): git apply in
 * the user's tree converts by them (it read a CRLF checkout's file as
 * LF, and applied `git diff`'s patch), where the scratch copy is no
 * repository. The names go to git on its stdin (check-attr --stdin -z),
 * never on its command line, which the kernel caps (ARG_MAX: 300 files
 * of long names passed it, git did not start, and the patch was
 * rejected). 0 when the repository gives none, 1 when *opt is set, -1
 * with the error set. */
static int repo_attributes(char **opt, const char *repo, const names *l,
                           const char *parent)
{
    const char *argv[] = {"git",  "check-attr", "--stdin", "-z",
                          "text", "eol",        "crlf",    NULL};
    char *out = NULL, *file = NULL, *list;
    size_t len = 0, list_len = 0;
    tnd_buf b;
    int rc;

    *opt = NULL;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < l->n; i++)
        tnd_buf_append(&b, l->at[i], strlen(l->at[i]) + 1);
    list = tnd_buf_detach(&b, &list_len);
    rc = tnd_git_run_input(&out, &len, repo, NULL, NULL, NULL, list, list_len,
                           argv, NAMES_CAP);
    free(list);
    tnd_buf_init(&b, NAMES_CAP);
    /* "PATH\0ATTR\0VALUE\0" */
    for (size_t at = 0; rc == 0 && out && at < len;) {
        const char *path = out + at, *attr, *value;

        at += strlen(path) + 1;
        attr = at < len ? out + at : "";
        at += strlen(attr) + 1;
        value = at < len ? out + at : "unspecified";
        at += strlen(value) + 1;
        if (strcmp(value, "unspecified") == 0 || !plain_name(path) ||
            !plain_name(value))
            continue;
        if (strcmp(value, "set") == 0)
            rc = tnd_buf_printf(&b, "/%s %s\n", path, attr);
        else if (strcmp(value, "unset") == 0)
            rc = tnd_buf_printf(&b, "/%s -%s\n", path, attr);
        else
            rc = tnd_buf_printf(&b, "/%s %s=%s\n", path, attr, value);
    }
    if (rc == 0 && b.len > 0) {
        file = tnd_fs_join(parent, "gitapply.attributes");
        rc = tnd_fs_write(file, tnd_buf_str(&b), b.len);
        if (rc == 0) {
            *opt = tnd_xasprintf("core.attributesFile=%s", file);
            rc = 1;
        }
    }
    free(file);
    free(out);
    tnd_buf_free(&b);
    return rc;
}

int tnd_gitapply_same(const char *diff, size_t len, const char *base,
                      const char *ws, const char *const *paths,
                      const char *scratch_parent, const char *repo, char **why)
{
    const char *numstat[] = {"git", "apply", "--numstat", "-z", "-", NULL};
    const char *apply[] = {"git", "apply", "--whitespace=nowarn", "-", NULL};
    const char *converting[] = {
        "git", "-c", NULL, "apply", "--whitespace=nowarn", "-", NULL};
    char *scratch = tnd_fs_join(scratch_parent, "gitapply-XXXXXX");
    char *list = NULL, *failed = NULL, *opt = NULL, *again = NULL;
    size_t list_len = 0;
    names l = {0};
    int rc, base_fd = -1;

    *why = NULL;
    if (!mkdtemp(scratch)) {
        rc = tnd_error_set("cannot make %s: %s", scratch, strerror(errno));
        free(scratch);
        return rc;
    }
    if ((base_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
        rc = tnd_error_set("cannot open %s: %s", base, strerror(errno));
        goto out;
    }
    if ((rc = git_apply(&list, &list_len, &failed, scratch, numstat, diff,
                        len)) != 0)
        goto out;
    numstat_names(&l, list, list_len);
    for (size_t i = 0; paths && paths[i]; i++)
        add(&l, paths[i]);
    sort_unique(&l);
    for (size_t i = 0; i < l.n; i++) {
        if (tnd_edit_path_check(l.at[i]) < 0) {
            failed =
                tnd_xasprintf("it names %s, %s", l.at[i], tnd_error_last());
            rc = 1;
            goto out;
        }
    }
    rc = attempt(apply, diff, len, base_fd, &l, ws, scratch, why);
    /* as git apply in the user's tree reads it: by the repository's
     * line-end attributes, when those make it agree */
    if (rc == 1 && repo) {
        if (repo_attributes(&opt, repo, &l, scratch) == 1) {
            converting[2] = opt;
            if (attempt(converting, diff, len, base_fd, &l, ws, scratch,
                        &again) == 0) {
                free(*why);
                *why = NULL;
                rc = 0;
            }
            free(again);
        }
        tnd_error_clear(); /* the first reading's answer stands */
    }
out:
    if (rc == 1 && !*why)
        *why = tnd_xasprintf("git apply cannot apply it to the same files: "
                             "%s",
                             failed);
    free(failed);
    free(list);
    free(opt);
    names_free(&l);
    if (base_fd >= 0)
        close(base_fd);
    tnd_fs_rmtree(scratch);
    free(scratch);
    return rc;
}
