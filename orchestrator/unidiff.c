/* Unified diffs as workspace edits (see unidiff.h). */
#include "orchestrator/unidiff.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/body.h"

typedef struct reader {
    const char *p, *end;
    bool strip_cr; /* the whole diff has CRLF line ends (a patch file an
                      editor converted): its '\r's are not content */
    size_t lineno;
    const char *line; /* the current line, without its newline */
    size_t len;
} reader;

typedef struct parse {
    tnd_edit *edits;
    size_t n, alloc;
    char *old_path, *new_path; /* NULL: /dev/null */
    size_t hunk;               /* hunks of the current file */
    char *git_path;            /* a "diff --git" header not yet followed by
                                  ---/+++ lines (git writes none for an
                                  empty file created or deleted) */
    bool git_new, git_deleted;
    bool git;   /* a "diff --git" header was seen: git's a/ b/ names */
    bool modes; /* an "old mode"/"new mode" pair was seen */
    tnd_exec_change *exec; /* the modes the change sets */
    size_t nexec, aexec;
} parse;

static bool next_line(reader *r)
{
    const char *nl;

    if (r->p >= r->end)
        return false;
    nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    r->line = r->p;
    r->len = nl ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
    r->p = nl ? nl + 1 : r->end;
    if (r->strip_cr && r->len > 0 && r->line[r->len - 1] == '\r')
        r->len--;
    r->lineno++;
    return true;
}

static bool starts(const reader *r, const char *prefix)
{
    size_t n = strlen(prefix);

    return r->len >= n && memcmp(r->line, prefix, n) == 0;
}

/* The path of a ---/+++ line: NULL for /dev/null, "a/" or "b/" dropped,
 * a tab and what follows (diff -u's timestamp) dropped. */
static char *header_path(const reader *r)
{
    return tnd_diff_path(r->line + 4, r->len - 4);
}

/* What a git header line's mode says is not a regular file: "a symbolic
 * link" (120000) or "a submodule" (160000), else NULL. The text of such
 * a file's hunks is a link's target or a commit id, and a workspace
 * would make it a regular file (a review found a new link to
 * /etc/passwd audited as a text file). */
static const char *not_a_file(const reader *r)
{
    static const char *const heads[] = {"new file mode ", "deleted file mode ",
                                        "old mode ", "new mode ", "index "};
    const char *word;
    bool head = false;

    for (size_t i = 0; i < sizeof(heads) / sizeof(*heads) && !head; i++)
        head = starts(r, heads[i]);
    if (!head || r->len < 7)
        return NULL;
    word = r->line + r->len - 7; /* " MODE", the line's last word */
    return memcmp(word, " 120000", 7) == 0   ? "a symbolic link"
           : memcmp(word, " 160000", 7) == 0 ? "a submodule"
                                             : NULL;
}

/* "old mode 100644" or "new mode 100755", exactly: git's lines for a
 * mode change (anything else there is no diff git wrote). */
static bool mode_line(const reader *r)
{
    if ((!starts(r, "old mode ") && !starts(r, "new mode ")) || r->len != 15)
        return false;
    /* the line is not NUL-terminated: its own bytes only */
    for (size_t i = 9; i < 15; i++)
        if (r->line[i] < '0' || r->line[i] > '7')
            return false;
    return true;
}

/* A file name s[0..n) for a message, as git quotes it: in double
 * quotes, each byte that is not UTF-8 or is a control character as a
 * \ooo octal escape (git's own form, as git status shows the name), '"'
 * and '\\' escaped; the valid UTF-8 is kept as it is. Caller frees. */
static char *quoted_name(const char *s, size_t n)
{
    tnd_buf b;
    size_t i = 0;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "\"");
    while (i < n && b.len < 400) {
        unsigned char c = (unsigned char)s[i];
        /* the length a lead byte announces; 0 for none */
        size_t seq = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;

        if (seq && i + seq <= n && tnd_utf8_valid(s + i, seq)) {
            tnd_buf_append(&b, s + i, seq);
            i += seq;
            continue;
        }
        if (c < 0x20 || c >= 0x7f)
            tnd_buf_printf(&b, "\\%03o", c);
        else if (c == '"' || c == '\\')
            tnd_buf_printf(&b, "\\%c", c);
        else
            tnd_buf_append(&b, s + i, 1);
        i++;
    }
    tnd_buf_puts(&b, i < n ? "...\"" : "\"");
    return tnd_buf_detach(&b, NULL);
}

/* The refusal of a file whose name, s[0..n), is not UTF-8: edits carry
 * their path in a JSON body, which holds UTF-8 only, so the name no
 * edit can carry; the message says which file (it said "bytes that are
 * not UTF-8" at a line, never which file) and how to go on. */
static int name_not_utf8(const char *s, size_t n)
{
    char *shown = quoted_name(s, n);

    tnd_error_set("%s cannot be reviewed: its name is not UTF-8, and tandem "
                  "carries file names in JSON bodies, which hold UTF-8 only; "
                  "rename it to a UTF-8 name (git mv), or leave it out and "
                  "commit it without tandem (review the rest with --diff "
                  "FILE, or commit with git commit --no-verify)",
                  shown);
    free(shown);
    return -1;
}

/* A name the edits may carry: every path of the change is checked here,
 * as it is loaded, since a name an edit cannot hold (a backslash, a tab,
 * .git/...) otherwise failed only once the session had started, as a
 * review that could not be done (exit 4, which --on-error pass lets
 * through: a bad change went in with a file named innocent\name.txt). */
static int check_path(const char *path)
{
    char *shown, *why;

    if (!tnd_utf8_valid(path, strlen(path)))
        return name_not_utf8(path, strlen(path));
    if (tnd_edit_path_check(path) == 0)
        return 0;
    shown = tnd_str_one_line(path, 200);
    why = tnd_xstrdup(tnd_error_last());
    tnd_error_set("'%s' cannot be reviewed: %s; rename it, or leave it out "
                  "of the change",
                  shown, why);
    free(shown);
    free(why);
    return -1;
}

static int add_edit(parse *ps, tnd_edit_kind kind, const char *path,
                    char *search, char *replace, long line)
{
    if (check_path(path) < 0) {
        free(search);
        free(replace);
        return -1;
    }
    if (ps->n >= TND_BODY_MAX_EDITS) {
        free(search);
        free(replace);
        return tnd_error_set("the diff has more than %d hunks and files; "
                             "review it in parts",
                             TND_BODY_MAX_EDITS);
    }
    TND_GROW(ps->edits, ps->alloc, ps->n + 1);
    ps->edits[ps->n].kind = kind;
    ps->edits[ps->n].path = tnd_xstrdup(path);
    ps->edits[ps->n].search = search ? search : tnd_xstrdup("");
    ps->edits[ps->n].replace = replace ? replace : tnd_xstrdup("");
    ps->edits[ps->n].line = line;
    ps->n++;
    return 0;
}

/* A file's mode the change sets, from "new mode 100755" or "new file
 * mode 100755" (digits at r->line + skip) under the "diff --git" header
 * of ps->git_path: executable when its owner may execute it. */
static int add_exec(parse *ps, const reader *r, size_t skip)
{
    bool exec = (r->line[skip + 3] - '0') & 1;

    if (!ps->git_path)
        return tnd_error_set("line %zu: a mode change of a file whose "
                             "\"diff --git\" line names none",
                             r->lineno);
    if (check_path(ps->git_path) < 0)
        return -1;
    if (ps->nexec >= TND_BODY_MAX_EDITS)
        return tnd_error_set("the diff changes the modes of more than %d "
                             "files; review it in parts",
                             TND_BODY_MAX_EDITS);
    TND_GROW(ps->exec, ps->aexec, ps->nexec + 1);
    ps->exec[ps->nexec].path = tnd_xstrdup(ps->git_path);
    ps->exec[ps->nexec++].exec = exec;
    return 0;
}

void tnd_unidiff_exec_free(tnd_exec_change *modes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(modes[i].path);
    free(modes);
}

/* "@@ -a,b +c,d @@": the old and new line counts (1 when left out), and
 * the line the hunk's text begins at in the file as the hunks before it
 * left it: c, or the line after c when the hunk leaves no line (d = 0:
 * c is the one before). */
static int hunk_counts(const reader *r, long *old_n, long *new_n, long *at)
{
    char buf[128];
    const char *minus, *plus;
    char *end;

    if (r->len >= sizeof(buf))
        return -1;
    memcpy(buf, r->line, r->len);
    buf[r->len] = '\0';
    if (!(minus = strstr(buf, " -")) || !(plus = strstr(buf, " +")))
        return -1;
    (void)strtol(minus + 2, &end, 10);
    *old_n = *end == ',' ? strtol(end + 1, &end, 10) : 1;
    *at = strtol(plus + 2, &end, 10);
    *new_n = *end == ',' ? strtol(end + 1, &end, 10) : 1;
    if (*new_n == 0 && *at >= 0 && *at <= TND_EDIT_MAX_LINE)
        ++*at; /* strtol's LONG_MAX stays out of range, not overflowed */
    return *old_n < 0 || *new_n < 0 || *old_n > 10000000 || *new_n > 10000000 ||
                   *at < 1 || *at > TND_EDIT_MAX_LINE
               ? -1
               : 0;
}

static void drop_newline(tnd_buf *b)
{
    if (b->len > 0 && b->data[b->len - 1] == '\n')
        b->data[--b->len] = '\0';
}

/* One hunk, its header the current line: its old and new text, and the
 * line it begins at (hunk_counts). */
static int read_hunk(parse *ps, reader *r, tnd_buf *old_text, tnd_buf *new_text,
                     long *at)
{
    const char *path = ps->new_path ? ps->new_path : ps->old_path;
    long old_n, new_n;
    int last = 0; /* what the previous line fed: 1 old, 2 new, 3 both */

    ps->hunk++;
    if (hunk_counts(r, &old_n, &new_n, at) < 0)
        return tnd_error_set("line %zu: a hunk header of %s that cannot be "
                             "read: %.*s",
                             r->lineno, path, (int)(r->len < 80 ? r->len : 80),
                             r->line);
    while (old_n > 0 || new_n > 0) {
        char c;
        if (!next_line(r))
            return tnd_error_set("hunk %zu of %s ends early (the diff is "
                                 "cut short)",
                                 ps->hunk, path);
        c = r->len ? r->line[0] : ' ';
        if (c == '\\') {
            /* "\ No newline at end of file": about the line before */
            if (last & 1)
                drop_newline(old_text);
            if (last & 2)
                drop_newline(new_text);
            continue;
        }
        if (c != ' ' && c != '-' && c != '+')
            return tnd_error_set("line %zu: hunk %zu of %s has a line "
                                 "starting with '%c'; is the diff complete?",
                                 r->lineno, ps->hunk, path, c);
        last = c == ' ' ? 3 : c == '-' ? 1 : 2;
        if ((last & 1) && old_n-- <= 0)
            return tnd_error_set("hunk %zu of %s has more old lines than its "
                                 "header says",
                                 ps->hunk, path);
        if ((last & 2) && new_n-- <= 0)
            return tnd_error_set("hunk %zu of %s has more new lines than its "
                                 "header says",
                                 ps->hunk, path);
        if ((last & 1) && (tnd_buf_append(old_text, r->line + !!r->len,
                                          r->len ? r->len - 1 : 0) < 0 ||
                           tnd_buf_append(old_text, "\n", 1) < 0))
            return tnd_error_set("%s is too large to review", path);
        if ((last & 2) && (tnd_buf_append(new_text, r->line + !!r->len,
                                          r->len ? r->len - 1 : 0) < 0 ||
                           tnd_buf_append(new_text, "\n", 1) < 0))
            return tnd_error_set("%s is too large to review", path);
    }
    /* a "\ No newline" may follow the last line */
    if (r->p < r->end && *r->p == '\\') {
        next_line(r);
        if (last & 1)
            drop_newline(old_text);
        if (last & 2)
            drop_newline(new_text);
    }
    return 0;
}

static int file_hunks(parse *ps, reader *r)
{
    tnd_buf old_text, new_text;
    const char *path = ps->new_path ? ps->new_path : ps->old_path;
    long at = 0;
    int rc = 0;

    tnd_buf_init(&old_text, TND_BODY_MAX_FILE);
    tnd_buf_init(&new_text, TND_BODY_MAX_FILE);
    if (!ps->old_path && !ps->new_path) {
        rc = tnd_error_set("line %zu: both sides of a file are /dev/null",
                           r->lineno);
        goto out;
    }
    if (ps->old_path && ps->new_path &&
        strcmp(ps->old_path, ps->new_path) != 0) {
        rc = tnd_error_set("%s is renamed from %s; renames cannot be "
                           "reviewed yet (make the diff with --no-renames)",
                           ps->new_path, ps->old_path);
        goto out;
    }
    while (r->p < r->end && *r->p == '@') {
        next_line(r);
        tnd_buf_reset(&old_text);
        tnd_buf_reset(&new_text);
        if ((rc = read_hunk(ps, r, &old_text, &new_text, &at)) < 0)
            goto out;
        if (!ps->new_path)
            continue; /* deleted: its hunks only say what it held */
        if (!ps->old_path) {
            /* created: one hunk holds it all */
            rc = add_edit(ps, TND_EDIT_WRITE, path, NULL,
                          tnd_buf_detach(&new_text, NULL), 0);
            tnd_buf_init(&new_text, TND_BODY_MAX_FILE);
            if (rc < 0)
                goto out;
            continue;
        }
        /* where the header says: the same text elsewhere in the file is
         * not this hunk (a review found one applied to an earlier copy
         * of its lines, and the change audited was not the one made),
         * and a hunk with no old lines (diff -U0, a file that was
         * empty) inserts there */
        if ((rc = add_edit(ps, TND_EDIT_REPLACE, path,
                           tnd_buf_detach(&old_text, NULL),
                           tnd_buf_detach(&new_text, NULL), at)) < 0)
            goto out;
        tnd_buf_init(&old_text, TND_BODY_MAX_FILE);
        tnd_buf_init(&new_text, TND_BODY_MAX_FILE);
    }
    if (!ps->new_path)
        rc = add_edit(ps, TND_EDIT_DELETE, path, NULL, NULL, 0);
    else if (!ps->old_path && ps->hunk == 0)
        rc = add_edit(ps, TND_EDIT_WRITE, path, NULL, NULL, 0); /* empty */
out:
    tnd_buf_free(&old_text);
    tnd_buf_free(&new_text);
    return rc;
}

/* "diff --git a/X b/X": remember X until ---/+++ lines take over. */
static void git_header(parse *ps, const reader *r)
{
    const char *s = r->line + 11, *e = r->line + r->len;
    size_t half;

    free(ps->git_path);
    ps->git_path = NULL;
    ps->git_new = ps->git_deleted = false;
    if (e - s > 4 && s[0] == '"') {
        /* "a/X" "b/X": quoted names, each as long as the other */
        half = (size_t)(e - s - 1) / 2;
        if (s[half] == ' ' && s[half + 1] == '"') {
            char *name = tnd_str_git_unquote(s, half);
            if (strncmp(name, "a/", 2) == 0)
                ps->git_path = tnd_xstrdup(name + 2);
            free(name);
        }
        return;
    }
    /* "a/X b/X": both names are the same without renames */
    if (e - s < 6 || s[0] != 'a' || s[1] != '/')
        return;
    half = (size_t)(e - s - 1) / 2;
    if (s[half] == ' ' && s[half + 1] == 'b' && s[half + 2] == '/')
        ps->git_path = tnd_xstrndup(s + 2, half - 2);
}

/* The header before this one had no ---/+++ lines: an empty file
 * created or deleted (a mode change alone is ignored). */
static int git_header_done(parse *ps)
{
    int rc = 0;

    if (ps->git_path && ps->git_new)
        rc = add_edit(ps, TND_EDIT_WRITE, ps->git_path, NULL, NULL, 0);
    else if (ps->git_path && ps->git_deleted)
        rc = add_edit(ps, TND_EDIT_DELETE, ps->git_path, NULL, NULL, 0);
    free(ps->git_path);
    ps->git_path = NULL;
    ps->git_new = ps->git_deleted = false;
    return rc;
}

/* `diff -ur old new` names one file "old/f" and "new/f": the same file
 * in two trees, not a rename (git's diffs say renames themselves). */
static void same_tree(parse *ps)
{
    const char *o, *n;

    if (!ps->old_path || !ps->new_path ||
        strcmp(ps->old_path, ps->new_path) == 0 ||
        !(o = strchr(ps->old_path, '/')) || !(n = strchr(ps->new_path, '/')) ||
        strcmp(o, n) != 0 || !o[1])
        return;
    memmove(ps->old_path, o + 1, strlen(o));
    free(ps->new_path);
    ps->new_path = tnd_xstrdup(ps->old_path);
}

/* Whether the raw name of a ---/+++ line is /dev/null or has git's
 * directory for its side before it ("a/" for ---, "b/" for +++). */
static bool side_named(const reader *r, char side)
{
    const char *tab = memchr(r->line + 4, '\t', r->len - 4);
    char *name = tnd_str_git_unquote(
        r->line + 4, tab ? (size_t)(tab - r->line - 4) : r->len - 4);
    bool named =
        (name[0] == side && name[1] == '/') || strcmp(name, "/dev/null") == 0;

    free(name);
    return named;
}

static void forget_file(parse *ps)
{
    free(ps->old_path);
    free(ps->new_path);
    ps->old_path = ps->new_path = NULL;
    ps->hunk = 0;
}

/* Whether the diff's own lines end in CRLF: its first header line
 * does. git writes its headers with LF whatever the files hold, and a
 * CRLF file's lines keep their '\r' as content (they were stripped, and
 * a review audited the file turned to LF). */
static bool crlf_diff(const char *diff, size_t len)
{
    reader r = {diff, diff + len, false, 0, NULL, 0};

    while (next_line(&r))
        if (starts(&r, "diff ") || starts(&r, "--- ") || starts(&r, "@@ "))
            return r.len > 0 && r.line[r.len - 1] == '\r';
    return false;
}

/* When the line at s (before end, the diff's end) whose bytes are not
 * UTF-8 is a header naming a file ("diff --git", or a ---/+++ pair: a
 * removed line "-- caf\xe9" is no header), the refusal of that file's
 * name (-1); else 0. prev: the line before, NULL for none. A name git
 * does not quote (core.quotePath=false, as a review of git changes
 * reads them) holds its bytes as they are. */
static int name_line_not_utf8(const char *prev, const char *s, const char *end)
{
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    reader r = {nl ? nl + 1 : end,
                end,
                false,
                0,
                s,
                nl ? (size_t)(nl - s) : (size_t)(end - s)};
    parse ps;
    char *path = NULL;
    int rc = 0;

    memset(&ps, 0, sizeof(ps));
    if (starts(&r, "diff --git ")) {
        git_header(&ps, &r);
        path = ps.git_path;
    } else if ((starts(&r, "--- ") && r.end - r.p >= 4 &&
                memcmp(r.p, "+++ ", 4) == 0) ||
               (starts(&r, "+++ ") && prev && s - prev >= 4 &&
                memcmp(prev, "--- ", 4) == 0))
        path = header_path(&r);
    if (path && !tnd_utf8_valid(path, strlen(path)))
        rc = name_not_utf8(path, strlen(path));
    free(path);
    return rc;
}

/* The refusal of a diff (len bytes, not NUL-terminated) that is not
 * UTF-8 from offset bad on: the line, and the file the last header
 * before it names. */
static int not_utf8(const char *diff, size_t len, size_t bad)
{
    size_t line = 1;
    const char *file = NULL, *start = diff, *prev = NULL, *p;
    char *raw = NULL, *name = NULL;
    int rc;

    for (p = diff; p < diff + bad; p++) {
        if (*p != '\n')
            continue;
        line++;
        prev = start;
        start = p + 1;
        if ((size_t)(diff + len - (p + 1)) >= 4 &&
            memcmp(p + 1, "+++ ", 4) == 0)
            file = p + 5;
    }
    rc = name_line_not_utf8(prev, start, diff + len);
    if (rc < 0)
        return rc;
    if (file) {
        const char *nl = memchr(file, '\n', (size_t)(diff + len - file));
        raw = tnd_xstrndup(file, nl ? (size_t)(nl - file)
                                    : (size_t)(diff + len - file));
        name = tnd_str_printable(raw, 200);
    }
    rc = tnd_error_set("line %zu%s%s: bytes that are not UTF-8; a review "
                       "audits text as UTF-8, so these would not be audited "
                       "as they are committed (review the rest with --diff "
                       "FILE, or commit with git commit --no-verify)",
                       line, name ? ", " : "", name ? name : "");
    free(raw);
    free(name);
    return rc;
}

/* What a refusal of a file tells the person (a commit's hook refused
 * it, or CI): how to go on without it. */
#define LEAVE_IT_OUT                                                     \
    " (leave it out and review the rest with --diff FILE, or commit it " \
    "with git commit --no-verify)"

/* The file of the "diff --git" header being read, for a message: a
 * binary change or a submodule refused at "line 11" alone did not say
 * which of the commit's files it was. NULL when no header named it.
 * Caller frees. */
static char *shown_name(const parse *ps)
{
    return ps->git_path ? tnd_str_printable(ps->git_path, 200) : NULL;
}

int tnd_unidiff_edits(tnd_edit **edits, size_t *n, const char *diff, size_t len)
{
    tnd_exec_change *modes = NULL;
    size_t nmodes = 0;
    int rc = tnd_unidiff_change(edits, n, &modes, &nmodes, diff, len);

    tnd_unidiff_exec_free(modes, nmodes);
    return rc;
}

int tnd_unidiff_change(tnd_edit **edits, size_t *n, tnd_exec_change **modes,
                       size_t *nmodes, const char *diff, size_t len)
{
    reader r = {diff, diff + len, crlf_diff(diff, len), 0, NULL, 0};
    const char *nul;
    parse ps;
    int rc = 0;

    memset(&ps, 0, sizeof(ps));
    *edits = NULL;
    *n = 0;
    *modes = NULL;
    *nmodes = 0;
    /* edits are C strings: a NUL would cut a path or a search text short
     * and stand for a change other than the one under review */
    if ((nul = memchr(diff, '\0', len)) != NULL) {
        size_t line = 1;
        for (const char *p = diff; p < nul; p++)
            line += *p == '\n';
        return tnd_error_set("line %zu: a NUL byte; only text changes can "
                             "be reviewed",
                             line);
    }
    /* edits are UTF-8, as JSON is: a stray byte became U+FFFD, so a
     * Latin-1 line was audited as another than the one committed */
    if (!tnd_utf8_valid(diff, len))
        return not_utf8(diff, len, tnd_utf8_valid_len(diff, len));
    while (rc == 0 && next_line(&r)) {
        if (starts(&r, "diff --git ")) {
            ps.git = true;
            rc = git_header_done(&ps);
            git_header(&ps, &r);
        } else if (not_a_file(&r)) {
            char *name = shown_name(&ps);
            rc = tnd_error_set("line %zu%s%s: %s (%.*s); only regular files "
                               "can be reviewed" LEAVE_IT_OUT,
                               r.lineno, name ? ", " : "", name ? name : "",
                               not_a_file(&r), (int)(r.len < 80 ? r.len : 80),
                               r.line);
            free(name);
        } else if (starts(&r, "new file mode ")) {
            ps.git_new = true;
            /* an executable file created (100644 is how one is made) */
            if (r.len == 20 && memcmp(r.line + 14, "100755", 6) == 0)
                rc = add_exec(&ps, &r, 14);
        } else if (starts(&r, "deleted file mode ")) {
            ps.git_deleted = true;
        } else if (mode_line(&r)) {
            ps.modes = true;
            if (starts(&r, "new mode "))
                rc = add_exec(&ps, &r, 9);
        } else if (starts(&r, "GIT binary patch") && ps.git_deleted &&
                   ps.git_path) {
            /* a binary file deleted (git diff --binary, as a review of
             * git changes makes it) is a deletion, whatever it held: it
             * was refused, and a hook stopped every commit removing an
             * image. Its lines that follow are ignored. ("Binary files
             * differ" for one git apply cannot apply: refused below.) */
            rc = git_header_done(&ps);
        } else if (starts(&r, "Binary files ") ||
                   starts(&r, "GIT binary patch")) {
            char *name = shown_name(&ps);
            rc = tnd_error_set("line %zu%s%s: a binary change; only text "
                               "changes can be reviewed" LEAVE_IT_OUT,
                               r.lineno, name ? ", " : "", name ? name : "");
            free(name);
        } else if (starts(&r, "rename from ") || starts(&r, "copy from "))
            rc = tnd_error_set("line %zu: renames and copies cannot be "
                               "reviewed yet (make the diff with "
                               "--no-renames)",
                               r.lineno);
        else if (starts(&r, "--- ") && r.end - r.p >= 4 &&
                 memcmp(r.p, "+++ ", 4) == 0) {
            bool old_absent = tnd_diff_epoch(r.line + 4, r.len - 4);
            bool named = side_named(&r, 'a'), new_absent;
            size_t at = r.lineno;
            char *was;
            free(ps.git_path);
            ps.git_path = NULL; /* the ---/+++ lines say it all */
            forget_file(&ps);
            ps.old_path = header_path(&r);
            next_line(&r);
            new_absent = tnd_diff_epoch(r.line + 4, r.len - 4);
            named = named && side_named(&r, 'b');
            ps.new_path = header_path(&r);
            was = ps.old_path ? tnd_xstrdup(ps.old_path) : NULL;
            if (!ps.git)
                same_tree(&ps);
            /* a name read whole ("--- src/f.c", as diff -u and svn diff
             * write them) is src/f.c to tandem and patch -p0, f.c to git
             * apply and patch -p1: which file it changes is not the
             * patch's to say */
            if (!named && (was || ps.new_path) &&
                !(was && ps.old_path && strcmp(was, ps.old_path) != 0)) {
                char *shown = tnd_str_one_line(was ? was : ps.new_path, 200);
                rc = tnd_error_set(
                    "line %zu: the file name '%s' has no a/ and b/ "
                    "directory before it: git apply and patch -p1 read it "
                    "one directory down, patch -p0 as it is, so which file "
                    "the patch changes depends on how it is applied; make "
                    "the patch with git diff, or with diff -ruN between two "
                    "directories",
                    at, shown);
                free(shown);
            }
            free(was);
            if (rc < 0)
                break;
            /* diff -N: the side dated the epoch is no file (a file
             * deleted was reviewed as one emptied, and approved) */
            if (old_absent && !ps.git) {
                free(ps.old_path);
                ps.old_path = NULL;
            }
            if (new_absent && !ps.git) {
                free(ps.new_path);
                ps.new_path = NULL;
            }
            rc = file_hunks(&ps, &r); /* its errors name the file */
        }
        /* anything else (diff --git, index, modes, prose) is ignored */
    }
    if (rc == 0)
        rc = git_header_done(&ps);
    if (rc == 0 && ps.n == 0 && !ps.modes && ps.nexec == 0)
        rc = tnd_error_set("no file changes found (is it a unified diff?)");
    forget_file(&ps);
    free(ps.git_path);
    if (rc < 0) {
        tnd_edit_list_free(ps.edits, ps.n);
        tnd_unidiff_exec_free(ps.exec, ps.nexec);
        return -1;
    }
    *edits = ps.edits;
    *n = ps.n;
    *modes = ps.exec;
    *nmodes = ps.nexec;
    return 0;
}
