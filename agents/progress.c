/* Streamed text as batched progress messages (see progress.h). */
#include "agents/progress.h"

#include <json-c/json.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
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

/* Send the pending text up to where no secret is cut in two (all of it
 * when whole), redacted; what stays waits for the next message. */
static void emit(tnd_progress *p, const char *phase, bool whole)
{
    json_object *o = json_object_new_object();
    size_t len, cut = 0;
    char *body, *shown;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "type", json_object_new_string("progress"));
    json_object_object_add(o, "role", json_object_new_string(p->role));
    json_object_object_add(o, "chars",
                           json_object_new_int64((int64_t)p->chars));
    if (phase) {
        json_object_object_add(o, "phase", json_object_new_string(phase));
    } else {
        const char *text = tnd_buf_str(&p->pending);
        cut = whole ? p->pending.len : tnd_log_safe_cut(text, p->pending.len);
        shown = tnd_log_redact(tnd_xstrndup(text, cut));
        json_object_object_add(o, "delta", json_object_new_string(shown));
        free(shown);
    }
    body = tnd_json_dump(o, &len);
    json_object_put(o);
    tnd_agent_job_progress(p->job, body, len);
    free(body);
    if (phase)
        return;
    tnd_buf_consume(&p->pending, cut);
    p->last_ms = tnd_now_ms();
}

static void send_pending(tnd_progress *p, bool whole)
{
    emit(p, NULL, whole);
}

void tnd_progress_phase(tnd_progress *p, const char *phase)
{
    if (!p)
        return;
    if (p->pending.len > 0)
        send_pending(p, true);
    emit(p, phase, false);
}

void tnd_progress_delta(const char *text, size_t len, void *payload)
{
    tnd_progress *p = payload;

    p->chars += len;
    /* past the cap only the count travels: progress, not a transcript */
    tnd_buf_append(&p->pending, text, len);
    if (tnd_now_ms() - p->last_ms >= p->interval_ms)
        send_pending(p, false);
}

void tnd_progress_finish(tnd_progress *p)
{
    if (p->pending.len > 0)
        send_pending(p, true);
    tnd_buf_free(&p->pending);
}
