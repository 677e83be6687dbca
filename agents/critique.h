/* tnd_critique_parse - reading the reviewer model's JSON critique.
 *
 * Models put the JSON inside ```json fences, after a sentence of prose,
 * or with a trailing comma. The parser reads, in order, the whole answer,
 * each fenced block, then each balanced {...} in the text (trailing
 * commas dropped), and collects every JSON object with a top-level
 * "verdict": a claim to be the critique. What lies inside a claim is part
 * of it, not another candidate. A claim is valid when no object in it
 * repeats a key (json-c would keep the last value without a word), it
 * passes the schema check (proto/critique_schema.h), and its every issue
 * cites evidence (a tool excerpt or the code, or a file and line). A fenced
 * block or braced text that names a verdict ("verdict", 'verdict' or
 * verdict, then a colon) but does not parse, or a brace never closed
 * before it, is a claim too, an invalid one, unless it holds a valid
 * claim (JSON with prose around it): a model's broken final answer must
 * not leave its draft standing.
 *
 * The answer holds a critique when it makes exactly one claim and that
 * claim is valid, or when all its claims are valid and the same critique
 * once parsed (a model that quotes its answer again). Several claims
 * that differ in anything, or a valid claim beside one that is not, are
 * an error naming the difference: the reviewer cannot tell a draft from
 * the final answer without guessing. Reading is capped (16 candidates
 * parsed, 64 braces matched); a critique found with part of the answer
 * left unread is refused too, since a different one may be there.
 * Nothing is guessed, and the gate never treats an error as a pass. */
#ifndef TND_CRITIQUE_H
#define TND_CRITIQUE_H

#include "proto/critique_schema.h"

/* Find and check the critique in answer. Caller frees *out with
 * tnd_critique_destroy. -1 with the most useful error, worded for the
 * re-ask: "the critique does not match the schema: issues[1]: field
 * 'severity' must be one of ...", "the critique is ambiguous: key
 * 'verdict' appears twice", "the answer holds 2 critiques that disagree:
 * 'approve' then 'revise'; answer with exactly one JSON object", or that
 * no JSON object was found. */
int tnd_critique_parse(tnd_critique **out, const char *answer);

#endif
