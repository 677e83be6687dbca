/* `tandem lessons` (see lessons_cmd.h): parse the subcommand and its
 * options, load the bank, print or change it. The bank's rules live in
 * lessons.c; this file only shows them to people. */
#include "orchestrator/lessons_cmd.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/lessons.h"
#include "orchestrator/run.h"

void tnd_cmd_lessons_usage(const char *cmd, FILE *to)
{
    (void)cmd;
    fputs("usage: tandem lessons COMMAND [options]\n"
          "\n"
          "The lessons bank: what earlier tasks in a repository got wrong\n"
          "and what fixed it, so the coder is told before it repeats a\n"
          "mistake. A lesson is filed under a task type (fix, test,\n"
          "feature, refactor, docs, other) and the files involved; the\n"
          "coder gets the few most relevant ones, and each lesson's\n"
          "effectiveness follows how often the tasks it went to succeeded.\n"
          "The bank is REPO/.tandem/lessons.json.\n"
          "\n"
          "commands:\n"
          "  list            a table of the lessons, oldest first\n"
          "  show ID         one lesson in full\n"
          "  forget ID       delete one lesson\n"
          "\n"
          "ID may be the start of a lesson's id when no other id starts\n"
          "the same way.\n"
          "\n"
          "options:\n"
          "  --repo DIR      the repository (default: .)\n"
          "  -h, --help      show this help\n"
          "\n"
          "exit status: 0 ok, 1 the bank cannot be read or written, 2 usage\n"
          "error (an unknown or ambiguous ID included)\n"
          "\n"
          "'tandem lessons COMMAND --help' shows a command's help.\n",
          to);
}

/* A subcommand, and what its help says. */
typedef struct command {
    const char *name;
    bool wants_id;
    const char *about; /* what it does */
    const char *exits; /* its exit statuses */
} command;

static const command commands[] = {
    {"list", false,
     "A table of the lessons in REPO/.tandem/lessons.json, oldest\n"
     "first: id, task type, effectiveness (0..1, 0.50 when new), how\n"
     "many times it went to the coder, when it was learnt (UTC), and\n"
     "the first line of the mistake.",
     "0 ok, 1 the bank cannot be read, 2 usage error"},
    {"show", true,
     "Everything about one lesson: its record, the files it is about,\n"
     "the mistake and the correction. ID may be the start of the id.",
     "0 ok, 1 the bank cannot be read, 2 usage error (an\n"
     "unknown or ambiguous ID included)"},
    {"forget", true,
     "Delete one lesson from the bank, e.g. one that is wrong or no\n"
     "longer true. ID may be the start of the id.",
     "0 ok, 1 the bank cannot be read or written, 2 usage\n"
     "error (an unknown or ambiguous ID included)"},
};

/* The subcommand called name; NULL when there is none. */
static const command *find(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

/* The help of "lessons NAME". */
static void command_usage(const char *cmd, FILE *to)
{
    const command *c = find(strchr(cmd, ' ') + 1);

    fprintf(to,
            "usage: tandem lessons %s [--repo DIR]%s\n"
            "\n"
            "%s\n"
            "\n"
            "options:\n"
            "  --repo DIR      the repository (default: .)\n"
            "  -h, --help      show this help\n"
            "\n"
            "exit status: %s\n",
            c->name, c->wants_id ? " ID" : "", c->about, c->exits);
}

/* Parse a subcommand's options and operand. Returns -1 to go on, or the
 * exit code to return at once. */
static int parse(const command *c, int argc, char **argv, const char **repo,
                 const char **id)
{
    static const int accepts[] = {TND_OPT_REPO, 0};
    char name[32];
    tnd_cli cli;
    int opt;

    *repo = ".";
    *id = NULL;
    snprintf(name, sizeof(name), "lessons %s", c->name);
    tnd_cli_start(&cli, name, command_usage, accepts, false, argc, argv);
    while ((opt = tnd_cli_next(&cli)) > 0)
        *repo = optarg; /* TND_OPT_REPO */
    if (opt < 0)
        return cli.status;
    if (c->wants_id && optind < argc)
        *id = argv[optind++];
    if (c->wants_id && !*id)
        return tnd_cli_error(&cli, "which lesson? give its id (see 'tandem "
                                   "lessons list')");
    if (optind < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'", argv[optind]);
    if (!tnd_fs_is_dir(*repo))
        return tnd_cli_error(&cli,
                             "--repo %s is not a directory; give the "
                             "repository's path",
                             *repo);
    return -1;
}

/* The first line of a text, printable, at most max bytes. Caller frees. */
static char *first_line(const char *s, size_t max)
{
    char *line = tnd_xstrndup(s, strcspn(s, "\n"));
    char *out = tnd_str_printable(line, max);

    free(line);
    return out;
}

static int list(const tnd_lessons *b)
{
    size_t n = tnd_lessons_count(b);

    if (n == 0) {
        printf("no lessons yet (%s)\n", tnd_lessons_path(b));
        return TND_EXIT_OK;
    }
    printf("%-8s  %-8s  %-6s  %-7s  %-16s  %s\n", "ID", "TYPE", "EFFECT",
           "APPLIED", "CREATED (UTC)", "MISTAKE");
    for (size_t i = 0; i < n; i++) {
        const tnd_lesson *l = tnd_lessons_at(b, i);
        char *mistake = first_line(l->mistake, 60);
        char created[17];
        snprintf(created, sizeof(created), "%.10s %.5s", l->created,
                 l->created + 11);
        printf("%-8s  %-8s  %-6.2f  %-7ld  %-16s  %s\n", l->id, l->task_type,
               l->effectiveness, l->times_applied, created, mistake);
        free(mistake);
    }
    return TND_EXIT_OK;
}

/* Append s made printable, each line indented by two spaces. */
static void indented(tnd_buf *b, const char *s)
{
    char *p = tnd_str_printable(s, TND_LESSON_TEXT_MAX), *line = p;

    for (char *nl; line; line = nl ? nl + 1 : NULL) {
        if ((nl = strchr(line, '\n')))
            *nl = '\0';
        if (*line || nl)
            tnd_buf_printf(b, "  %s\n", line);
    }
    free(p);
}

static int show(const tnd_lessons *b, const char *id)
{
    const tnd_lesson *l;
    tnd_buf out;

    if (tnd_lessons_find(&l, b, id) < 0) {
        fprintf(stderr, "tandem lessons show: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    tnd_buf_init(&out, TND_BUF_NOCAP);
    tnd_buf_printf(&out,
                   "id             %s\n"
                   "task type      %s\n"
                   "effectiveness  %.2f\n"
                   "times applied  %ld\n"
                   "created        %s\n"
                   "context hash   %016llx\n",
                   l->id, l->task_type, l->effectiveness, l->times_applied,
                   l->created, (unsigned long long)l->context_hash);
    for (size_t i = 0; i < l->npaths || i == 0; i++) {
        char *p = i < l->npaths ? tnd_str_printable(l->paths[i], 200)
                                : tnd_xstrdup("(none)");
        tnd_buf_printf(&out, "%-15s%s\n", i == 0 ? "paths" : "", p);
        free(p);
    }
    tnd_buf_puts(&out, "mistake:\n");
    indented(&out, l->mistake);
    tnd_buf_puts(&out, "correction:\n");
    indented(&out, l->correction);
    fputs(tnd_buf_str(&out), stdout);
    tnd_buf_free(&out);
    return TND_EXIT_OK;
}

static int forget(tnd_lessons *b, const char *id)
{
    const tnd_lesson *l;
    char full[TND_LESSON_ID_MAX + 1], *mistake;

    if (tnd_lessons_find(&l, b, id) < 0) {
        fprintf(stderr, "tandem lessons forget: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    strcpy(full, l->id);
    mistake = first_line(l->mistake, 60);
    if (tnd_lessons_forget(b, full) < 0 || tnd_lessons_save(b) < 0) {
        fprintf(stderr, "tandem lessons forget: %s\n", tnd_error_last());
        free(mistake);
        return TND_EXIT_FAILED;
    }
    printf("forgot lesson %s (%s)\n", full, mistake);
    free(mistake);
    return TND_EXIT_OK;
}

int tnd_cmd_lessons(const char *cmd, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL, *repo, *id;
    const command *c = NULL;
    tnd_lessons *b;
    int code;

    if (!sub) {
        tnd_cmd_lessons_usage(cmd, stderr);
        return TND_EXIT_USAGE;
    }
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
        tnd_cmd_lessons_usage(cmd, stdout);
        return TND_EXIT_OK;
    }
    if (!(c = find(sub))) {
        fprintf(stderr,
                "tandem lessons: unknown command '%s' (list, show or "
                "forget)\ntry 'tandem lessons --help'\n",
                sub);
        return TND_EXIT_USAGE;
    }
    if ((code = parse(c, argc - 1, argv + 1, &repo, &id)) >= 0)
        return code;
    if (!(b = tnd_lessons_open(repo))) {
        fprintf(stderr,
                "tandem lessons %s: %s\n(fix the file, or delete it to start "
                "an empty bank)\n",
                c->name, tnd_error_last());
        return TND_EXIT_FAILED;
    }
    code = c == &commands[0]   ? list(b)
           : c == &commands[1] ? show(b, id)
                               : forget(b, id);
    tnd_lessons_close(&b);
    return code;
}
