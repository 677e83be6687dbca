/* tnd_command_backend - the `command` provider: any program as the model.
 *
 * For each call tandem runs llm.command (argv as configured; a string
 * command was turned into /bin/sh -c STRING by the config) and talks to
 * it over pipes:
 *
 *   stdin   the system prompt, then a line holding exactly "---", then
 *           the user prompt, then end of input. Byte for byte:
 *           SYSTEM "\n---\n" USER, where the "\n" before "---" is left
 *           out when SYSTEM is empty or already ends in a newline. tandem's
 *           system prompts never hold a "---" line themselves, so the
 *           first such line splits the two.
 *   stdout  the answer, at most TND_COMMAND_MAX_ANSWER bytes, not empty;
 *           one that prints more is stopped there, and the call fails
 *           saying the answer was too large (not retried).
 *   stderr  kept apart; its last lines are quoted when the call fails.
 *   exit    0: the answer is good. 75 (EX_TEMPFAIL): a transient failure,
 *           retried with backoff like an HTTP 503. Anything else (or a
 *           signal) fails the call, naming the program, the status and
 *           the end of its stderr.
 *
 * The program inherits the agent's environment (it is the user's own and
 * may need its own keys) and working directory. It is killed (its whole
 * process group) when the call's timeout passes (retried, as a network
 * timeout is) or the call is cancelled. It reports no token counts, so
 * tandem estimates them and marks them estimated. */
#ifndef TND_COMMAND_H
#define TND_COMMAND_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_command_backend;

/* Largest answer accepted on stdout. */
#define TND_COMMAND_MAX_ANSWER (4 << 20)

/* The exit status that asks for a retry (sysexits.h EX_TEMPFAIL). */
#define TND_COMMAND_EXIT_RETRY 75

#endif
