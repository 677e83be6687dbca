/* The broker's clock (see broker_int.h): heartbeats sent and missed,
 * requests a beating worker no longer reports on, keys taken out of the
 * authorized list, and time the broker was not listening, which is no
 * agent's silence. */
#include "orchestrator/broker_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "orchestrator/zap.h"

/* A worker that acknowledged a request (any PARTIAL) reports on it at
 * least every heartbeat while it works; one that beats but has said
 * nothing of its request for the liveness period has lost it (a job
 * thread that died, a FINAL that never left): it is disconnected, its
 * request requeued, and a local agent killed and restarted. */
static void stalled(tnd_broker *b, int64_t now)
{
    int64_t patience = (int64_t)b->heartbeat_ms * b->liveness;

    for (size_t i = 0; i < b->nrequests; i++) {
        request *r = b->requests[i];
        worker *w = r->worker;
        char name[sizeof(w->name)], *why;
        /* silent altogether is tnd_broker_beat's to judge; here the
         * worker must have beaten since it last spoke of r */
        if (!w || !r->heard || now - r->heard <= patience ||
            w->expiry - patience <= r->heard)
            continue;
        why = tnd_xasprintf("it stopped reporting on request %s (nothing "
                            "for %lld ms while it still beats)",
                            r->key, (long long)(now - r->heard));
        memcpy(name, w->name, sizeof(name));
        tnd_broker_disconnect_worker(b, w, why); /* requeues r: scan again */
        free(why);
        if (b->silent)
            b->silent(name, b->silent_payload);
        i = (size_t)-1;
    }
}

/* The authorized keys read again, if they changed: an agent whose key
 * lost the role of its service is disconnected (its request requeued);
 * its reconnection is refused. It served on until a restart. */
static void revoked(tnd_broker *b)
{
    if (!b->zap || !tnd_zap_reload(b->zap))
        return;
    for (size_t i = 0; i < b->nworkers;) {
        worker *w = b->workers[i];
        if (w->service && *w->key_fingerprint &&
            !tnd_zap_key_may_serve(b->zap, w->key_fingerprint, w->service)) {
            tnd_broker_disconnect_worker(
                b, w,
                "its key is no longer in the authorized keys "
                "for its service");
            continue;
        }
        i++;
    }
}

void tnd_broker_beat(tnd_broker *b)
{
    int64_t now = tnd_now_ms();

    for (size_t i = 0; i < b->nworkers;) {
        worker *w = b->workers[i];
        if (w->expiry < now) {
            char name[sizeof(w->name)];
            tnd_log_warn("agent %s went silent (no heartbeat for %d ms)",
                         w->name, b->heartbeat_ms * b->liveness);
            memcpy(name, w->name, sizeof(name));
            tnd_broker_remove_worker(b, w, "went silent");
            if (b->silent)
                b->silent(name, b->silent_payload);
            continue;
        }
        tnd_broker_send_command(b, w, TND_MDPW_HEARTBEAT);
        i++;
    }
    stalled(b, now);
    revoked(b);
    b->next_beat = now + b->heartbeat_ms;
}

/* Time the broker was not listening (the process stopped with Ctrl-Z,
 * or its caller busy for longer than a beat) is no agent's silence: the
 * deadlines move on by it. A tandem stopped for longer than its agents'
 * patience killed them all when it went on, before their heartbeats,
 * queued meanwhile, could be read. */
void tnd_broker_away(tnd_broker *b, int64_t now)
{
    int64_t gap = b->last_poll ? now - b->last_poll : 0;

    b->last_poll = now;
    if (gap <= b->heartbeat_ms)
        return;
    for (size_t i = 0; i < b->nworkers; i++)
        b->workers[i]->expiry += gap;
    for (size_t i = 0; i < b->nrequests; i++)
        if (b->requests[i]->heard)
            b->requests[i]->heard += gap;
}
