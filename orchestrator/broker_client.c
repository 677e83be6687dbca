/* Requests from MDP clients (see broker_int.h): a client may not drive
 * the agents, needs the client role over CURVE, and is answered with the
 * body it reads; with clients, its requests go to the caller as events
 * (tandem serve), else to the workers of its service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/user.h"
#include "common/xalloc.h"
#include "orchestrator/broker_int.h"
#include "proto/body.h"
#include "proto/client.h"

/* A client may not drive the agents: a request for their services is
 * answered with an error; over CURVE a client needs the client role. */
static bool may_ask(tnd_broker *b, const unsigned char *id, size_t id_len,
                    const tnd_mdp_msg *msg, const char *name)
{
    const char *why = NULL, *kind = "forbidden";
    tnd_mdp_msg out;
    size_t len;
    char *body;

    if (b->zap && !tnd_zap_may_submit(msg->user_id))
        why = "this key may not send requests (it lacks the client and "
              "the person role)";
    else if (!b->clients) { /* with clients, the caller answers all */
        /* a tandem run queued any other service's requests, bodies and
         * all, for no one: a local client held gigabytes of it */
        kind = "bad_request";
        why = "a tandem run takes no client's request: agent services take "
              "requests from tandem's own sessions only (tandem serve takes "
              "tasks: tandem submit)";
    }
    if (!why)
        return true;
    tnd_log_warn("refused a request of client %s for %s: %s", name,
                 msg->service, why);
    /* a client body (proto/client.h), with the kind every client reads:
     * a run's agent-style error, without one, had tandem submit pointed
     * at a run say "bad reply from tandem serve: field 'kind' is
     * missing" instead of why */
    body = tnd_client_error(kind, why, &len);
    tnd_mdp_msg_init(&out, false, TND_MDPC_FINAL, msg->service);
    out.body = body;
    out.body_len = len;
    if (tnd_mdp_send(b->socket, id, id_len, &out) < 0)
        tnd_log_debug("cannot tell client %s: %s", name, tnd_error_last());
    free(body);
    return false;
}

/* Who sent msg, as the way it came proves (see tnd_broker_event.who):
 * nothing a peer could claim for itself. */
static void who_of(tnd_client_who *out, const tnd_broker *b,
                   const tnd_mdp_msg *msg)
{
    char *user = NULL;
    unsigned uid;

    memset(out, 0, sizeof(*out));
    if (b->zap) {
        /* the handler set both for every key it admits */
        out->via = TND_CLIENT_VIA_CURVE;
        snprintf(out->user, sizeof(out->user), "%s",
                 *msg->key_name ? msg->key_name : msg->key_fingerprint);
        snprintf(out->key, sizeof(out->key), "%s", msg->key_fingerprint);
        snprintf(out->address, sizeof(out->address), "%s", msg->peer_address);
    } else if (strncmp(b->endpoint, "tcp://", 6) == 0) {
        out->via = TND_CLIENT_VIA_TCP;
        snprintf(out->address, sizeof(out->address), "%s", msg->peer_address);
    } else {
        out->via = TND_CLIENT_VIA_IPC;
        user = tnd_mdp_peer_uid(&uid, msg->peer_address) == 0
                   ? tnd_user_of_uid(uid)
                   : tnd_user_name();
        snprintf(out->user, sizeof(out->user), "%s", user);
        free(user);
    }
}

void tnd_broker_on_client(tnd_broker *b, const unsigned char *id, size_t id_len,
                          tnd_mdp_msg *msg)
{
    char name[TND_MDP_MAX_PRINTABLE];
    tnd_broker_event *ev;

    tnd_mdp_printable(name, sizeof(name), id, id_len);
    if (msg->command != TND_MDPC_REQUEST) {
        tnd_log_warn("client %s sent %s, which only a broker may send; "
                     "ignored",
                     name, tnd_mdp_command_name(false, msg->command));
        return;
    }
    if (!may_ask(b, id, id_len, msg, name))
        return; /* without clients, every request is refused there */
    /* a server's: the caller answers it */
    TND_GROW(b->events, b->aevents, b->nevents + 1);
    ev = &b->events[b->nevents++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = TND_BROKER_CLIENT;
    snprintf(ev->key, sizeof(ev->key), "%s", name);
    memcpy(ev->client, id, id_len);
    ev->client_len = id_len;
    snprintf(ev->service, sizeof(ev->service), "%s", msg->service);
    who_of(&ev->who, b, msg);
    ev->roles = b->zap ? tnd_zap_roles(msg->user_id) : 0;
    ev->body = tnd_xmalloc(msg->body_len + 1);
    memcpy(ev->body, msg->body, msg->body_len);
    ev->body[msg->body_len] = '\0';
    ev->body_len = msg->body_len;
}

int tnd_broker_client_send(tnd_broker *self, const unsigned char *client,
                           size_t client_len, const char *service, bool final,
                           const char *body, size_t len)
{
    tnd_mdp_msg out;

    if (len > TND_MDP_MAX_BODY)
        return tnd_error_set("a reply of %zu bytes is over the limit of %d",
                             len, TND_MDP_MAX_BODY);
    tnd_mdp_msg_init(&out, false, final ? TND_MDPC_FINAL : TND_MDPC_PARTIAL,
                     service);
    out.body = (char *)body;
    out.body_len = len;
    return tnd_mdp_send(self->socket, client, client_len, &out);
}
