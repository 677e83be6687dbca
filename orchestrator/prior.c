/* A change a person approved before (see prior.h). */
#include "orchestrator/prior.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/journal.h"
#include "orchestrator/session.h"
#include "proto/json.h"

/* A review's journal is a few records; one past this is no match. */
#define JOURNAL_CAP (1 << 20)

/* Whether the file at dir/name holds exactly text. */
static bool holds(const char *dir, const char *name, const char *text)
{
    char *path = tnd_fs_join(dir, name), *was = NULL;
    size_t len = 0, want = strlen(text);
    bool same;

    same = tnd_fs_read(&was, &len, path, want + 1) == 0 && len == want &&
           memcmp(was, text, len) == 0;
    free(was);
    free(path);
    return same;
}

/* Whether the journal in dir is a review of base rev that a person
 * approved: its task record names rev, and it ends with an approve
 * answer, then an approved finish. */
static bool approved_by_person(const char *dir, const char *rev)
{
    char *path = tnd_fs_join(dir, "journal.jsonl"), *text = NULL, *line;
    char *save = NULL;
    bool first = true, task_ok = false, answered = false, approved = false;
    size_t len = 0;

    if (tnd_fs_read(&text, &len, path, JOURNAL_CAP) < 0) {
        free(path);
        return false;
    }
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        json_object *rec = json_tokener_parse(line);
        const char *type = tnd_journal_type(rec);
        if (first)
            task_ok = strcmp(type, "task") == 0 &&
                      tnd_str_eq(tnd_json_str_or(tnd_json_field(rec, "review"),
                                                 "rev", NULL),
                                 rev);
        else if (strcmp(type, "answer") == 0) {
            answered =
                tnd_str_eq(tnd_json_str_or(rec, "kind", NULL), "approve");
            approved = false; /* a finish, if any, came before it */
        } else if (strcmp(type, "finish") == 0)
            approved =
                answered &&
                tnd_str_eq(tnd_json_str_or(rec, "status", NULL), "approved");
        else if (strcmp(type, "resume") != 0)
            approved = false; /* a step after the finish */
        first = false;
        json_object_put(rec);
    }
    free(text);
    free(path);
    return task_ok && approved;
}

char *tnd_prior_approval(const char *repo, const char *rev, const char *diff)
{
    char **ids, *found = NULL;
    size_t n = 0;

    if (!rev || !diff || !*diff)
        return NULL;
    ids = tnd_session_list(repo);
    while (ids[n])
        n++;
    for (size_t k = 0; k < n && k < TND_PRIOR_SESSIONS && !found; k++) {
        const char *id = ids[n - 1 - k]; /* newest first */
        char *dir = tnd_session_dir_of(repo, id);
        if (holds(dir, "change.diff", diff) && approved_by_person(dir, rev))
            found = tnd_xstrdup(id);
        free(dir);
    }
    tnd_str_list_free(&ids);
    return found;
}
