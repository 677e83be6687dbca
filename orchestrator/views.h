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

#include "orchestrator/journal.h"
#include "orchestrator/session.h"

/* Rewrite, from journal, the views of session its last record can change
 * (all three after the first record, a resume and an answer; atomically
 * each; each even when another could not be written). */
int tnd_views_write(tnd_session *session, const tnd_journal *journal);

/* The reflection text alone, for `tandem show`: from an array of journal
 * records. Caller frees. */
char *tnd_views_reflection(json_object *records);

#endif
