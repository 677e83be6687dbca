/* A command of agents.yaml, as it will run (see config_command.h). */
#include "common/config_command.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"

/* Words a shell treats other than as a program to look up in PATH. */
static const char *const shell_words[] = {
    ".",     "break",  "case",     "cd",     "command", "continue",
    "do",    "done",   "elif",     "else",   "esac",    "eval",
    "exec",  "exit",   "export",   "fi",     "for",     "function",
    "if",    "in",     "readonly", "return", "select",  "set",
    "shift", "source", "then",     "times",  "trap",    "ulimit",
    "umask", "unset",  "until",    "wait",   "while",   NULL};

/* Characters that mean nothing to the shell outside quotes. */
static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "abcdefghijklmnopqrstuvwxyz"
                            "0123456789_-./:,+@%=";

/* The words of a line the shell would run as plain words, its quotes
 * removed: outside quotes only characters that mean nothing to it;
 * single quotes around anything but a single quote; double quotes
 * around anything but $, `, \ and a double quote (nothing is expanded
 * inside them then). No variable assignment first, no shell word first,
 * and the first word unquoted (a quoted builtin is still a builtin).
 * NULL when the shell would do more than split and unquote. */
static char **plain_words(const char *line)
{
    char **words = NULL;
    size_t n = 0, alloc = 0, len = strlen(line);
    char *word = tnd_xmalloc(len + 1), *w = NULL;

    for (const char *p = line;; p++) {
        if (!*p || *p == ' ' || *p == '\t') {
            if (w) {
                *w = '\0';
                TND_GROW(words, alloc, n + 2);
                words[n++] = tnd_xstrdup(word);
                words[n] = NULL;
                w = NULL;
            }
            if (!*p)
                break;
            continue;
        }
        if (!w)
            w = word;
        if (*p == '\'' || *p == '"') {
            const char *end = strchr(p + 1, *p);
            if (n == 0 || !end ||
                (*p == '"' && strcspn(p + 1, "$`\\\"") < (size_t)(end - p - 1)))
                goto shell;
            memcpy(w, p + 1, (size_t)(end - p - 1));
            w += end - p - 1;
            p = end;
        } else if (strchr(plain, *p)) {
            *w++ = *p;
        } else {
            goto shell;
        }
    }
    if (n == 0 || strchr(words[0], '='))
        goto shell;
    for (int i = 0; shell_words[i]; i++)
        if (strcmp(words[0], shell_words[i]) == 0)
            goto shell;
    free(word);
    return words;
shell:
    free(word);
    tnd_str_list_free(&words);
    return NULL;
}

/* A string command: plain words are run directly (what the shell would
 * do with them, without starting a shell per skill), anything else by
 * bash with pipefail, so a pipeline fails when any command in it does:
 * under /bin/sh -c, `make test 2>&1 | tail -n 50` passed a failing suite
 * on tail's status. Debian's /bin/sh (dash) has no pipefail; bash is
 * essential there. Without it, /bin/sh -c. */
void tnd_config_command_shell(tnd_command *c, const char *line)
{
    size_t n = 0;

    c->display = tnd_xstrdup(line);
    if ((c->argv = plain_words(line)))
        return;
    c->argv = tnd_xcalloc(6, sizeof(char *));
    c->shell = true;
    if (access(TND_CONFIG_SHELL, X_OK) == 0) {
        c->argv[n++] = tnd_xstrdup(TND_CONFIG_SHELL);
        c->argv[n++] = tnd_xstrdup("-o");
        c->argv[n++] = tnd_xstrdup("pipefail");
    } else {
        c->argv[n++] = tnd_xstrdup("/bin/sh");
    }
    c->argv[n++] = tnd_xstrdup("-c");
    c->argv[n] = tnd_xstrdup(line);
}

void tnd_config_command_free(tnd_command *c)
{
    tnd_str_list_free(&c->argv);
    free(c->display);
    c->display = NULL;
    c->shell = false;
}

/* command: a string run by the shell, or a list [program, arg, ...]. */
void tnd_config_set_command(tnd_yw *w, const tnd_yw_field *f, const char *path,
                            const yaml_node_t *v, char *base)
{
    tnd_command *out = (tnd_command *)(base + f->offset);

    if (v->type == YAML_SCALAR_NODE && !tnd_yw_is_null(v) &&
        *tnd_yw_scalar(v)) {
        tnd_config_command_free(out);
        tnd_config_command_shell(out, tnd_yw_scalar(v));
        return;
    }
    if (v->type == YAML_SEQUENCE_NODE) {
        char **argv = tnd_yw_string_list(w, path, v);
        tnd_buf shown;
        if (!argv)
            return;
        if (!argv[0]) {
            tnd_yw_report(w, v, "%s must not be an empty list", path);
            free(argv);
            return;
        }
        tnd_config_command_free(out);
        out->argv = argv;
        tnd_buf_init(&shown, TND_BUF_NOCAP);
        for (char **p = argv; *p; p++)
            tnd_buf_printf(&shown, "%s%s", p == argv ? "" : " ", *p);
        out->display = tnd_buf_detach(&shown, NULL);
        return;
    }
    tnd_yw_report(w, v,
                  "%s must be a command: a string run by the shell, or a list "
                  "[program, arg, ...]",
                  path);
}

void tnd_config_set_program(tnd_yw *w, const tnd_yw_field *f, const char *path,
                            const yaml_node_t *v, char *base)
{
    tnd_command *c = (tnd_command *)(base + f->offset);
    char *full;

    tnd_config_set_command(w, f, path, v, base);
    if (c->shell || !c->argv || !c->argv[0] || c->argv[0][0] == '/' ||
        !strchr(c->argv[0], '/') || !tnd_yw_dir(w))
        return;
    full = tnd_fs_join(tnd_yw_dir(w), c->argv[0]);
    free(c->argv[0]);
    c->argv[0] = full;
}
