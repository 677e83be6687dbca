/* tnd_lessons - the reflection bank: what earlier tasks in a repository
 * got wrong and what fixed it, kept so the coder need not repeat it.
 *
 * A lesson is a mistake and its correction, filed under a task type
 * (tnd_lessons_task_type()) and the set of files involved. The run loop
 * learns one when a failed attempt is followed by an approved one, hands
 * the few most relevant (same task type, overlapping files, proven
 * effective) to the coder in its request, and afterwards reports whether
 * the task went through, which moves each lesson's effectiveness by an
 * exponential moving average. The bank is bounded: when full, the least
 * effective lesson goes (the oldest of equals).
 *
 * The file is REPO/.tandem/lessons.json, read with limits (4 MiB, 1000
 * lessons, every field checked: a corrupt or hostile file is an error
 * naming the file and the field) and written atomically (temporary file,
 * fsync, rename), so a crash leaves the old or the new bank, never half
 * of one. Two runs saving at once: the last one wins.
 *
 *   {
 *     "tandem_lessons": 1,
 *     "lessons": [
 *       {
 *         "id": "3fa2c01b",              4..16 lowercase hex, unique
 *         "task_type": "fix",            fix, test, feature, refactor,
 *                                        docs or other
 *         "mistake": "...",              1..1024 bytes
 *         "correction": "...",           1..1024 bytes
 *         "context_hash": "89ab...",     16 hex: hash of the path set
 *         "paths": ["stats.c"],          0..20 repository-relative paths
 *         "created": "2026-11-22T01:44:28.123Z",
 *         "times_applied": 2,            0..1000000000
 *         "effectiveness": 0.65          0..1
 *       }
 *     ]
 *   }
 *
 * Required when read: id, task_type, mistake, correction, created.
 * paths defaults to none, times_applied to 0, effectiveness to 0.5;
 * context_hash, when present, must be 16 hex digits but is recomputed
 * from paths (the paths decide). Unknown fields are ignored. A file with
 * more lessons than the bound loses the least effective when loaded.
 * Lessons are kept in the file's order (oldest first). */
#ifndef TND_LESSONS_H
#define TND_LESSONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TND_LESSONS_FILE        "lessons.json" /* in REPO/.tandem/ */
#define TND_LESSONS_FILE_MAX    (4 << 20)      /* bytes read at most */
#define TND_LESSONS_READ_MAX    1000           /* lessons read at most */
#define TND_LESSONS_DEFAULT_MAX 100            /* the bank's default bound */
#define TND_LESSONS_DEFAULT_K   3              /* lessons per request */
#define TND_LESSON_TEXT_MAX     1024           /* mistake, correction (bytes) */
#define TND_LESSON_PATHS_MAX    20
#define TND_LESSON_ID_MAX       16
#define TND_LESSON_RENDER_MAX   2048 /* tnd_lessons_render() (bytes) */

/* One lesson. Read-only to callers: borrowed from its bank until the
 * bank changes (add, learn, forget, set_max) or is closed. */
typedef struct tnd_lesson {
    char id[TND_LESSON_ID_MAX + 1]; /* 8 hex when tandem made it */
    const char *task_type;          /* a tnd_lessons_task_type() name */
    char *mistake;                  /* what went wrong */
    char *correction;               /* what fixed it */
    uint64_t context_hash;          /* tnd_lessons_context_hash(paths) */
    char **paths;                   /* sorted, distinct, NULL-terminated */
    size_t npaths;
    char created[32];     /* UTC ISO 8601, "2026-11-22T01:44:28.123Z" */
    long times_applied;   /* how often it went to the coder */
    double effectiveness; /* 0..1; 0.5 when new */
} tnd_lesson;

typedef struct tnd_lessons tnd_lessons;

/* The task type of a task's text, by keywords: "fix"
 * (fix/bug/fail/error/crash/broken), "test" (test/coverage), "feature"
 * (add/implement/support/create), "refactor" (refactor/rename/clean/
 * simplify), "docs" (doc/readme/comment), else "other". Words match with
 * their usual endings ("failing", "tests", "renamed"). The first keyword
 * in the text decides, except that a feature verb followed by a test or
 * docs word ("add tests for the parser") gives that type. A static
 * string. */
const char *tnd_lessons_task_type(const char *task);

/* True when name is one of the task types above. */
bool tnd_lessons_task_type_valid(const char *name);

/* A hash of the set of paths (NULL-terminated, may be NULL): order and
 * repetition do not change it. */
uint64_t tnd_lessons_context_hash(const char *const *paths);

/* Load the bank at path; a missing file is an empty bank. NULL with the
 * error set (naming the file, and the lesson and field when one is
 * wrong). Close with tnd_lessons_close(). */
tnd_lessons *tnd_lessons_load(const char *path);

/* tnd_lessons_load() of REPO/.tandem/lessons.json. */
tnd_lessons *tnd_lessons_open(const char *repo);

/* Free the bank without saving; sets *self_p to NULL. Safe on NULL. */
void tnd_lessons_close(tnd_lessons **self_p);

/* Write the bank to its file atomically, creating REPO/.tandem/ (with a
 * .gitignore of "*") when needed. */
int tnd_lessons_save(tnd_lessons *self);

/* The file the bank was loaded from and saves to. Borrowed. */
const char *tnd_lessons_path(const tnd_lessons *self);

/* Bound the bank to max lessons (1..TND_LESSONS_READ_MAX; out of range
 * is clamped), evicting at once if it holds more. */
void tnd_lessons_set_max(tnd_lessons *self, size_t max);

/* Number of lessons, and the i-th (0 is the oldest); borrowed. */
size_t tnd_lessons_count(const tnd_lessons *self);
const tnd_lesson *tnd_lessons_at(const tnd_lessons *self, size_t i);

/* Add a lesson. An existing lesson with the same task type and path set
 * and a similar mistake (most of the same words) is updated instead:
 * it takes the new mistake and correction text and keeps its id,
 * creation time and record. Otherwise, when the bank is full, the least
 * effective lesson (the oldest of equals) is evicted first. Texts longer
 * than TND_LESSON_TEXT_MAX are cut (on a UTF-8 boundary); paths beyond
 * TND_LESSON_PATHS_MAX (after sorting) are dropped. Fails on an unknown
 * task type, an empty text or a path tnd_edit_path_check() refuses.
 * *out (may be NULL) borrows the lesson added or updated. */
int tnd_lessons_add(const tnd_lesson **out, tnd_lessons *self,
                    const char *task_type, const char *mistake,
                    const char *correction, const char *const *paths);

/* tnd_lessons_add() under tnd_lessons_task_type(task): what the run loop
 * calls when a failure (mistake) was followed by an approved change
 * (correction) touching paths. */
int tnd_lessons_learn(tnd_lessons *self, const char *task, const char *mistake,
                      const char *correction, const char *const *paths);

/* The k (0: TND_LESSONS_DEFAULT_K) most relevant lessons for a task of
 * task_type touching paths (NULL-terminated, may be NULL), best first.
 * Score: 0.5 for the same task type + 0.3 * Jaccard(paths) + 0.2 *
 * effectiveness; a lesson with neither the task type nor a path in
 * common is never relevant. Ties: more effective, then newer. *out is a
 * NULL-terminated array of *n borrowed lessons; the caller frees the
 * array (not the lessons). */
int tnd_lessons_relevant(const tnd_lesson ***out, size_t *n,
                         const tnd_lessons *self, const char *task_type,
                         const char *const *paths, size_t k);

/* The lessons with these ids (NULL-terminated; unknown ids, e.g. since
 * forgotten, are skipped) went to the coder and the task then succeeded
 * or not: times_applied + 1, effectiveness = 0.7 * e + 0.3 * (success ?
 * 1 : 0). */
void tnd_lessons_applied(tnd_lessons *self, const char *const *ids,
                         bool success);

/* The lesson whose id is id_or_prefix, or the only one it begins
 * (case-insensitive). TND_ENOTFOUND when none, -1 when several or
 * empty; the error says which. */
int tnd_lessons_find(const tnd_lesson **out, const tnd_lessons *self,
                     const char *id_or_prefix);

/* Remove the lesson tnd_lessons_find() finds (not saved yet). */
int tnd_lessons_forget(tnd_lessons *self, const char *id_or_prefix);

/* The one-paragraph text that goes to the coder ("Mistake: ...
 * Correction: ..."), whitespace runs folded to one space, at most
 * TND_LESSON_RENDER_MAX bytes. Caller frees. */
char *tnd_lessons_render(const tnd_lesson *l);

#endif
