/* tnd_replay_backend - answers from a recorded cassette, offline.
 *
 * A cassette is a JSON file (format in proto/PROTOCOL.md, "Cassettes"):
 * exchanges keyed by role, attempt and call, so a replay does not depend
 * on which agent process asks or in which order; each can list strings
 * its prompt must contain, which catches a run that has drifted from the
 * recording. Running past the end, or drifting, is a clear error. */
#ifndef TND_REPLAY_H
#define TND_REPLAY_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_replay_backend;

/* Largest cassette file read. */
#define TND_REPLAY_MAX_BYTES (64 << 20)

#endif
