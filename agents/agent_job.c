/* A request's job thread (see agent_int.h): it runs the handler on the
 * request's body and sends what comes of it to its worker's loop over
 * an inproc PUSH, two-frame messages: "P" + body for progress, "F" +
 * body for the reply. Only the worker's loop touches the broker's
 * socket; the job thread touches only its PUSH. */
#include "agents/agent_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/json.h"
#include "proto/mdp.h"

struct tnd_agent_job {
    void *ctx;
    void *pair; /* job thread's end: a PUSH (see JOB_ENDPOINT in agent.c) */
    char *body;
    size_t len;
    const tnd_agent_options *opts;
    void *payload; /* the handler's, for this worker */
    atomic_int *cancel;
    int cancel_fd;
    pthread_t thread;
};

static int job_send(tnd_agent_job *job, const char *kind, const char *body,
                    size_t len)
{
    if (zmq_send(job->pair, kind, 1, ZMQ_SNDMORE) < 0 ||
        zmq_send(job->pair, body, len, 0) < 0)
        return tnd_error_set("job channel: %s", zmq_strerror(errno));
    return 0;
}

char *tnd_agent_fail(const char *task_id, int attempt, size_t *reply_len)
{
    tnd_log_error("%s", tnd_error_last());
    return tnd_error_reply_encode(task_id, attempt, tnd_error_last(),
                                  reply_len);
}

/* An error reply to the request in body, echoing its ids (NULL and 1
 * when the request has none to read). Caller frees. */
static char *error_for(const char *body, size_t len, const char *why,
                       size_t *len_out)
{
    json_object *obj = NULL;
    char *task_id = NULL, *out;
    int attempt = 1;

    if (tnd_json_parse(&obj, body, len) < 0 ||
        tnd_body_ids(&task_id, &attempt, obj) < 0)
        attempt = 1;
    json_object_put(obj);
    out = tnd_error_reply_encode(task_id, attempt, why, len_out);
    free(task_id);
    return out;
}

static void *job_main(void *arg)
{
    tnd_agent_job *job = arg;
    size_t reply_len = 0;
    char *reply;

    reply =
        job->opts->handler(job, job->body, job->len, &reply_len, job->payload);
    if (reply_len > TND_MDP_MAX_BODY) {
        /* libzmq would drop it without a word and the request would wait
         * for a FINAL that never comes: say so instead */
        char *why = tnd_xasprintf("the reply is %zu bytes, more than the %d "
                                  "one body may hold; it was not sent",
                                  reply_len, TND_MDP_MAX_BODY);
        tnd_log_error("%s", why);
        free(reply);
        reply = error_for(job->body, job->len, why, &reply_len);
        free(why);
    }
    if (job_send(job, "F", reply, reply_len) < 0)
        tnd_log_error("%s", tnd_error_last());
    free(reply);
    return NULL;
}

int tnd_agent_job_progress(tnd_agent_job *job, const char *body, size_t len)
{
    return job_send(job, "P", body, len);
}

const atomic_int *tnd_agent_job_cancel(const tnd_agent_job *job)
{
    return job->cancel;
}

int tnd_agent_job_cancel_fd(const tnd_agent_job *job)
{
    return job->cancel_fd;
}

static void job_free(tnd_agent_job *job)
{
    if (!job)
        return;
    if (job->pair)
        zmq_close(job->pair);
    free(job->body);
    free(job);
}

tnd_agent_job *tnd_agent_job_start(void *ctx, const char *endpoint,
                                   const tnd_agent_options *opts, void *payload,
                                   atomic_int *cancel, int cancel_fd,
                                   char *body, size_t len)
{
    tnd_agent_job *job = tnd_xcalloc(1, sizeof(*job));
    sigset_t all, old;
    int linger = 0, rc;

    job->opts = opts;
    job->payload = payload;
    job->cancel = cancel;
    job->cancel_fd = cancel_fd;
    job->body = body;
    job->len = len;
    if (!(job->pair = zmq_socket(ctx, ZMQ_PUSH)) ||
        zmq_setsockopt(job->pair, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
        zmq_connect(job->pair, endpoint) < 0) {
        tnd_error_set("cannot open the job channel: %s", zmq_strerror(errno));
        job_free(job);
        return NULL;
    }
    /* the job thread must not take SIGTERM/SIGINT: only the main thread
     * waits in zmq_poll and can act on them */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&job->thread, NULL, job_main, job);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        tnd_error_set("cannot start a job thread: %s", strerror(rc));
        job_free(job);
        return NULL;
    }
    return job;
}

void tnd_agent_job_join(tnd_agent_job **job_p)
{
    if (!*job_p)
        return;
    pthread_join((*job_p)->thread, NULL);
    job_free(*job_p);
    *job_p = NULL;
}
