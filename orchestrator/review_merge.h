/* tnd_review_merge - a quorum's critiques as one.
 *
 * With gate.quorum above 1, each member's reviewer critiques the same
 * evidence (see review.h for when the critique runs); the merge decides
 * for them all. Pure: no I/O, so every rule has a test. */
#ifndef TND_REVIEW_MERGE_H
#define TND_REVIEW_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/audit.h"

/* The members' critiques as one: a critique that approves when all
 * members (majority false) or more than half of them (majority true)
 * approve with a valid critique. Confidence is the lowest of the members
 * (all) or the median (majority). The issues are every member's,
 * deduplicated by file, line and type keeping the highest severity.
 * Under majority, an issue no more than half of the members raised is
 * outvoted: kept, but minor, its description saying so (else one
 * dissent's major issue would block what the majority approved). The
 * summary names each member's verdict. A member without a valid critique
 * counts as not approving; when no member has one, out has none either
 * and critique_error says why. Usage is summed. Only out's critique,
 * critique_error and usage are set (the skills are the caller's);
 * members are left alone. */
void tnd_review_merge(tnd_audit_reply *out, const tnd_audit_reply *members,
                      size_t n, bool majority);

#endif
