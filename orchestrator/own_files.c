/* The files of a repository tandem's configuration runs with (see
 * own_files.h). */
#include "orchestrator/own_files.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/str.h"
#include "common/xalloc.h"

typedef struct found {
    char **out;
    size_t n, max;
    const char *repo;
} found;

/* path, when it resolves to a regular file inside the repository, into
 * f (once). */
static void add(found *f, const char *path)
{
    size_t len = strlen(f->repo);
    struct stat st;
    char *real;

    if (!path || !*path || f->n >= f->max || !(real = realpath(path, NULL)))
        return;
    if (strncmp(real, f->repo, len) == 0 && real[len] == '/' &&
        stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
        bool dup = false;
        for (size_t k = 0; k < f->n && !dup; k++)
            dup = strcmp(f->out[k], real + len + 1) == 0;
        if (!dup)
            f->out[f->n++] = tnd_xstrdup(real + len + 1);
    }
    free(real);
}

/* The words of a command that may name a file: its arguments, and its
 * program when given as a path. A shell line is split at blanks and the
 * shell's punctuation, quotes dropped. */
static void add_command(found *f, const tnd_command *c)
{
    static const char seps[] = " \t\n;|&()<>'\"`";
    size_t words = 0;

    if (!c->argv || !c->argv[0])
        return;
    if (!c->shell) {
        for (size_t i = 0; c->argv[i] && i < TND_OWN_FILES_WORDS; i++)
            if (i > 0 || strchr(c->argv[i], '/'))
                add(f, c->argv[i]);
        return;
    }
    for (const char *p = c->display + strspn(c->display, seps);
         *p && words < TND_OWN_FILES_WORDS; p += strspn(p, seps), words++) {
        size_t n = strcspn(p, seps);
        char *word = tnd_xstrndup(p, n);
        if (words > 0 || strchr(word, '/'))
            add(f, word);
        free(word);
        p += n;
    }
}

size_t tnd_own_files(char **out, size_t max, const tnd_config *cfg,
                     const char *repo)
{
    found f = {out, 0, max, repo};

    add(&f, cfg->path);
    add(&f, cfg->coder.llm.cassette);
    add(&f, cfg->reviewer.llm.cassette);
    for (size_t i = 0; i < cfg->reviewer.nmodels; i++)
        add(&f, cfg->reviewer.models[i].cassette);
    add_command(&f, &cfg->coder.llm.command);
    add_command(&f, &cfg->reviewer.llm.command);
    for (size_t i = 0; i < cfg->reviewer.nmodels; i++)
        add_command(&f, &cfg->reviewer.models[i].command);
    add_command(&f, &cfg->coder.program);
    add_command(&f, &cfg->reviewer.program);
    return f.n;
}
