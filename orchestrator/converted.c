/* A git change's files as a checkout writes them (see converted.h). */
#include "orchestrator/converted.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/lfs.h"
#include "orchestrator/search.h"
#include "proto/body.h"

#define ID_MAX 64 /* hex digits of a SHA-256 id */

/* One file of git's diff, as its header says. */
typedef struct part {
    char *path;            /* "+++ b/PATH"; NULL: deleted, or none */
    char old[ID_MAX + 1];  /* the blob before; "" for none */
    char new_[ID_MAX + 1]; /* the blob after; "" for none */
    bool special;          /* a symbolic link or a submodule */
    bool plain; /* no attribute or setting converts it: git writes it as
                   it stores it, with no process asked */
} part;

static bool starts(const char *line, size_t len, const char *word)
{
    size_t n = strlen(word);

    return len >= n && memcmp(line, word, n) == 0;
}

/* An id of at most ID_MAX hex digits at s into id, "" for git's zero
 * id; the characters read. */
static size_t read_id(char *id, const char *s, size_t len)
{
    size_t k = 0;
    bool zero = true;

    while (k < len && k < ID_MAX && strchr("0123456789abcdef", s[k]) && s[k]) {
        zero = zero && s[k] == '0';
        id[k] = s[k];
        k++;
    }
    id[zero ? 0 : k] = '\0';
    return k;
}

/* A mode in a header line ("index A..B 120000", "new file mode
 * 160000"): a symbolic link or a submodule, which no filter converts. */
static bool special_mode(const char *line, size_t len)
{
    return memmem(line, len, "120000", 6) || memmem(line, len, "160000", 6);
}

static void header_line(part *p, const char *line, size_t len)
{
    if (starts(line, len, "index ")) {
        size_t k = 6 + read_id(p->old, line + 6, len - 6);

        if (k + 2 <= len && memcmp(line + k, "..", 2) == 0)
            read_id(p->new_, line + k + 2, len - k - 2);
        p->special = p->special || special_mode(line, len);
    } else if (starts(line, len, "+++ ")) {
        free(p->path);
        p->path = tnd_diff_path(line + 4, len - 4);
    } else if (strstr(line, "mode ") && special_mode(line, len)) {
        p->special = true;
    }
}

/* The files of diff, from its headers. */
static part *parts_of(const char *diff, size_t *n_out)
{
    part *parts = NULL;
    size_t n = 0, alloc = 0;
    bool header = false;

    for (const char *p = diff; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        if (starts(p, len, "diff --git ")) {
            TND_GROW(parts, alloc, n + 1);
            memset(&parts[n++], 0, sizeof(*parts));
            header = true;
        } else if (header && (starts(p, len, "@@") ||
                              starts(p, len, "GIT binary patch") ||
                              starts(p, len, "Binary files"))) {
            header = false;
        } else if (header) {
            header_line(&parts[n - 1], p, len);
        }
        p = nl ? nl + 1 : p + len;
    }
    *n_out = n;
    return parts;
}

static void parts_free(part *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(parts[i].path);
    free(parts);
}

/* Whether p is a file the change leaves, whose checkout may differ. A
 * name with a line break is none: no edit carries it (the change is
 * refused for it), and git's --stdin-paths reads a name a line. */
static bool kept(const part *p)
{
    return p->path && *p->new_ && !p->special && !p->plain &&
           !strchr(p->path, '\n');
}

/* The paths of the kept parts (those with a blob before when old), each
 * under the directory under (NULL: as the diff names them) and ended by
 * end: a list for git's --stdin forms, none on its command line, which
 * the kernel caps (ARG_MAX: 500 files of long names, twice over and
 * absolute, passed it, and git did not start). Caller frees. */
static char *path_list(size_t *len, const part *parts, size_t n,
                       const char *under, bool old, char end)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++) {
        if (!kept(&parts[i]) || (old && !*parts[i].old))
            continue;
        if (under) {
            tnd_buf_puts(&b, under);
            tnd_buf_append(&b, "/", 1);
        }
        tnd_buf_puts(&b, parts[i].path);
        tnd_buf_append(&b, &end, 1);
    }
    return tnd_buf_detach(&b, len);
}

/* The directory git writes objects into, absolute. Caller frees. */
static char *objects_of(const char *repo)
{
    const char *argv[] = {"git", "rev-parse", "--git-path", "objects", NULL};
    char *out = NULL, *path = NULL;

    if (tnd_git_run(&out, NULL, repo, argv, 4096) == 0 && out) {
        tnd_str_trim(out);
        path = out[0] == '/' ? tnd_xstrdup(out) : tnd_fs_join(repo, out);
    }
    free(out);
    return path;
}

/* ---- which files git may convert: its attributes and settings ---- */

/* What git's settings say of line ends on checkout (convert.c's
 * text_eol_is_crlf and core.autocrlf), each true where it may be CRLF. */
typedef struct eol_settings {
    bool autocrlf; /* core.autocrlf true, or a value not known false */
    bool input;    /* core.autocrlf input (no CRLF from core.eol) */
    bool eol_crlf; /* core.eol crlf, or a value not known LF */
    bool filter_unset, filter_unspecified; /* a filter driver so named:
                                              check-attr's words for no
                                              filter are its name too */
} eol_settings;

static bool is(const char *value, const char *word)
{
    return strcmp(value, word) == 0;
}

/* git's false (git_config_bool); a key with no value is true. */
static bool is_false(const char *value)
{
    return value && (!*value || strcasecmp(value, "false") == 0 ||
                     strcasecmp(value, "no") == 0 ||
                     strcasecmp(value, "off") == 0 || is(value, "0"));
}

/* core.autocrlf and core.eol as git reads them (the last one set wins,
 * `git -c` and GIT_CONFIG_* among them): one `git config --list`, which
 * succeeds with none set (--get fails then, as it fails on an error). */
static int eol_settings_of(eol_settings *e, const char *repo)
{
    const char *argv[] = {"git", "config", "-z", "--list", NULL};
    char *out = NULL;
    size_t len = 0;

    memset(e, 0, sizeof(*e));
    if (tnd_git_run(&out, &len, repo, argv, 4 << 20) < 0)
        return -1;
    /* "KEY\nVALUE\0", or "KEY\0" for a key with no value */
    for (size_t at = 0; at < len;) {
        char *key = out + at, *nl = strchr(key, '\n'), *value = NULL;

        at += strlen(key) + 1;
        if (nl) {
            *nl = '\0';
            value = nl + 1;
        }
        if (strcasecmp(key, "core.autocrlf") == 0) {
            e->input = value && strcasecmp(value, "input") == 0;
            e->autocrlf = !e->input && !is_false(value);
        } else if (strcasecmp(key, "core.eol") == 0) {
            e->eol_crlf = !value || !(is(value, "lf") || is(value, "native"));
        } else if (strncasecmp(key, "filter.", 7) == 0) {
            /* the subsection, the driver's name, is case-sensitive */
            e->filter_unset |= strncmp(key + 7, "unset.", 6) == 0;
            e->filter_unspecified |= strncmp(key + 7, "unspecified.", 12) == 0;
        }
    }
    free(out);
    return 0;
}

enum { A_TEXT, A_CRLF, A_EOL, A_FILTER, A_IDENT, A_ENCODING, A_N };
static const char *const attr_names[A_N] = {
    "text", "crlf", "eol", "filter", "ident", "working-tree-encoding"};

/* git's crlf_action (convert.c) as convert_attrs has it from text, or
 * from crlf where text says none (undefined). */
enum { ACT_UNDEFINED, ACT_TEXT, ACT_BINARY, ACT_INPUT, ACT_AUTO };

/* The action one of text's or crlf's words says. check-attr writes
 * "set" and "unset" for a value so spelt as well (`text=unset`), which
 * git takes as no action: *or_none says the word may be one. */
static int action_of(const char *word, bool *or_none)
{
    *or_none = is(word, "set") || is(word, "unset");
    return is(word, "set")     ? ACT_TEXT
           : is(word, "unset") ? ACT_BINARY
           : is(word, "input") ? ACT_INPUT
           : is(word, "auto")  ? ACT_AUTO
                               : ACT_UNDEFINED;
}

/* Whether a checkout under action act and the eol attribute's word puts
 * CRLF where the blob has LF (convert_attrs, output_eol): eol=crlf makes
 * any action but binary CRLF's, eol=lf LF's; text and auto take
 * core.eol where core.autocrlf is not input; none takes core.autocrlf. */
static bool eol_converts(int act, const char *eol, const eol_settings *e)
{
    if (act == ACT_BINARY)
        return false;
    if (is(eol, "crlf"))
        return true;
    if (is(eol, "lf") || act == ACT_INPUT)
        return false;
    if (act == ACT_UNDEFINED)
        return e->autocrlf;
    return e->autocrlf || (e->eol_crlf && !e->input);
}

/* Whether a file with the attributes a (check-attr's words:
 * "unspecified", "unset", "set" or the value) may be written other than
 * git stores it, under the settings e: git's convert_attrs, read on the
 * side of yes (a filter named whatever its driver, any encoding, and a
 * word that may be a value so spelt read both ways: `text=unset
 * eol=crlf` is CRLF, `-text eol=crlf` is not, and check-attr says
 * "unset" of both). */
static bool may_convert(char *const *a, const eol_settings *e)
{
    bool text_none, crlf_none;
    int text = action_of(a[A_TEXT], &text_none),
        crlf = action_of(a[A_CRLF], &crlf_none);

    for (int k = A_FILTER; k <= A_ENCODING; k++)
        if (!is(a[k], "unspecified") && !is(a[k], "unset"))
            return true;
    /* a filter driver may be named as check-attr says no filter */
    if ((is(a[A_FILTER], "unset") && e->filter_unset) ||
        (is(a[A_FILTER], "unspecified") && e->filter_unspecified))
        return true;
    if (text != ACT_UNDEFINED && eol_converts(text, a[A_EOL], e))
        return true;
    /* text says none, or may: crlf's, which may say none too */
    return (text == ACT_UNDEFINED || text_none) &&
           (eol_converts(crlf, a[A_EOL], e) ||
            (crlf_none && eol_converts(ACT_UNDEFINED, a[A_EOL], e)));
}

/* Mark plain the kept parts git writes as it stores them, from their
 * attributes (`git check-attr --stdin -z`, with the base's index: it
 * reads them where checkout-index does, the work tree's .gitattributes
 * first) and the settings: two git processes, where the checkout and
 * the ids of every file took four. A change to a .gitattributes changes
 * them between the base and the checkout: none is marked then, nor
 * with core.autocrlf (every text file). -1 when git fails. */
static int mark_plain(part *parts, size_t n, const char *repo,
                      const char *index, const char *diff)
{
    const char *argv[] = {"git",         "check-attr",  "-z",
                          "--stdin",     attr_names[0], attr_names[1],
                          attr_names[2], attr_names[3], attr_names[4],
                          attr_names[5], NULL};
    eol_settings e;
    char *paths, *out = NULL, *a[A_N];
    size_t len = 0, olen = 0, at = 0;
    int rc;

    if (strstr(diff, ".gitattributes"))
        return 0;
    if (eol_settings_of(&e, repo) < 0)
        return -1;
    if (e.autocrlf) /* every file git takes for text: most */
        return 0;
    paths = path_list(&len, parts, n, NULL, false, '\0');
    rc = tnd_git_run_input(&out, &olen, repo, index, NULL, NULL, paths, len,
                           argv, (len + 256) * A_N + (64 << 10));
    /* "PATH\0ATTRIBUTE\0VALUE\0", each path's in argv's order */
    for (size_t i = 0; rc == 0 && out && i < n; i++) {
        bool all = true;

        if (!kept(&parts[i]))
            continue;
        for (int k = 0; k < A_N && all; k++) {
            char *path = out + at, *name, *value;

            all = at < olen && (name = path + strlen(path) + 1) < out + olen &&
                  (value = name + strlen(name) + 1) < out + olen &&
                  is(path, parts[i].path) && is(name, attr_names[k]);
            if (all) {
                a[k] = value;
                at = (size_t)(value + strlen(value) + 1 - out);
            }
        }
        if (!all) { /* not git's answer as we know it: none is plain */
            for (size_t k = 0; k < n; k++)
                parts[k].plain = false;
            break;
        }
        parts[i].plain = !may_convert(a, &e);
    }
    free(paths);
    free(out);
    return rc;
}

/* The change's Git LFS files whose objects are not on this machine
 * (left, not empty): refused, TND_ECONFIG naming them. Checked out, each
 * is its pointer, which a review of the file cannot take for its
 * content, and git-lfs would fetch it (tandem never fetches). */
static int lfs_refused(const tnd_lfs_left *left)
{
    bool one = left->n == 1;
    char *named;
    tnd_buf b;
    int rc;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; left->named[i]; i++)
        tnd_buf_printf(&b, "%s%s", i ? ", " : "", left->named[i]);
    if (left->n > TND_LFS_NAMED)
        tnd_buf_printf(&b, " and %zu more", left->n - TND_LFS_NAMED);
    named = tnd_buf_detach(&b, NULL);
    rc = tnd_error_config(
        "%s: %s Git LFS file%s whose content after the change is not on this "
        "machine (%s object is missing), and tandem never fetches, so the "
        "change cannot be reviewed: fetch %s first (git lfs fetch), or leave "
        "%s out of the change",
        named, one ? "a" : "each a", one ? "" : "s", one ? "its" : "their",
        one ? "it" : "them", one ? "it" : "them");
    free(named);
    return rc;
}

/* The change applied to the scratch index and its kept files checked
 * out under after: git-lfs's files as lfs.h writes them, never through
 * git-lfs where an object is missing (it failed there, and wrote its log
 * into .git/lfs/logs), such a file refused (lfs_refused). 1 when git
 * cannot apply the change (not git's own diff). */
static int check_out(const char *repo, const char *index, const char *dir,
                     const char *after, const char *diff, const part *parts,
                     size_t n)
{
    char *objects = tnd_fs_join(dir, "objects"),
         *patch = tnd_fs_join(dir, "change"
                                   ".diff"),
         *repo_objects = objects_of(repo),
         *prefix = tnd_xasprintf("--prefix=%s/", after), *paths;
    const char *apply[] = {"git", "apply", "--cached", "--whitespace=nowarn",
                           patch, NULL};
    const char *checkout[] = {"git", TND_LFS_OFF, "checkout-index",
                              "-f",  prefix,      "--stdin",
                              "-z",  NULL};
    tnd_lfs_left left = {0};
    size_t len = 0;
    int rc = repo_objects ? 0 : -1;

    paths = path_list(&len, parts, n, NULL, false, '\0');
    if (rc == 0)
        rc = tnd_fs_mkdirs(objects, 0700);
    if (rc == 0)
        rc = tnd_fs_write(patch, diff, strlen(diff));
    if (rc == 0 && tnd_git_run_scratch(NULL, NULL, repo, index, objects,
                                       repo_objects, apply, 4096) < 0) {
        tnd_error_clear();
        rc = 1;
    }
    if (rc == 0)
        rc = tnd_fs_mkdirs(after, 0700);
    if (rc == 0)
        rc = tnd_git_run_input(NULL, NULL, repo, index, objects, repo_objects,
                               paths, len, checkout, 64 * 1024);
    if (rc == 0)
        rc = tnd_lfs_smudge_paths(&left, repo, index, objects, repo_objects,
                                  paths, len, after, NULL);
    if (rc == 0 && left.n)
        rc = lfs_refused(&left);
    tnd_lfs_left_free(&left);
    free(paths);
    free(objects);
    free(patch);
    free(repo_objects);
    free(prefix);
    return rc;
}

/* The ids of the files (base's before, after's after) as they are
 * checked out, taken as they are (no filter): one line each, in the
 * order of parts, the base's first. Caller frees. */
static int raw_ids(char **out, const char *repo, const char *base,
                   const char *after, const part *parts, size_t n)
{
    const char *argv[] = {"git", "hash-object", "--no-filters", "--stdin-paths",
                          NULL};
    size_t blen = 0, alen = 0;
    char *before = path_list(&blen, parts, n, base, true, '\n'),
         *then = path_list(&alen, parts, n, after, false, '\n');
    int rc;

    before = tnd_xrealloc(before, blen + alen + 1, 1);
    memcpy(before + blen, then, alen + 1);
    rc = tnd_git_run_input(out, NULL, repo, NULL, NULL, NULL, before,
                           blen + alen, argv, (2 * n + 1) * (ID_MAX + 2));
    free(before);
    free(then);
    return rc;
}

/* Whether id (git's, whole) is the one a diff's "index" line names,
 * which may be abbreviated (a patch made without --full-index: git diff
 * --binary is one, of text files). Every file of every review was taken
 * for converted, its edits one whole write, when abbreviated ids were
 * compared whole. */
static bool same_id(const char *id, const char *named)
{
    size_t n = strlen(named);

    return n >= 7 && strlen(id) >= n && strncmp(id, named, n) == 0;
}

/* The next line of *s, as an id (the line cut at its end). */
static const char *next_id(char **s)
{
    char *line = *s, *nl = line ? strchr(line, '\n') : NULL;

    if (!line)
        return "";
    if (nl) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = NULL;
    }
    return line;
}

int tnd_converted_find(tnd_converted **out, size_t *n_out, const char *repo,
                       const char *base, const char *index, const char *dir,
                       const char *diff)
{
    size_t n = 0, nkept = 0, nconv = 0;
    part *parts = parts_of(diff, &n);
    char *after = tnd_fs_join(dir, "after"), *ids = NULL, *at;
    tnd_converted *conv = NULL;
    bool *differs = tnd_xcalloc(n + 1, sizeof(bool));
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    /* more files than a review takes: unidiff refuses the change */
    for (size_t i = 0; i < n && n <= TND_BODY_MAX_EDITS; i++)
        nkept += kept(&parts[i]);
    /* one look at the files' attributes and git's settings: most changes
     * have no file git converts, and need no more */
    if (nkept > 0 && mark_plain(parts, n, repo, index, diff) < 0) {
        /* then every file is looked at, as git checks it out */
        tnd_error_clear();
        for (size_t i = 0; i < n; i++)
            parts[i].plain = false;
    }
    nkept = 0;
    for (size_t i = 0; i < n && n <= TND_BODY_MAX_EDITS; i++)
        nkept += kept(&parts[i]);
    if (nkept > 0)
        rc = check_out(repo, index, dir, after, diff, parts, n);
    if (rc == 0 && nkept > 0)
        rc = raw_ids(&ids, repo, base, after, parts, n);
    at = ids;
    for (size_t i = 0; rc == 0 && nkept > 0 && i < n; i++)
        if (kept(&parts[i]) && *parts[i].old)
            differs[i] = !same_id(next_id(&at), parts[i].old);
    for (size_t i = 0; rc == 0 && nkept > 0 && i < n; i++)
        if (kept(&parts[i]))
            differs[i] = !same_id(next_id(&at), parts[i].new_) || differs[i];
    for (size_t i = 0; rc == 0 && nkept > 0 && i < n; i++) {
        char *path;

        if (!differs[i])
            continue;
        conv = tnd_xrealloc(conv, nconv + 1, sizeof(*conv));
        conv[nconv].path = tnd_xstrdup(parts[i].path);
        path = tnd_fs_join(after, parts[i].path);
        rc = tnd_fs_read(&conv[nconv].text, &conv[nconv].len, path,
                         TND_BODY_MAX_DIFF);
        free(path);
        nconv++;
    }
    if (rc < 0) {
        tnd_converted_free(conv, nconv);
    } else {
        *out = conv;
        *n_out = nconv;
    }
    free(differs);
    free(ids);
    free(after);
    parts_free(parts, n);
    return rc < 0 ? (rc == TND_ECONFIG ? rc : -1) : 0;
}

int tnd_converted_edits(tnd_edit **edits, size_t *n, const tnd_converted *conv,
                        size_t nconv)
{
    for (size_t c = 0; c < nconv; c++) {
        const tnd_converted *f = &conv[c];
        size_t kept = 0;
        bool found = false;

        if (memchr(f->text, '\0', f->len) || !tnd_utf8_valid(f->text, f->len))
            return tnd_error_config(
                "%s: git checks it out converted (a filter, eol or "
                "working-tree-encoding in .gitattributes), and as checked out "
                "it is %s, which tandem cannot review; leave it out of the "
                "change",
                f->path,
                memchr(f->text, '\0', f->len) ? "binary" : "not UTF-8");
        for (size_t i = 0; i < *n; i++) {
            tnd_edit *e = &(*edits)[i];

            if (strcmp(e->path, f->path) != 0 || e->kind == TND_EDIT_DELETE) {
                (*edits)[kept++] = *e;
            } else if (!found) {
                found = true;
                free(e->search);
                free(e->replace);
                e->kind = TND_EDIT_WRITE;
                e->search = tnd_xstrdup("");
                e->replace = tnd_xstrdup(f->text);
                e->line = 0;
                (*edits)[kept++] = *e;
            } else {
                tnd_edit_clear(e);
            }
        }
        *n = kept;
    }
    return 0;
}

/* The ids git gives the n paths (relative to repo), with or without its
 * filters: one line each, in order. Caller frees. */
static int ids_of(char **out, const char *repo, const char *const *paths,
                  size_t n, bool filters)
{
    const char *argv[] = {"git", "hash-object", "--stdin-paths",
                          filters ? NULL : "--no-filters", NULL};
    tnd_buf b;
    size_t len = 0;
    char *list;
    int rc;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++) {
        tnd_buf_puts(&b, paths[i]);
        tnd_buf_append(&b, "\n", 1);
    }
    list = tnd_buf_detach(&b, &len);
    rc = tnd_git_run_input(out, NULL, repo, NULL, NULL, NULL, list, len, argv,
                           (n + 1) * (ID_MAX + 2));
    free(list);
    return rc;
}

/* Whether edit e (a hunk: its line) holds in the file at repo/path. */
static bool hunk_holds(const char *repo, const tnd_edit *e)
{
    char *full = tnd_fs_join(repo, e->path), *text = NULL;
    size_t len = 0, start = 0, end = 0;
    bool holds;

    holds = tnd_fs_read(&text, &len, full, TND_BODY_MAX_FILE) < 0 ||
            (tnd_str_line_start(text, len, e->line, &start) &&
             tnd_search_at(text, len, start, e->search, &end));
    tnd_error_clear();
    free(text);
    free(full);
    return holds;
}

int tnd_converted_check_patch(const char *repo, const tnd_edit *edits, size_t n,
                              const char *named)
{
    const char **paths = tnd_xcalloc(n + 1, sizeof(char *));
    const tnd_edit **first = tnd_xcalloc(n + 1, sizeof(*first));
    char *with = NULL, *without = NULL, *a, *b;
    size_t m = 0;
    int rc = 0;

    /* each file's first hunk: it is against the file as it is */
    for (size_t i = 0; i < n && n <= TND_BODY_MAX_EDITS; i++) {
        const tnd_edit *e = &edits[i];
        char *full;
        struct stat st;
        bool seen = false;

        for (size_t k = 0; k < m && !seen; k++)
            seen = strcmp(paths[k], e->path) == 0;
        if (seen || e->kind != TND_EDIT_REPLACE || e->line <= 0 ||
            strchr(e->path, '\n'))
            continue;
        full = tnd_fs_join(repo, e->path);
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            first[m] = e;
            paths[m++] = e->path;
        }
        free(full);
    }
    if (m == 0 || ids_of(&with, repo, paths, m, true) < 0 ||
        ids_of(&without, repo, paths, m, false) < 0) {
        tnd_error_clear(); /* no git work tree: nothing git converts */
        m = 0;
    }
    a = with;
    b = without;
    for (size_t i = 0; i < m && rc == 0; i++) {
        const char *id = next_id(&a);
        if (strcmp(id, next_id(&b)) == 0 || hunk_holds(repo, first[i]))
            continue;
        rc = tnd_error_config(
            "%s: %s is converted by git on checkout (a filter, eol or "
            "working-tree-encoding in .gitattributes), and the diff does not "
            "hold in it as the work tree has it (line %ld): a diff from git "
            "is of the form git stores, not of the file checked out, and git "
            "apply refuses it there too. Review the change from git, which "
            "tandem applies as a checkout writes it: tandem review (the "
            "uncommitted changes) or tandem review --staged (the staged ones)",
            named, first[i]->path, first[i]->line);
    }
    free(with);
    free(without);
    free(first);
    free(paths);
    return rc;
}

void tnd_converted_free(tnd_converted *conv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(conv[i].path);
        free(conv[i].text);
    }
    free(conv);
}
