/* Parsing tandem's options one way (see cli.h). */
#include "orchestrator/cli.h"

#include <assert.h>
#include <stdarg.h>
#include <string.h>

#include "orchestrator/run.h"

/* The long options' names, in tnd_cli_opt's order from TND_OPT_REPO. */
static const char *const long_names[] = {
    "repo",         "config",      "llm",         "base-url",       "task-file",
    "record",       "diff",        "timeout",     "iterations",     "tokens",
    "calls",        "older-than",  "for",         "format",         "bind",
    "max-sessions", "queue-max",   "drain-s",     "state",          "connect",
    "attach",       "out",         "name",        "on-error",       "pool",
    "server-key",   "key",         "reconnect-s", "keep-workspace", "staged",
    "waiting",      "dry-run",     "json",        "force",          "detach",
    "status",       "allow-empty", "review",      "apply",          "commit",
    "server",       "insecure",    "plain",
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
                   const int *accepts, int argc, char **argv)
{
    size_t n = 0, s = 0;

    memset(self, 0, sizeof(*self));
    self->cmd = cmd;
    self->usage = usage;
    self->argc = argc;
    self->end = argc;
    self->argv = argv;
    /* getopt stops at each operand ('+', whatever POSIXLY_CORRECT
     * says); tnd_cli_next moves it aside and goes on */
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

/* Rotate v[0..n) left by k, in place: v[k..n) then v[0..k). */
static void rotate(char **v, int n, int k)
{
    int a = 0, b = n - 1;

    for (int i = 0, j = k - 1; i < j; i++, j--) {
        char *t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    for (int i = k, j = n - 1; i < j; i++, j--) {
        char *t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    for (; a < b; a++, b--) {
        char *t = v[a];
        v[a] = v[b];
        v[b] = t;
    }
}

/* Whether arg is an operand to getopt: "-" or a word not starting '-'. */
static bool operand(const char *arg)
{
    return arg[0] != '-' || arg[1] == '\0';
}

/* getopt has stopped (-1) after starting at argv[at]: an operand is
 * moved after the rest, to argv[end..argc), in the order met, and true
 * says go on; at "--" or the end, the operands are put together at
 * argv[optind..argc) and false says the options are over. */
static bool past_operand(tnd_cli *self, int at)
{
    char **v = self->argv;

    if (optind == at + 1 && strcmp(v[at], "--") == 0) {
        /* those after "--" come after those moved before it */
        rotate(v + optind, self->argc - optind, self->end - optind);
        return false;
    }
    if (optind >= self->end) {
        optind = self->end;
        return false;
    }
    assert(operand(v[optind]));
    rotate(v + optind, self->argc - optind, 1);
    self->end--;
    return true;
}

/* The option getopt just refused in word, quoted, into buf: a long
 * option as written; a short one by its letter (optopt), with the word
 * it was in when that holds more letters: "'-f' in '-fix'". */
static const char *refused(char *buf, size_t size, const char *word)
{
    if (strncmp(word, "--", 2) == 0 || optopt <= 0 || optopt >= 128)
        snprintf(buf, size, "'%s'", word);
    else if (strlen(word) > 2)
        snprintf(buf, size, "'-%c' in '%s'", optopt, word);
    else
        snprintf(buf, size, "'-%c'", optopt);
    return buf;
}

int tnd_cli_next(tnd_cli *self)
{
    char what[512];
    const char *word;
    int c, at;

    do {
        at = optind < 1 ? 1 : optind;
        c = getopt_long(self->end, self->argv, self->shorts, self->longs, NULL);
    } while (c == -1 && past_operand(self, at));
    if (c == -1)
        return 0;
    if (c == 'h') {
        self->usage(self->cmd, stdout);
        self->status = TND_EXIT_OK;
        return -1;
    }
    if (c != ':' && c != '?')
        return c;
    if (c == ':') {
        self->status =
            tnd_cli_error(self, "%s needs a value", self->argv[optind - 1]);
        return -1;
    }
    /* getopt began this call at argv[at], the word it refused: a cluster
     * of short options stays there until its last letter is read, so
     * argv[optind - 1] can be the word before */
    word = self->argv[at];
    /* --json=x: the option is there, but takes no value (it said
     * "unknown option '--json=x'", as if there were no --json) */
    if (strncmp(word, "--", 2) == 0 && strchr(word, '=')) {
        size_t n = (size_t)(strchr(word, '=') - word) - 2;
        for (const struct option *o = self->longs; o->name; o++)
            if (o->has_arg == no_argument && strlen(o->name) == n &&
                strncmp(o->name, word + 2, n) == 0) {
                self->status = tnd_cli_error(self,
                                             "--%s takes no value, got "
                                             "'%s'",
                                             o->name, word);
                return -1;
            }
    }
    /* --c: the start of more than one (getopt takes a start that is
     * one's alone, and refuses the rest as if unknown) */
    if (strncmp(word, "--", 2) == 0 && word[2]) {
        size_t n = strcspn(word + 2, "="), k = 0;
        char names[256] = "";
        for (const struct option *o = self->longs; o->name; o++)
            if (strncmp(o->name, word + 2, n) == 0 && k++ < 6) {
                size_t len = strlen(names);
                snprintf(names + len, sizeof(names) - len, "%s--%s",
                         len ? ", " : "", o->name);
            }
        if (k > 1) {
            self->status = tnd_cli_error(self,
                                         "option '%.*s' is ambiguous: "
                                         "%s",
                                         (int)(n + 2), word, names);
            return -1;
        }
    }
    refused(what, sizeof(what), word);
    /* after an operand, or letters that spell a word: a task's word? */
    if (self->end < self->argc ||
        (strncmp(word, "--", 2) != 0 && strlen(word) > 2))
        self->status = tnd_cli_error(self,
                                     "unknown option %s; if it is a word, "
                                     "not an option, put -- before it",
                                     what);
    else
        self->status = tnd_cli_error(self, "unknown option %s", what);
    return -1;
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
