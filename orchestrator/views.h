/* tnd_views - the session files people read, derived from the journal.
 *
 * After every journaled step the run rewrites, from the journal alone,
 * those of them the step's record can change:
 *   reflection.md   per attempt: what the coder did and why, what the
 *                   checks and the critique found, what was decided
 *   failures.json   each failed attempt's failure signature and reason,
 *                   and the patterns: how often each signature occurred,
 *                   when first and last
 *   decisions.md    one line per decision and per human answer, timed
 * They are views: deleting them loses nothing, the journal remakes them. */
#ifndef TND_VIEWS_H
#define TND_VIEWS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "orchestrator/journal.h"
#include "orchestrator/session.h"

/* What tnd_views_write keeps between the steps of one journal, so that
 * reflection.md (each record's section depends on that record alone)
 * grows by the sections of the records added since, not rebuilt from
 * every record at each step. Zeroed: nothing kept yet. */
typedef struct tnd_views_state {
    tnd_buf reflection; /* the sections of records [0, records), printable */
    size_t records;
    bool whole; /* a section did not end its line (none does so
                   far): the text is rebuilt whole each time */
} tnd_views_state;

void tnd_views_state_clear(tnd_views_state *state);

/* Rewrite, from journal, the views of session its last record can change
 * (all three after the first record, a resume and an answer; atomically
 * each; each even when another could not be written). state (NULL: none)
 * is kept for this journal only, whose records are only ever added to;
 * the text is the same with it as without. */
int tnd_views_write(tnd_session *session, const tnd_journal *journal,
                    tnd_views_state *state);

/* The reflection text alone, for `tandem show`: from an array of journal
 * records. Caller frees. */
char *tnd_views_reflection(json_object *records);

#endif
