/* A ZAP handler's answer (ZeroMQ RFC 27) for unit tests that play the
 * handler on inproc://zeromq.zap.01: read one request from zap, a REP
 * socket, and answer it with status ("200", "400"), the status text,
 * user id and metadata frame (meta_len bytes; 0 for none). Included by
 * the test files that need it; static, so each has its own copy. */
#ifndef TND_TEST_ZAP_ANSWER_H
#define TND_TEST_ZAP_ANSWER_H

#include <string.h>
#include <zmq.h>

static inline void zap_answer(void *zap, const char *status, const char *text,
                              const char *user, const void *meta,
                              size_t meta_len)
{
    char frame[256], req_id[64];
    int more = 1, n = 0, got, id_size = 0;
    size_t size = sizeof(more);

    while (more) { /* version, request id, domain, ... */
        got = zmq_recv(zap, frame, sizeof(frame), 0);
        if (n++ == 1) {
            id_size = got < 0 ? 0 : got < 64 ? got : 64;
            memcpy(req_id, frame, (size_t)id_size);
        }
        zmq_getsockopt(zap, ZMQ_RCVMORE, &more, &size);
    }
    zmq_send(zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(zap, req_id, (size_t)id_size, ZMQ_SNDMORE);
    zmq_send(zap, status, strlen(status), ZMQ_SNDMORE);
    zmq_send(zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(zap, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(zap, meta, meta_len, 0);
}

#endif
