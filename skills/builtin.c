/* The built-in skills (see builtin.h).
 *
 * Both read the diff once with tnd_patch_parse; the git skill looks at
 * each added line as the parser hands it over, so memory stays bounded
 * by the number of findings kept, not by the size of the diff. Every
 * scan is linear in the line it looks at. */
#include "skills/builtin.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/glob.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "skills/patch.h"

#define FILES_SHOWN 50

/* Kinds of finding, in the order the report lists them; each kind has
 * its own share of the output, so a flood of one (a thousand conflict
 * markers) cannot hide another (one key). */
enum { K_SECRET, K_FORBIDDEN, K_LARGE, K_LINES, K_CONFLICT, K_DOCS, KINDS };

typedef struct report {
    tnd_buf kind[KINDS]; /* "path:line: what\n" lines */
    size_t count[KINDS]; /* all findings, also those not kept */
    size_t shown[KINDS];
    size_t room; /* bytes each kind may take */
} report;

static void finding(report *r, int kind, const char *fmt, ...) TND_PRINTF(3, 4);

static void finding(report *r, int kind, const char *fmt, ...)
{
    char line[TND_BODY_MAX_PATH + 256];
    va_list ap;
    int n;

    r->count[kind]++;
    if (r->kind[kind].len >= r->room)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0 && r->kind[kind].len + (size_t)n + 1 <= r->room) {
        tnd_buf_printf(&r->kind[kind], "%s\n", line);
        r->shown[kind]++;
    }
}

static size_t total(const report *r)
{
    size_t n = 0;

    for (int k = 0; k < KINDS; k++)
        n += r->count[k];
    return n;
}

/* ---- secrets ------------------------------------------------------------ */

static bool word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Count of chars at s[0..max) that are in set (or alnum when set is
 * NULL), stopping at the first that is not. */
static size_t run_of(const char *s, size_t max, const char *set)
{
    size_t i = 0;

    while (i < max &&
           (isalnum((unsigned char)s[i]) || (set && s[i] && strchr(set, s[i]))))
        i++;
    return i;
}

static bool has(const char *text, size_t len, const char *needle)
{
    return memmem(text, len, needle, strlen(needle)) != NULL;
}

/* `NAME = "VALUE"` or `NAME: 'VALUE'` where NAME says key, secret,
 * token or password and VALUE is 16+ characters that are not a
 * placeholder (${X}, <your key>, xxxx...). */
static bool assigned_secret(const char *t, size_t len)
{
    static const char *const names[] = {"api_key", "apikey",      "api-key",
                                        "secret",  "token",       "password",
                                        "passwd",  "private_key", NULL};

    for (size_t i = 0; i < len;) {
        size_t start = i, end, v, vlen;
        char name[64], quote;
        bool named = false;
        while (i < len && (word(t[i]) || t[i] == '-'))
            i++;
        end = i;
        if (end == start) {
            i++;
            continue;
        }
        if (end - start >= sizeof(name))
            continue;
        for (size_t k = start; k < end; k++)
            name[k - start] = (char)tolower((unsigned char)t[k]);
        name[end - start] = '\0';
        for (int k = 0; names[k] && !named; k++)
            named = strstr(name, names[k]) != NULL;
        if (!named)
            continue;
        v = end;
        if (v < len && (t[v] == '"' || t[v] == '\''))
            v++;
        while (v < len && (t[v] == ' ' || t[v] == '\t'))
            v++;
        if (v < len && t[v] == ':' && v + 1 < len && t[v + 1] == '=')
            v++;
        if (v >= len || (t[v] != '=' && t[v] != ':'))
            continue;
        v++;
        if (v < len && t[v] == '>')
            v++;
        while (v < len && (t[v] == ' ' || t[v] == '\t'))
            v++;
        if (v >= len || !strchr("\"'`", t[v]))
            continue;
        quote = t[v++];
        for (vlen = 0; v + vlen < len && t[v + vlen] != quote; vlen++)
            if (isspace((unsigned char)t[v + vlen]) ||
                strchr("${}<>%", t[v + vlen]))
                break;
        if (v + vlen < len && t[v + vlen] == quote && vlen >= 16) {
            bool varied = false;
            for (size_t k = 1; k < vlen && !varied; k++)
                varied = t[v + k] != t[v];
            if (varied)
                return true;
        }
    }
    return false;
}

const char *tnd_builtin_secret(const char *t, size_t len)
{
    static const char *const gh[] = {"ghp_", "gho_", "ghs_",
                                     "ghu_", "ghr_", NULL};

    if (has(t, len, "-----BEGIN ") && has(t, len, "PRIVATE KEY"))
        return "a private key (PEM header)";
    for (size_t i = 0; i < len; i++) {
        bool edge = i == 0 || !isalnum((unsigned char)t[i - 1]);
        size_t rest = len - i;
        if (!edge)
            continue;
        if (rest >= 20 && !memcmp(t + i, "AKIA", 4)) {
            size_t k = 4;
            while (k < 20 && (isupper((unsigned char)t[i + k]) ||
                              isdigit((unsigned char)t[i + k])))
                k++;
            if (k == 20 && (rest == 20 || !isalnum((unsigned char)t[i + 20])))
                return "an AWS access key id";
        }
        for (int g = 0; gh[g]; g++)
            if (rest >= 40 && !memcmp(t + i, gh[g], 4) &&
                run_of(t + i + 4, rest - 4, NULL) >= 36)
                return "a GitHub token";
        if (rest >= 15 && !memcmp(t + i, "xox", 3) &&
            strchr("baprs", t[i + 3]) && t[i + 3] && t[i + 4] == '-' &&
            run_of(t + i + 5, rest - 5, "-") >= 10)
            return "a Slack token";
        if (rest >= 23 && !memcmp(t + i, "sk-", 3) &&
            run_of(t + i + 3, rest - 3, "-_") >= 20)
            return "an API secret key (sk-...)";
    }
    if (assigned_secret(t, len))
        return "a secret assigned to a key, token or password name";
    return NULL;
}

/* ---- git ---------------------------------------------------------------- */

typedef struct git_scan {
    report *r;
} git_scan;

static bool line_is(const char *t, size_t len, const char *marker)
{
    size_t n = strlen(marker);
    return len == n && !memcmp(t, marker, n);
}

static void git_line(const tnd_patch *patch, size_t file, long line,
                     const char *text, size_t len, void *payload)
{
    git_scan *g = payload;
    const char *path = patch->files[file].path, *kind;

    if ((len >= 8 &&
         (!memcmp(text, "<<<<<<< ", 8) || !memcmp(text, ">>>>>>> ", 8))) ||
        line_is(text, len, "<<<<<<<") || line_is(text, len, ">>>>>>>") ||
        line_is(text, len, "======="))
        finding(g->r, K_CONFLICT, "%s:%ld: adds a merge conflict marker", path,
                line);
    else if ((kind = tnd_builtin_secret(text, len)) != NULL)
        finding(g->r, K_SECRET, "%s:%ld: adds what looks like %s", path, line,
                kind);
}

/* The size of an added file: the workspace's copy, else its diff lines. */
static unsigned long long added_size(const char *workspace,
                                     const tnd_patch_file *f)
{
    struct stat st;
    char *full;
    bool ok;

    if (!workspace)
        return f->added_bytes;
    full = tnd_fs_join(workspace, f->path);
    ok = lstat(full, &st) == 0 && S_ISREG(st.st_mode);
    free(full);
    return ok ? (unsigned long long)st.st_size : f->added_bytes;
}

static void git_files(report *r, const tnd_skill_config *skill,
                      const char *workspace, const tnd_patch *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        const tnd_patch_file *f = &p->files[i];
        const char *names[] = {f->path, f->old_path};
        for (int k = 0; k < 2; k++) {
            bool seen_new = k == 1 && !strcmp(f->old_path, f->path);
            const char *pat = NULL;
            if (seen_new)
                continue;
            for (char **g = skill->forbid; g && *g && !pat; g++)
                if (tnd_glob_match(*g, names[k]))
                    pat = *g;
            if (!pat)
                continue;
            if (f->deleted || k == 1)
                finding(r, K_FORBIDDEN,
                        "%s: changes a forbidden path (forbid: %s)", names[k],
                        pat);
            else
                finding(r, K_FORBIDDEN,
                        "%s:%ld: changes a forbidden path (forbid: %s)",
                        names[k], f->first_line > 0 ? f->first_line : 1, pat);
        }
        if (f->created && skill->max_file_bytes) {
            unsigned long long size = added_size(workspace, f);
            if (size > skill->max_file_bytes)
                finding(r, K_LARGE,
                        "%s:1: adds a file of %llu KiB, over max_file_kb "
                        "%zu",
                        f->path, (size + 1023) / 1024,
                        skill->max_file_bytes / 1024);
        }
    }
    if (skill->max_changed_lines > 0 &&
        p->added + p->removed > (size_t)skill->max_changed_lines)
        finding(r, K_LINES,
                "the change has %zu changed lines (+%zu -%zu), over "
                "max_changed_lines %d",
                p->added + p->removed, p->added, p->removed,
                skill->max_changed_lines);
}

/* The diff's statistics, within room bytes. */
static void stats(tnd_buf *out, const char *name, const tnd_patch *p,
                  size_t room)
{
    size_t i;

    tnd_buf_printf(out, "%s: %zu file%s changed, +%zu -%zu\n", name, p->nfiles,
                   p->nfiles == 1 ? "" : "s", p->added, p->removed);
    for (i = 0; i < p->nfiles && i < FILES_SHOWN && out->len < room; i++) {
        const tnd_patch_file *f = &p->files[i];
        tnd_buf_printf(out, "  %s", f->path);
        if (strcmp(f->old_path, f->path) != 0)
            tnd_buf_printf(out, " (renamed from %s)", f->old_path);
        if (f->binary)
            tnd_buf_puts(out, " binary");
        else
            tnd_buf_printf(out, " +%zu -%zu", f->added, f->removed);
        tnd_buf_puts(out, f->created   ? " (new)\n"
                          : f->deleted ? " (deleted)\n"
                                       : "\n");
    }
    if (i < p->nfiles)
        tnd_buf_printf(out, "  ... and %zu more files\n", p->nfiles - i);
}

/* ---- docs --------------------------------------------------------------- */

static void docs_check(report *r, tnd_buf *out, const tnd_skill_config *skill,
                       const tnd_patch *p)
{
    size_t npublic = 0, ndocs = 0;
    tnd_buf docs_list;

    tnd_buf_init(&docs_list, TND_BUF_NOCAP);
    for (char **g = skill->docs_paths; g && *g; g++)
        tnd_buf_printf(&docs_list, "%s%s", g == skill->docs_paths ? "" : ", ",
                       *g);
    for (size_t i = 0; i < p->nfiles; i++) {
        const tnd_patch_file *f = &p->files[i];
        if (tnd_glob_match_any(skill->docs_paths, f->path) ||
            tnd_glob_match_any(skill->docs_paths, f->old_path)) {
            if (ndocs++ < FILES_SHOWN)
                tnd_buf_printf(out, "documentation changed: %s\n", f->path);
        }
    }
    for (size_t i = 0; i < p->nfiles; i++) {
        const tnd_patch_file *f = &p->files[i];
        if (!tnd_glob_match_any(skill->public_paths, f->path) &&
            !tnd_glob_match_any(skill->public_paths, f->old_path))
            continue;
        npublic++;
        if (ndocs)
            continue;
        if (f->deleted || f->first_line <= 0)
            finding(r, K_DOCS,
                    "%s: public path changed, but no documentation did "
                    "(docs: %s)",
                    f->path, tnd_buf_str(&docs_list));
        else
            finding(r, K_DOCS,
                    "%s:%ld: public path changed, but no documentation "
                    "did (docs: %s)",
                    f->path, f->first_line, tnd_buf_str(&docs_list));
    }
    if (!npublic)
        tnd_buf_puts(out, "no public path changed\n");
    else if (ndocs)
        tnd_buf_printf(out,
                       "%zu public path%s changed, and so did the "
                       "documentation\n",
                       npublic, npublic == 1 ? "" : "s");
    tnd_buf_free(&docs_list);
}

/* ---- running ------------------------------------------------------------ */

void tnd_builtin_run(tnd_skill_result *out, const tnd_skill_config *skill,
                     const char *workspace, const char *diff)
{
    int64_t start = tnd_now_ms();
    size_t cap = skill->output_cap ? skill->output_cap : 64 * 1024;
    bool git = strcmp(skill->builtin, "git") == 0;
    tnd_patch patch;
    git_scan scan;
    report r;
    tnd_buf text;

    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    out->name = tnd_xstrdup(skill->name);
    out->required = skill->required;
    out->command = tnd_xasprintf("builtin: %s", skill->builtin);
    for (int k = 0; k < KINDS; k++)
        tnd_buf_init(&r.kind[k], TND_BUF_NOCAP);
    tnd_buf_init(&text, TND_BUF_NOCAP);
    r.room = cap / 2 / KINDS;
    scan.r = &r;
    if (tnd_patch_parse(&patch, diff ? diff : "", diff ? strlen(diff) : 0,
                        git ? git_line : NULL, &scan) < 0) {
        out->status = TND_SKILL_ERROR;
        out->exit_code = -1;
        out->output = tnd_xasprintf("%s: cannot read the diff: %s\n",
                                    skill->name, tnd_error_last());
        goto done;
    }
    stats(&text, skill->name, &patch, cap / 4);
    if (git)
        git_files(&r, skill, workspace, &patch);
    else
        docs_check(&r, &text, skill, &patch);
    for (int k = 0; k < KINDS; k++) {
        tnd_buf_puts(&text, tnd_buf_str(&r.kind[k]));
        if (r.shown[k] < r.count[k])
            tnd_buf_printf(&text, "... and %zu more like %s\n",
                           r.count[k] - r.shown[k],
                           r.shown[k] ? "these" : "this");
    }
    if (total(&r))
        tnd_buf_printf(&text, "%s: %zu problem%s found\n", skill->name,
                       total(&r), total(&r) == 1 ? "" : "s");
    else
        tnd_buf_printf(&text, "%s: no problems found\n", skill->name);
    out->status = total(&r) ? TND_SKILL_FAIL : TND_SKILL_PASS;
    out->exit_code = total(&r) ? 1 : 0;
    out->output = tnd_buf_detach(&text, NULL);
done:
    out->duration_ms = (long)(tnd_now_ms() - start);
    tnd_patch_clear(&patch);
    for (int k = 0; k < KINDS; k++)
        tnd_buf_free(&r.kind[k]);
    tnd_buf_free(&text);
}
