/* Running git read-only (see git.h). */
#include "orchestrator/git.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/env.h"
#include "skills/proc.h"

/* The scrubbed environment, with LC_ALL=C when english,
 * GIT_INDEX_FILE=index when index is not NULL, and the objects written
 * into the directory objects, reading the repository's own (alternates)
 * too, when objects is not NULL. Never the network: no transport is
 * allowed (GIT_ALLOW_PROTOCOL empty, git 2.6 on) and no object fetched
 * lazily (GIT_NO_LAZY_FETCH, git 2.44 on): a partial clone's git fetched
 * a blob it lacked from its promisor remote (a sparse checkout's files
 * outside its cone, written into a snapshot). Nor does git-lfs, the
 * smudge filter of an export: see NO_LFS_FETCH. */
/* git-lfs's smudge filter fetched an object this machine lacks over its
 * own HTTPS (or ssh), which no git setting stops: a review waited on the
 * network, or hung where it was not there. git-lfs reads these settings
 * over the repository's (`git -c`): its server is a local directory that
 * cannot exist, read by its own local agent (never the user's custom
 * one), so fetching fails at once and touches nothing; an object that is
 * there is smudged from it as before. */
#define NO_LFS_FETCH                                   \
    "'lfs.url=file:///dev/null/tandem-never-fetches' " \
    "'lfs.standalonetransferagent=lfs-standalone-file'"

static char **environment(bool english, const char *index, const char *objects,
                          const char *alternates, bool alone, bool smudge)
{
    /* the caller's GIT_INDEX_FILE stays unless index replaces it: git
     * sets it for a pre-commit hook, and the index it names is the one
     * being committed; GIT_LITERAL_PATHSPECS goes, which made a pathspec
     * of ours (':(attr:filter=lfs)', lfs.c) a name that matched nothing */
    const char *drop[10] = {"GIT_ALLOW_PROTOCOL", "GIT_NO_LAZY_FETCH",
                            "GIT_CONFIG_PARAMETERS", "GIT_LITERAL_PATHSPECS"};
    const char *params;
    char **envp, *own;
    size_t n = 0, k = 4;

    if (english)
        drop[k++] = "LC_ALL";
    if (index)
        drop[k++] = "GIT_INDEX_FILE";
    if (objects) {
        drop[k++] = "GIT_OBJECT_DIRECTORY";
        drop[k++] = "GIT_ALTERNATE_OBJECT_DIRECTORIES";
    }
    if (smudge)
        drop[k++] = "GIT_LFS_SKIP_SMUDGE";
    /* the caller's `git -c` settings (a hook's) stay, ours after them */
    params = alone ? NULL : getenv("GIT_CONFIG_PARAMETERS");
    own =
        params && *params
            ? tnd_xasprintf("GIT_CONFIG_PARAMETERS=%s %s", params, NO_LFS_FETCH)
            : tnd_xstrdup("GIT_CONFIG_PARAMETERS=" NO_LFS_FETCH);
    envp = tnd_env_scrubbed(drop);
    if (alone) /* before GIT_INDEX_FILE is put in */
        tnd_env_drop_git(envp);
    while (envp[n])
        n++;
    envp = tnd_xrealloc(envp, n + 8, sizeof(*envp));
    envp[n++] = own;
    envp[n++] = tnd_xstrdup("GIT_ALLOW_PROTOCOL=");
    envp[n++] = tnd_xstrdup("GIT_NO_LAZY_FETCH=1");
    if (english)
        envp[n++] = tnd_xstrdup("LC_ALL=C");
    if (index)
        envp[n++] = tnd_xasprintf("GIT_INDEX_FILE=%s", index);
    if (objects) {
        envp[n++] = tnd_xasprintf("GIT_OBJECT_DIRECTORY=%s", objects);
        envp[n++] =
            tnd_xasprintf("GIT_ALTERNATE_OBJECT_DIRECTORIES=%s", alternates);
    }
    envp[n] = NULL;
    return envp;
}

/* What argv asks git to do, for a message: its command past git's own
 * options, "-c NAME=VALUE" and the rest ("'git -c' failed" and "'git
 * --literal-pathspecs' failed" said nothing). */
static const char *verb(const char *const *argv)
{
    size_t i = 1;

    while (argv[i] && argv[i + 1] && argv[i][0] == '-')
        i += strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-C") == 0 ? 2 : 1;
    return argv[i] ? argv[i] : "";
}

typedef struct where {
    const char *index;      /* GIT_INDEX_FILE, or NULL */
    const char *objects;    /* GIT_OBJECT_DIRECTORY, or NULL */
    const char *alternates; /* with objects: the repository's */
    bool alone;             /* none of the caller's GIT_DIR and the like */
    const char *input;      /* git's stdin, or NULL: /dev/null */
    size_t input_len;
    bool smudge; /* git-lfs smudges, GIT_LFS_SKIP_SMUDGE or not */
} where;

/* The file whose Git LFS object git-lfs could not fetch, as its
 * stderr (errors) names it: "Error downloading object: PATH (OID):
 * ...". NULL when it names none. Caller frees. */
static char *lfs_missing(const char *errors)
{
    static const char said[] = "Error downloading object: ";
    const char *at = strstr(errors, said), *end, *p;

    if (!at)
        return NULL;
    at += sizeof(said) - 1;
    end = at + strcspn(at, "\n");
    /* the first " (HEX): " ends the name (the line names the file twice,
     * the second time with the whole id) */
    for (p = at; p + 1 < end; p++) {
        size_t hex =
            p[0] == ' ' && p[1] == '(' ? strspn(p + 2, "0123456789abcdef") : 0;

        if (hex >= 7 && strncmp(p + 2 + hex, "): ", 3) == 0)
            return tnd_xasprintf("%.*s", (int)(p - at), at);
    }
    return NULL;
}

static int run(char **out, size_t *len, char **why_out, const char *dir,
               const char *const *argv, size_t cap, bool english,
               const where *w)
{
    char **envp = environment(english, w->index, w->objects, w->alternates,
                              w->alone, w->smudge);
    tnd_proc_spec spec;
    tnd_proc_result res;
    char *lfs;
    int rc = 0;

    if (out)
        *out = NULL;
    if (why_out)
        *why_out = NULL;
    memset(&spec, 0, sizeof(spec));
    spec.argv = argv;
    spec.cwd = dir;
    spec.envp = (const char *const *)envp;
    spec.input = w->input;
    spec.input_len = w->input_len;
    spec.timeout_ms = TND_GIT_TIMEOUT_MS;
    spec.output_cap = cap;
    if (tnd_proc_run(&res, &spec) < 0) {
        rc = TND_ENOTFOUND;
    } else if ((lfs = lfs_missing(res.errors))) {
        /* whether git failed or not (a filter not required): the file
         * was not written as the commit has it */
        rc = tnd_error_config(
            "%s is a Git LFS file whose object is not on this machine, and "
            "tandem never fetches (it never reaches the network): fetch it "
            "first (git lfs fetch, or git lfs pull, which checks it out "
            "too), then try again",
            lfs);
        free(lfs);
    } else if (res.status != TND_PROC_EXITED || res.exit_code != 0) {
        char *why = tnd_xstrdup(res.errors);
        tnd_str_trim(why);
        rc = tnd_error_set("'%s %s' failed (%s)%s%s", argv[0], verb(argv),
                           tnd_proc_describe(&res), *why ? ": " : "", why);
        if (why_out)
            *why_out = why;
        else
            free(why);
    } else if (res.output_total > res.output_len) {
        rc = tnd_error_set("'%s %s' wrote more than %zu bytes", argv[0],
                           verb(argv), cap);
    } else {
        if (len)
            *len = res.output_len;
        if (out) {
            *out = res.output;
            res.output = NULL;
        }
    }
    tnd_proc_result_free(&res);
    tnd_str_list_free(&envp);
    return rc;
}

int tnd_git_run(char **out, size_t *len, const char *dir,
                const char *const *argv, size_t cap)
{
    where w = {NULL, NULL, NULL, false, NULL, 0, false};

    return run(out, len, NULL, dir, argv, cap, false, &w);
}

int tnd_git_run_index(char **out, size_t *len, const char *dir,
                      const char *index, const char *const *argv, size_t cap)
{
    where w = {index, NULL, NULL, false, NULL, 0, false};

    return run(out, len, NULL, dir, argv, cap, false, &w);
}

int tnd_git_run_scratch(char **out, size_t *len, const char *dir,
                        const char *index, const char *objects,
                        const char *repo_objects, const char *const *argv,
                        size_t cap)
{
    where w = {index, objects, repo_objects, false, NULL, 0, false};

    return run(out, len, NULL, dir, argv, cap, false, &w);
}

int tnd_git_run_alone(char **out, size_t *len, const char *dir,
                      const char *index, const char *const *argv, size_t cap)
{
    where w = {index, NULL, NULL, true, NULL, 0, false};

    return run(out, len, NULL, dir, argv, cap, false, &w);
}

int tnd_git_run_smudge(const char *dir, const char *index, const char *objects,
                       const char *repo_objects, const char *input,
                       size_t input_len, const char *const *argv, bool alone)
{
    where w = {index, objects, repo_objects, alone, input, input_len, true};

    return run(NULL, NULL, NULL, dir, argv, 64 << 10, false, &w);
}

int tnd_git_try(char **out, size_t *len, char **why, const char *dir,
                const char *const *argv, size_t cap)
{
    where w = {NULL, NULL, NULL, false, NULL, 0, false};

    return run(out, len, why, dir, argv, cap, true, &w);
}

int tnd_git_run_input(char **out, size_t *len, const char *dir,
                      const char *index, const char *objects,
                      const char *repo_objects, const char *input,
                      size_t input_len, const char *const *argv, size_t cap)
{
    where w = {index, objects, repo_objects, false, input, input_len, false};

    return run(out, len, NULL, dir, argv, cap, false, &w);
}

int tnd_git_try_input(char **out, size_t *len, char **why, const char *dir,
                      const char *input, size_t input_len,
                      const char *const *argv, size_t cap)
{
    where w = {NULL, NULL, NULL, false, input, input_len, false};

    return run(out, len, why, dir, argv, cap, true, &w);
}

bool tnd_git_in_git_dir(const char *dir)
{
    const char *argv[] = {"git", "rev-parse", "--is-inside-git-dir", NULL};
    char *out = NULL, *saved = tnd_xstrdup(tnd_error_last());
    bool yes = tnd_git_run(&out, NULL, dir, argv, 4096) == 0 && out &&
               strncmp(out, "true", 4) == 0;

    tnd_error_set("%s", saved); /* the caller's error stays */
    free(saved);
    free(out);
    return yes;
}

/* A file HEAD, and directories objects and refs, in dir. */
static bool looks_git_dir(const char *dir)
{
    char *head = tnd_fs_join(dir, "HEAD"),
         *objects = tnd_fs_join(dir, "objects"),
         *refs = tnd_fs_join(dir, "refs");
    struct stat st;
    bool yes = lstat(head, &st) == 0 && S_ISREG(st.st_mode) &&
               tnd_fs_is_dir(objects) && tnd_fs_is_dir(refs);

    free(head);
    free(objects);
    free(refs);
    return yes;
}

bool tnd_git_dir_above(const char *dir)
{
    char *at = tnd_xstrdup(dir), *slash;
    bool looks = false;

    while (!looks && *at) {
        looks = looks_git_dir(at);
        if (!(slash = strrchr(at, '/')))
            break;
        *slash = '\0'; /* "/x" ends as "": the root is no repository */
    }
    free(at);
    return looks && tnd_git_in_git_dir(dir);
}
