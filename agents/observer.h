/* tnd_observer - what an agent's model does during one request, passed
 * on: the text it streams goes to tandem as progress (agents/progress.h)
 * and every exchange goes into the reply as "exchanges"
 * (agents/transcript.h). Both agent programs wrap their request handler
 * in it:
 *
 *   tnd_observer ob;
 *   tnd_observer_start(&ob, llm, job, "coder");
 *   reply = tnd_coder_handle(llm, body, len, reply_len);
 *   return tnd_observer_finish(&ob, reply, reply_len);
 */
#ifndef TND_OBSERVER_H
#define TND_OBSERVER_H

#include <stddef.h>

#include "agents/agent.h"
#include "agents/llm.h"
#include "agents/progress.h"
#include "agents/transcript.h"

typedef struct tnd_observer {
    tnd_llm *llm;              /* borrowed */
    tnd_progress progress;     /* a handler may send phases here too */
    tnd_transcript transcript; /* the exchanges so far */
} tnd_observer;

/* Point llm's cancel flag, streamed text and exchanges at job, whose
 * progress messages name role (borrowed). */
void tnd_observer_start(tnd_observer *o, tnd_llm *llm, tnd_agent_job *job,
                        const char *role);

/* Detach from the llm, send the progress still pending, and return reply
 * with the exchanges added (reply is taken, as by tnd_transcript_attach;
 * caller frees the result). */
char *tnd_observer_finish(tnd_observer *o, char *reply, size_t *reply_len);

#endif
