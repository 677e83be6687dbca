/* Streamed text as batched progress messages (see progress.h). */
#include "agents/progress.h"

#include <json-c/json.h>
#include <stdlib.h>

#include "common/clock.h"
#include "proto/json.h"

#define INTERVAL_MS 250
#define PENDING_MAX (64 << 10) /* text kept between messages */

void tnd_progress_init(tnd_progress *p, tnd_agent_job *job, const char *role)
{
    p->job = job;
    p->role = role;
    p->chars = 0;
    tnd_buf_init(&p->pending, PENDING_MAX);
    p->last_ms = 0;
    p->interval_ms = INTERVAL_MS;
}

static void emit(tnd_progress *p, const char *phase)
{
    json_object *o = json_object_new_object();
    size_t len;
    char *body;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "type", json_object_new_string("progress"));
    json_object_object_add(o, "role", json_object_new_string(p->role));
    json_object_object_add(o, "chars",
                           json_object_new_int64((int64_t)p->chars));
    if (phase)
        json_object_object_add(o, "phase", json_object_new_string(phase));
    else
        json_object_object_add(
            o, "delta",
            json_object_new_string_len(tnd_buf_str(&p->pending),
                                       (int)p->pending.len));
    body = tnd_json_dump(o, &len);
    json_object_put(o);
    tnd_agent_job_progress(p->job, body, len);
    free(body);
    if (phase)
        return;
    tnd_buf_reset(&p->pending);
    p->last_ms = tnd_now_ms();
}

static void send_pending(tnd_progress *p)
{
    emit(p, NULL);
}

void tnd_progress_phase(tnd_progress *p, const char *phase)
{
    if (!p)
        return;
    if (p->pending.len > 0)
        send_pending(p);
    emit(p, phase);
}

void tnd_progress_delta(const char *text, size_t len, void *payload)
{
    tnd_progress *p = payload;

    p->chars += len;
    /* past the cap only the count travels: progress, not a transcript */
    tnd_buf_append(&p->pending, text, len);
    if (tnd_now_ms() - p->last_ms >= p->interval_ms)
        send_pending(p);
}

void tnd_progress_finish(tnd_progress *p)
{
    if (p->pending.len > 0)
        send_pending(p);
    tnd_buf_free(&p->pending);
}
