/* tnd_prior - a change a person approved before.
 *
 * A review that escalates (a risky path, low confidence) waits for a
 * person; `tandem approve ID` finishes that session, but the commit the
 * hook stopped is a new review, which escalated again: a commit through
 * the hook was impossible without --no-verify. So a review first looks
 * for a session of the repository, among the newest PRIOR_SESSIONS, that
 * reviewed the same change on the same base commit (change.diff byte for
 * byte, the task record's review.rev) and that a person approved (its
 * journal ends with an `approve` answer and an approved finish). Only a
 * person's approval counts: a gate's was made under a config that may
 * have changed since. Reading is bounded: files past their caps are no
 * match. */
#ifndef TND_PRIOR_H
#define TND_PRIOR_H

/* How many of the newest sessions are looked at. */
#define TND_PRIOR_SESSIONS 64

/* The id of a session of repo in which a person approved diff on base
 * commit rev (caller frees), or NULL when there is none. */
char *tnd_prior_approval(const char *repo, const char *rev, const char *diff);

#endif
