/* An agent's model watched through one request (see observer.h). */
#include "agents/observer.h"

void tnd_observer_start(tnd_observer *o, tnd_llm *llm, tnd_agent_job *job,
                        const char *role)
{
    o->llm = llm;
    tnd_llm_set_cancel(llm, tnd_agent_job_cancel(job),
                       tnd_agent_job_cancel_fd(job));
    tnd_progress_init(&o->progress, job, role);
    tnd_transcript_init(&o->transcript);
    tnd_llm_set_delta(llm, tnd_progress_delta, &o->progress);
    tnd_llm_set_exchange(llm, tnd_transcript_exchange, &o->transcript);
}

char *tnd_observer_finish(tnd_observer *o, char *reply, size_t *reply_len)
{
    tnd_llm_set_exchange(o->llm, NULL, NULL);
    tnd_llm_set_delta(o->llm, NULL, NULL);
    tnd_progress_finish(&o->progress);
    reply = tnd_transcript_attach(&o->transcript, reply, reply_len);
    tnd_transcript_clear(&o->transcript);
    return reply;
}
