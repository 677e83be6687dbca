/* tnd_cassette - turning a recording into a cassette.
 *
 * While `tandem run --record FILE` runs, each agent appends one JSON line
 * per LLM answer to FILE.partial (see proto/PROTOCOL.md, "Recording").
 * At the end the orchestrator turns those lines into the cassette the
 * replay provider reads: one exchange per role, attempt and call (the
 * last line wins when a request was retried), in the order the run
 * asked them. */
#ifndef TND_CASSETTE_H
#define TND_CASSETTE_H

#include <stddef.h>

/* Build the cassette at out from the recording at partial, atomically.
 * Lines that are not valid (a torn last line after a crash) are skipped
 * and counted in *skipped (may be NULL). The count of exchanges written
 * goes to *count (may be NULL). -1 with the error set when partial
 * cannot be read or out cannot be written. task (may be NULL): the
 * run's task, which each role's first exchange then expects in its
 * prompt, so that a replay for another task stops there. */
int tnd_cassette_from_recording(const char *partial, const char *out,
                                const char *comment, const char *task,
                                size_t *count, size_t *skipped);

#endif
