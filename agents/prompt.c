/* Prompt texts and builders (see prompt.h). */
#include "agents/prompt.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/xalloc.h"
#include "skills/excerpt.h"

static const char coder_system[] =
    "You are the coder in a coder/reviewer pair. You change a repository "
    "to do the task you are given. A reviewer will build the project, run "
    "its tests and audit your change; only a change that passes gets "
    "through.\n"
    "\n"
    "Answer with one or two sentences saying what you change and why, "
    "then the edits. For each change write the file's path on a line of "
    "its own, then a block:\n"
    "\n"
    "path/to/file.c\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current file, enough to be unique\n"
    "=======\n"
    "the lines that replace them\n"
    "in full\n"
    ">>>>>>> REPLACE\n"
    "\n"
    "To create a file (or rewrite one completely) use:\n"
    "\n"
    "path/to/new_file.c\n"
    "<<<<<<< FILE\n"
    "the whole content of the file\n"
    ">>>>>>> FILE\n"
    "\n"
    "Rules: paths are relative to the repository root. SEARCH text must "
    "match the current file exactly, including indentation, and match "
    "only one place. Keep each block small. Change only what the task "
    "needs; do not reformat unrelated code. Each attempt starts again "
    "from the original files, so include every change you still want.\n";

static const char reviewer_system[] =
    "You are the reviewer in a coder/reviewer pair: a strict, fair code "
    "auditor. You get a task, the proposed change as a unified diff, and "
    "the results of the project's own tools (build, tests, linters) run "
    "on the changed tree. Judge the change on four criteria: completeness "
    "(does it do the whole task?), correctness (is it right, including "
    "edge cases?), safety (no crashes, leaks, security holes, or broken "
    "behaviour elsewhere?), quality (clear, idiomatic, minimal?).\n"
    "\n"
    "Tool results are evidence: a failing build or test is a problem "
    "with the change unless the output clearly shows otherwise. Cite "
    "evidence for every issue (tool output or file:line).\n"
    "\n"
    "Answer with exactly one JSON object and nothing else:\n"
    "{\n"
    "  \"verdict\": \"approve\" or \"revise\",\n"
    "  \"confidence\": a number from 0 to 1,\n"
    "  \"criteria\": {\n"
    "    \"completeness\": {\"score\": 0 to 1, \"reason\": \"...\"},\n"
    "    \"correctness\": {\"score\": 0 to 1, \"reason\": \"...\"},\n"
    "    \"safety\": {\"score\": 0 to 1, \"reason\": \"...\"},\n"
    "    \"quality\": {\"score\": 0 to 1, \"reason\": \"...\"}\n"
    "  },\n"
    "  \"issues\": [\n"
    "    {\"type\": \"missing|unsupported|incorrect|superfluous|safety|"
    "style\",\n"
    "     \"severity\": \"minor|major|critical\",\n"
    "     \"file\": \"path\", \"line\": 12,\n"
    "     \"description\": \"what is wrong\",\n"
    "     \"evidence\": \"the tool output or code that shows it\",\n"
    "     \"suggested_fix\": \"how to fix it\"}\n"
    "  ],\n"
    "  \"summary\": \"one or two sentences\"\n"
    "}\n"
    "Every issue must cite its evidence: a tool excerpt or the code in "
    "\"evidence\", or the \"file\" and \"line\" it is about. "
    "Use \"approve\" only when the change does the task correctly and no "
    "major or critical issue remains. Minor issues may accompany an "
    "approval.\n";

const char *tnd_prompt_coder_system(void)
{
    return coder_system;
}

const char *tnd_prompt_reviewer_system(void)
{
    return reviewer_system;
}

/* A fence longer than any run of backticks inside text, so file contents
 * cannot close it early. */
static void fenced(tnd_buf *b, const char *lang, const char *text)
{
    size_t longest = 0, run = 0;
    char fence[32];

    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    if (longest < 3)
        longest = 2;
    if (longest > sizeof(fence) - 2)
        longest = sizeof(fence) - 2;
    memset(fence, '`', longest + 1);
    fence[longest + 1] = '\0';
    tnd_buf_printf(b, "%s%s\n%s", fence, lang, text);
    if (*text && text[strlen(text) - 1] != '\n')
        tnd_buf_puts(b, "\n");
    tnd_buf_printf(b, "%s\n", fence);
}

char *tnd_prompt_coder_user(const tnd_code_request *req)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, TND_PROMPT_TASK, req->task);
    if (req->nlessons) {
        tnd_buf_puts(&b, "## Lessons from earlier tasks in this repository\n"
                         "\nThese went wrong here before; do not repeat "
                         "them.\n\n");
        for (size_t i = 0; i < req->nlessons; i++)
            tnd_buf_printf(&b, "- %s\n", req->lessons[i]);
        tnd_buf_puts(&b, "\n");
    }
    if (req->repo_map && *req->repo_map) {
        tnd_buf_puts(&b, "## Repository files (path, bytes)\n\n");
        fenced(&b, "", req->repo_map);
        tnd_buf_puts(&b, "\n");
    }
    if (req->nfiles) {
        tnd_buf_puts(&b, "## Current contents\n\n");
        for (size_t i = 0; i < req->nfiles; i++) {
            tnd_buf_printf(&b, "%s\n", req->files[i].path);
            fenced(&b, "", req->files[i].content);
            tnd_buf_puts(&b, "\n");
        }
    }
    if (req->feedback && *req->feedback && req->attempt <= 1)
        tnd_buf_printf(&b, "## The project's checks now\n\n%s\n\n",
                       req->feedback);
    else if (req->feedback && *req->feedback)
        tnd_buf_printf(&b,
                       "## Your previous attempt was not accepted "
                       "(this is attempt %d)\n\n%s\n\n",
                       req->attempt, req->feedback);
    tnd_buf_puts(&b, "Answer with a short explanation and the edit "
                     "blocks.\n");
    return tnd_buf_detach(&b, NULL);
}

char *tnd_prompt_coder_retry(const tnd_code_request *req, const char *error)
{
    char *user = tnd_prompt_coder_user(req);
    char *out = tnd_xasprintf(
        "%s\n## Your last answer could not be used\n\n%s\n\nAnswer again, "
        "with every change as a path line followed by a SEARCH/REPLACE or "
        "FILE block exactly as described.\n",
        user, error);

    free(user);
    return out;
}

/* A skill's output in the reviewer's prompt: the lines that say what
 * failed first, then the tail (skills/excerpt.h). A build can print a
 * megabyte; the model needs what went wrong, not every warning. */
#define OUTPUT_MAX (16 * 1024)

/* Source lines shown around each location a skill reports. */
#define SNIPPET_CONTEXT  3
#define SNIPPET_LINE_MAX 240
#define SNIPPETS_MAX     (8 * 1024) /* per skill */
#define SNIPPET_SCAN_MAX (16 << 20) /* bytes read per skill to reach lines */

/* Lines from..to of the file at loc (beneath the workspace, open as
 * root) appended to out, numbered, the location's own line marked with
 * '>'; long lines cut. At most *budget bytes are read, and what was read
 * is taken from it. -1 when the file cannot be read or the lines are not
 * there within the budget. */
static int snippet(tnd_buf *out, int root, const tnd_location *loc, long from,
                   long to, size_t *budget)
{
    /* Opened beneath the workspace at this moment, no symlink followed:
     * the place was a file inside it when its skill ended, but a skill
     * that ran since (sequential or beside it) can have put a link to
     * any file of this user there, which would go to the model. And a
     * build may leave a FIFO or a device: open without blocking, and
     * read only a regular file. */
    int fd =
        tnd_beneath_open(root, loc->file, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    struct stat st;
    FILE *f = NULL;
    long line = 1, shown = 0, last;
    size_t col = 0;
    int c;

    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        f = fdopen(fd, "r");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    while (line <= to && *budget > 0 && (c = getc(f)) != EOF) {
        --*budget;
        if (line >= from && col == 0)
            tnd_buf_printf(out, "%c%5ld |%s", line == loc->line ? '>' : ' ',
                           line, c == '\n' ? "" : " ");
        if (c == '\n') {
            if (line >= from) {
                tnd_buf_puts(out, "\n");
                shown++;
            }
            line++;
            col = 0;
            continue;
        }
        if (line >= from && col < SNIPPET_LINE_MAX && c != '\r')
            tnd_buf_append(out, (char[]){(char)c}, 1);
        else if (line >= from && col == SNIPPET_LINE_MAX)
            tnd_buf_puts(out, " [...]");
        col++;
    }
    if (col && line >= from && line <= to) {
        tnd_buf_puts(out, "\n");
        shown++;
    }
    fclose(f);
    last = col ? line : line - 1;
    return shown && loc->line <= last ? 0 : -1;
}

/* The code around each location of s, within SNIPPETS_MAX bytes shown
 * and SNIPPET_SCAN_MAX read (50 places deep in a large file read 16 MiB
 * each); a location inside a window already shown is not shown again. */
static void locations_part(tnd_buf *b, const char *workspace,
                           const tnd_skill_result *s)
{
    size_t used = 0, hidden = 0, budget = SNIPPET_SCAN_MAX;
    tnd_buf one;
    int root;

    if (!s->nlocations)
        return;
    if ((root = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return;
    tnd_buf_init(&one, TND_BUF_NOCAP);
    tnd_buf_puts(b, "Code at the places it reports:\n\n");
    for (size_t i = 0; i < s->nlocations; i++) {
        const tnd_location *loc = &s->locations[i];
        long from =
            loc->line > SNIPPET_CONTEXT ? loc->line - SNIPPET_CONTEXT : 1;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) {
            const tnd_location *o = &s->locations[k];
            seen = !strcmp(o->file, loc->file) &&
                   loc->line >= o->line - SNIPPET_CONTEXT &&
                   loc->line <= o->line + SNIPPET_CONTEXT;
        }
        if (seen)
            continue;
        tnd_buf_reset(&one);
        if (used >= SNIPPETS_MAX || budget == 0) {
            hidden++; /* nothing more is read once the room is used */
            continue;
        }
        if (snippet(&one, root, loc, from, loc->line + SNIPPET_CONTEXT,
                    &budget) < 0) {
            hidden += budget == 0; /* there, maybe, past what may be read */
            continue;
        }
        if (used + one.len > SNIPPETS_MAX) {
            hidden++;
            continue;
        }
        used += one.len;
        if (loc->col > 0)
            tnd_buf_printf(b, "%s:%ld:%ld\n", loc->file, loc->line, loc->col);
        else
            tnd_buf_printf(b, "%s:%ld\n", loc->file, loc->line);
        fenced(b, "", tnd_buf_str(&one));
    }
    if (hidden)
        tnd_buf_printf(b, "(%zu more place%s not shown)\n", hidden,
                       hidden == 1 ? "" : "s");
    tnd_buf_puts(b, "\n");
    tnd_buf_free(&one);
    close(root);
}

char *tnd_prompt_reviewer_user(const tnd_audit_request *req,
                               const tnd_skill_result *skills, size_t nskills)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, TND_PROMPT_TASK, req->task);
    tnd_buf_puts(&b, "## Proposed change\n\n");
    fenced(&b, "diff", req->diff);
    tnd_buf_puts(&b, "\n## Tool results on the changed tree\n\n");
    if (nskills == 0)
        tnd_buf_puts(&b, "No tools were configured.\n\n");
    for (size_t i = 0; i < nskills; i++) {
        const tnd_skill_result *s = &skills[i];
        tnd_buf_printf(&b, "### %s (`%s`): %s", s->name, s->command,
                       tnd_skill_status_name(s->status));
        if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
            tnd_buf_printf(&b, ", exit %d", s->exit_code);
        tnd_buf_printf(&b, ", %s\n\n", s->required ? "required" : "advisory");
        if (s->nchanged) {
            tnd_buf_printf(&b,
                           "The %s skill changed files under review:", s->name);
            for (size_t k = 0; k < s->nchanged; k++)
                tnd_buf_printf(&b, "%s %s", k ? "," : "", s->changed[k]);
            tnd_buf_puts(&b, ". A tool that rewrites the code it checks (a "
                             "formatter, a generator) means the change does "
                             "not match the project's own tooling: raise a "
                             "style issue naming these files.\n\n");
        }
        if (s->output && *s->output) {
            char *seen = tnd_excerpt(s->output, NULL, OUTPUT_MAX, NULL);
            fenced(&b, "", seen);
            free(seen);
        } else
            tnd_buf_puts(&b, "(no output)\n");
        tnd_buf_puts(&b, "\n");
        locations_part(&b, req->workspace, s);
    }
    tnd_buf_puts(&b, "Answer with the JSON object only.\n");
    return tnd_buf_detach(&b, NULL);
}

char *tnd_prompt_reviewer_retry(const char *user, const char *error)
{
    return tnd_xasprintf("%s\n## Your last answer could not be used\n\n%s"
                         "\n\nAnswer again with exactly one JSON object in "
                         "the format described.\n",
                         user, error);
}
