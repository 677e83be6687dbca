/* tnd_critique_parse - reading the reviewer model's JSON critique.
 *
 * Models put the JSON inside ```json fences, after a sentence of prose,
 * or with a trailing comma. The parser tries, in order: the whole answer,
 * each fenced block, then each balanced {...} in the text; trailing
 * commas are dropped; the first candidate that passes the schema check
 * (proto/audit.h), and whose every issue cites evidence (a tool excerpt
 * or the code, or a file and line), wins. Nothing is guessed: an answer with no
 * valid critique is an error, and the gate never treats an error as a pass. */
#ifndef TND_CRITIQUE_H
#define TND_CRITIQUE_H

#include "proto/audit.h"

/* Find and check the critique in answer. Caller frees *out with
 * tnd_critique_destroy. -1 with the most useful error: the schema
 * problem of the best candidate ("issues[1].severity must be one of
 * ..."), or that no JSON object was found. */
int tnd_critique_parse(tnd_critique **out, const char *answer);

#endif
