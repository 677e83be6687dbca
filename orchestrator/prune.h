/* tnd_prune - removing a repository's old sessions, for `tandem sessions
 * prune`.
 *
 * A session goes when it has ended (approved, rejected, escalated,
 * failed, interrupted, or unreadable) and its age is at least
 * older_than. Its age is the time since its last journal record (the
 * session directory's modification time when it has none), so a session
 * answered or resumed last week is a week old, whenever it started. A
 * running session (its lock is held) never goes; a waiting one (it went
 * to a person, who has not answered) only when asked for.
 *
 * A session is removed while holding its lock, so no resume or answer
 * can start on it meanwhile: renamed out of sight first
 * (.tandem/sessions/.pruned-ID, which no command lists), then deleted,
 * so nothing ever sees half of one; a prune stopped halfway is finished
 * by the next. Its workspace, when a run kept it (--keep-workspace),
 * goes with it. Nothing else under .tandem (the lessons bank) is
 * touched. */
#ifndef TND_PRUNE_H
#define TND_PRUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orchestrator/session.h"

/* The most sessions one prune looks at, oldest first; the rest wait for
 * the next. */
#define TND_PRUNE_MAX_SESSIONS 10000

typedef struct tnd_prune_options {
    const char *repo;      /* absolute, as tnd_fs_realpath gives it */
    int64_t older_than_ms; /* the age from which an ended session goes */
    bool waiting;          /* waiting sessions go too */
    bool dry_run;          /* say what would go; remove nothing */
    int64_t now_ms;        /* wall-clock milliseconds: "now" */
} tnd_prune_options;

/* What becomes of one session. */
typedef enum tnd_prune_verdict {
    TND_PRUNE_REMOVE = 0, /* removed (with dry_run: would be) */
    TND_PRUNE_RUNNING,    /* kept: a tandem works on it */
    TND_PRUNE_QUEUED,     /* kept: waits in a tandem serve's queue */
    TND_PRUNE_WAITING,    /* kept: waits for a person (no --waiting) */
    TND_PRUNE_NEWER,      /* kept: younger than older_than */
} tnd_prune_verdict;

typedef struct tnd_prune_item {
    char *id;
    tnd_session_status state; /* as tandem sessions shows it */
    int64_t age_ms;           /* since its last journal record */
    uint64_t bytes;           /* its size on disk */
    tnd_prune_verdict verdict;
    bool workspace; /* its kept workspace went too (would go) */
    char *error;    /* removing it failed: why; else NULL */
} tnd_prune_item;

typedef struct tnd_prune_result {
    tnd_prune_item *items; /* every session looked at, oldest first */
    size_t count;
    bool more; /* TND_PRUNE_MAX_SESSIONS stopped it */
} tnd_prune_result;

/* The rule, alone: what becomes of a session in state that is age_ms
 * old. */
tnd_prune_verdict tnd_prune_decide(tnd_session_status state, int64_t age_ms,
                                   const tnd_prune_options *o);

/* Prune the sessions of o->repo into *out (free with
 * tnd_prune_result_clear). 0, or -1 when a session could not be removed
 * (its item's error says why; the others were still done). */
int tnd_prune(tnd_prune_result *out, const tnd_prune_options *o);

void tnd_prune_result_clear(tnd_prune_result *r);

#endif
