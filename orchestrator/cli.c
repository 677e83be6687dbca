/* Parsing tandem's options one way (see cli.h). */
#include "orchestrator/cli.h"

#include <assert.h>
#include <stdarg.h>
#include <string.h>

#include "orchestrator/run.h"

/* The long options' names, in tnd_cli_opt's order from TND_OPT_REPO. */
static const char *const long_names[] = {
    "repo",       "config",      "llm",      "base-url",       "task-file",
    "record",     "diff",        "timeout",  "iterations",     "tokens",
    "older-than", "for",         "format",   "bind",           "max-sessions",
    "queue-max",  "drain-s",     "state",    "connect",        "attach",
    "out",        "name",        "on-error", "keep-workspace", "staged",
    "waiting",    "dry-run",     "json",     "force",          "detach",
    "status",     "allow-empty", "plain",
};
_Static_assert(sizeof(long_names) / sizeof(long_names[0]) ==
                   TND_OPT_PLAIN - TND_OPT_REPO + 1,
               "a long option without a name, or a name without an option");

/* The options with a letter. */
static const struct option letters[] = {
    {"message", required_argument, NULL, TND_OPT_MESSAGE},
    {"quiet", no_argument, NULL, TND_OPT_QUIET},
    {"verbose", no_argument, NULL, TND_OPT_VERBOSE},
    {"help", no_argument, NULL, 'h'},
};

#define NLONG    ((int)(sizeof(long_names) / sizeof(long_names[0])))
#define NLETTERS (sizeof(letters) / sizeof(letters[0]))

/* getopt's description of option id. */
static struct option option_of(int id)
{
    struct option o = {NULL, no_argument, NULL, id};

    if (id >= TND_OPT_REPO) {
        assert(id - TND_OPT_REPO < NLONG);
        o.name = long_names[id - TND_OPT_REPO];
        if (id < TND_OPT_KEEP_WORKSPACE)
            o.has_arg = required_argument;
        return o;
    }
    for (size_t i = 0; i < NLETTERS; i++)
        if (letters[i].val == id)
            return letters[i];
    assert(!"an option tnd_cli_opt does not list");
    return o;
}

void tnd_cli_start(tnd_cli *self, const char *cmd, tnd_cli_usage_fn *usage,
                   const int *accepts, bool in_order, int argc, char **argv)
{
    size_t n = 0, s = 0;

    memset(self, 0, sizeof(*self));
    self->cmd = cmd;
    self->usage = usage;
    self->argc = argc;
    self->argv = argv;
    if (in_order)
        self->shorts[s++] = '+';
    self->shorts[s++] = ':'; /* a missing value is ':', not '?' */
    for (; accepts[n]; n++) {
        assert(n < TND_CLI_MAX_OPTIONS);
        self->longs[n] = option_of(accepts[n]);
        if (accepts[n] < TND_OPT_REPO) {
            self->shorts[s++] = (char)accepts[n];
            if (self->longs[n].has_arg == required_argument)
                self->shorts[s++] = ':';
        }
    }
    self->longs[n] = option_of('h'); /* every command has its help */
    self->shorts[s++] = 'h';
    opterr = 0;
    optind = 0; /* glibc: start afresh, also after an earlier parse */
}

int tnd_cli_next(tnd_cli *self)
{
    int c =
        getopt_long(self->argc, self->argv, self->shorts, self->longs, NULL);

    if (c == -1)
        return 0;
    if (c == 'h') {
        self->usage(self->cmd, stdout);
        self->status = TND_EXIT_OK;
        return -1;
    }
    if (c == ':' || c == '?') {
        self->status = tnd_cli_error(
            self, c == ':' ? "%s needs a value" : "unknown option '%s'",
            self->argv[optind - 1]);
        return -1;
    }
    return c;
}

int tnd_cli_error(const tnd_cli *self, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tandem %s: ", self->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'tandem %s --help'\n", self->cmd);
    return TND_EXIT_USAGE;
}
