/* Unit tests for proto/mdp: MDP/0.2 framing. Pure encode/decode over
 * frame arrays first, then send/receive over a real inproc DEALER/ROUTER
 * pair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "proto/mdp.h"
#include "tests/unit/zap_answer.h"

/* A frame from a string literal (its size without the NUL). */
#define F(s)             \
    {                    \
        s, sizeof(s) - 1 \
    }
#define FRAMES(...)  ((const tnd_frame[]){__VA_ARGS__})
#define NFRAMES(...) (sizeof((tnd_frame[]){__VA_ARGS__}) / sizeof(tnd_frame))
/* Decode the frames given; the result of tnd_mdp_decode. */
#define DECODE(out, ...) \
    tnd_mdp_decode(out, FRAMES(__VA_ARGS__), NFRAMES(__VA_ARGS__))

/* Encode msg, decode the frames back, and return the copy. */
static void round_trip(tnd_mdp_msg *out, const tnd_mdp_msg *msg,
                       size_t expect_frames)
{
    tnd_frame frames[TND_MDP_MAX_FRAMES];
    unsigned char command;
    size_t n = tnd_mdp_encode(frames, &command, msg);

    assert_int_equal(n, expect_frames);
    assert_int_equal(command, msg->command);
    assert_int_equal(tnd_mdp_decode(out, frames, n), 0);
    assert_int_equal(out->worker, msg->worker);
    assert_int_equal(out->command, msg->command);
}

/* ---- encode and decode ------------------------------------------------ */

static void client_commands_round_trip(void **state)
{
    const int commands[] = {TND_MDPC_REQUEST, TND_MDPC_PARTIAL, TND_MDPC_FINAL};
    char body[] = "{\"tandem\":1}";
    tnd_mdp_msg msg, out;

    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        tnd_mdp_msg_init(&msg, false, commands[i], "coder");
        msg.body = body;
        msg.body_len = strlen(body);
        round_trip(&out, &msg, 4);
        assert_string_equal(out.service, "coder");
        assert_int_equal(out.body_len, msg.body_len);
        assert_string_equal(out.body, msg.body);
        assert_int_equal(out.address_len, 0);
        tnd_mdp_msg_clear(&out);
    }
}

static void worker_commands_round_trip(void **state)
{
    char body[] = "a\0b";
    tnd_mdp_msg msg, out;

    (void)state;
    tnd_mdp_msg_init(&msg, true, TND_MDPW_READY, "reviewer");
    round_trip(&out, &msg, 3);
    assert_string_equal(out.service, "reviewer");
    assert_null(out.body);
    tnd_mdp_msg_clear(&out);

    for (int c = TND_MDPW_REQUEST; c <= TND_MDPW_FINAL; c++) {
        tnd_mdp_msg_init(&msg, true, c, NULL);
        memcpy(msg.address, "task-1:2", 8);
        msg.address_len = 8;
        msg.body = body; /* bodies are bytes: a NUL survives */
        msg.body_len = 3;
        round_trip(&out, &msg, 5);
        assert_int_equal(out.address_len, 8);
        assert_memory_equal(out.address, "task-1:2", 8);
        assert_int_equal(out.body_len, 3);
        assert_memory_equal(out.body, "a\0b", 4); /* and a NUL after */
        assert_string_equal(out.service, "");
        tnd_mdp_msg_clear(&out);
    }

    tnd_mdp_msg_init(&msg, true, TND_MDPW_HEARTBEAT, NULL);
    round_trip(&out, &msg, 2);
    assert_null(out.body);
    tnd_mdp_msg_clear(&out);
    tnd_mdp_msg_init(&msg, true, TND_MDPW_DISCONNECT, NULL);
    round_trip(&out, &msg, 2);
    tnd_mdp_msg_clear(&out);
}

static void encode_lays_out_the_rfc_frames(void **state)
{
    tnd_frame f[TND_MDP_MAX_FRAMES];
    unsigned char command;
    tnd_mdp_msg msg;

    (void)state;
    tnd_mdp_msg_init(&msg, true, TND_MDPW_FINAL, NULL);
    msg.address[0] = 'k';
    msg.address_len = 1;
    assert_int_equal(tnd_mdp_encode(f, &command, &msg), 5);
    assert_int_equal(f[0].size, 6);
    assert_memory_equal(f[0].data, "MDPW02", 6);
    assert_ptr_equal(f[1].data, &command);
    assert_int_equal(f[1].size, 1);
    assert_int_equal(command, 0x04);
    assert_int_equal(f[2].size, 1);
    assert_int_equal(f[3].size, 0); /* the envelope delimiter */
    assert_int_equal(f[4].size, 0); /* no body: an empty frame */

    tnd_mdp_msg_init(&msg, false, TND_MDPC_REQUEST, "coder");
    assert_int_equal(tnd_mdp_encode(f, &command, &msg), 4);
    assert_memory_equal(f[0].data, "MDPC02", 6);
    assert_int_equal(command, 0x01);
    assert_int_equal(f[2].size, 5);
    assert_memory_equal(f[2].data, "coder", 5);
    assert_int_equal(f[3].size, 0);
}

static void empty_body_decodes_as_an_empty_string(void **state)
{
    tnd_mdp_msg out;

    (void)state;
    assert_int_equal(DECODE(&out, F("MDPW02"), F("\x04"), F("k"), F(""), F("")),
                     0);
    assert_non_null(out.body);
    assert_string_equal(out.body, "");
    assert_int_equal(out.body_len, 0);
    tnd_mdp_msg_clear(&out);
}

static void one_leading_empty_frame_is_tolerated(void **state)
{
    tnd_mdp_msg out;

    (void)state;
    assert_int_equal(DECODE(&out, F(""), F("MDPW02"), F("\x01"), F("coder")),
                     0);
    assert_true(out.worker);
    assert_int_equal(out.command, TND_MDPW_READY);
    assert_string_equal(out.service, "coder");
    tnd_mdp_msg_clear(&out);

    assert_int_equal(
        DECODE(&out, F(""), F("MDPC02"), F("\x01"), F("coder"), F("{}")), 0);
    assert_false(out.worker);
    assert_string_equal(out.body, "{}");
    tnd_mdp_msg_clear(&out);

    /* only one */
    assert_int_equal(DECODE(&out, F(""), F(""), F("MDPW02"), F("\x05")), -1);
    assert_non_null(strstr(tnd_error_last(), "protocol header"));
}

/* frames must be rejected with an error containing want; nothing is
 * left allocated in out. */
static void expect_malformed(const tnd_frame *frames, size_t n,
                             const char *want)
{
    tnd_mdp_msg out;

    tnd_error_clear();
    assert_int_equal(tnd_mdp_decode(&out, frames, n), -1);
    if (!strstr(tnd_error_last(), want))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), want);
    assert_memory_equal(tnd_error_last(), "malformed MDP message", 21);
    assert_null(out.body);
}
#define MALFORMED(want, ...) \
    expect_malformed(FRAMES(__VA_ARGS__), NFRAMES(__VA_ARGS__), want)

static void wrong_headers_and_commands_are_rejected(void **state)
{
    (void)state;
    MALFORMED("not MDPC02 or MDPW02", F("MDPX02"), F("\x01"), F("coder"));
    /* MDP/0.1 worker: same frames as READY, older version */
    MALFORMED("not MDPC02 or MDPW02", F("MDPW01"), F("\x01"), F("coder"));
    MALFORMED("not MDPC02 or MDPW02", F("MDPW02x"), F("\x05"));
    MALFORMED("command frame is 2 bytes, expected 1", F("MDPW02"),
              F("\x05\x00"));
    MALFORMED("command frame is 0 bytes", F("MDPW02"), F(""));
    MALFORMED("unknown MDP/Worker command 0x07", F("MDPW02"), F("\x07"));
    MALFORMED("unknown MDP/Worker command 0x00", F("MDPW02"), F("\x00"));
    MALFORMED("unknown MDP/Client command 0x04", F("MDPC02"), F("\x04"),
              F("coder"), F("{}"));
    MALFORMED("1 frames, need at least 2", F("MDPW02"));
    MALFORMED("0 frames, need at least 2", F(""));
}

static void wrong_frame_counts_are_rejected(void **state)
{
    tnd_mdp_msg out;

    (void)state;
    MALFORMED("READY has 2 frames, expected 3", F("MDPW02"), F("\x01"));
    MALFORMED("READY has 4 frames, expected 3", F("MDPW02"), F("\x01"),
              F("coder"), F("extra"));
    MALFORMED("HEARTBEAT has 3 frames, expected 2", F("MDPW02"), F("\x05"),
              F("x"));
    MALFORMED("DISCONNECT has 3 frames, expected 2", F("MDPW02"), F("\x06"),
              F(""));
    MALFORMED("REQUEST has 4 frames, expected 5", F("MDPW02"), F("\x02"),
              F("k"), F(""));
    /* a body split over two frames: tandem bodies are one frame */
    MALFORMED("FINAL has 6 frames, expected 5 (tandem bodies are one "
              "frame)",
              F("MDPW02"), F("\x04"), F("k"), F(""), F("{\"a\":"), F("1}"));
    MALFORMED("PARTIAL has 5 frames, expected 4 (tandem bodies are one "
              "frame)",
              F("MDPC02"), F("\x02"), F("coder"), F("{"), F("}"));
    MALFORMED("REQUEST has 3 frames, expected 4", F("MDPC02"), F("\x01"),
              F("coder"));

    /* the message names the command that was miscounted */
    assert_int_equal(DECODE(&out, F("MDPW02"), F("\x01")), -1);
    assert_string_equal(tnd_error_last(),
                        "malformed MDP message: READY has 2 frames, "
                        "expected 3");
}

static void bad_services_are_rejected(void **state)
{
    char longest[TND_MDP_MAX_SERVICE + 2];
    tnd_mdp_msg out;
    tnd_frame f[3] = {F("MDPW02"), F("\x01"), {longest, 0}};

    (void)state;
    MALFORMED("service name must be 1..64 bytes, got 0", F("MDPW02"), F("\x01"),
              F(""));
    MALFORMED("service name must be 1..64 bytes, got 0", F("MDPC02"), F("\x01"),
              F(""), F("{}"));
    MALFORMED("printable ASCII without spaces", F("MDPW02"), F("\x01"),
              F("two words"));
    MALFORMED("printable ASCII without spaces", F("MDPC02"), F("\x03"),
              F("cod\x01r"), F("{}"));
    MALFORMED("printable ASCII without spaces", F("MDPW02"), F("\x01"),
              F("caf\xc3\xa9"));

    memset(longest, 'a', sizeof(longest));
    f[2].size = TND_MDP_MAX_SERVICE;
    assert_int_equal(tnd_mdp_decode(&out, f, 3), 0);
    assert_int_equal(strlen(out.service), TND_MDP_MAX_SERVICE);
    tnd_mdp_msg_clear(&out);
    f[2].size = TND_MDP_MAX_SERVICE + 1;
    expect_malformed(f, 3, "service name must be 1..64 bytes, got 65");
}

static void bad_addresses_and_delimiters_are_rejected(void **state)
{
    unsigned char address[TND_MDP_MAX_ADDRESS + 1];
    tnd_frame f[5] = {F("MDPW02"), F("\x04"), {address, 0}, F(""), F("{}")};
    tnd_mdp_msg out;

    (void)state;
    memset(address, 0xfe, sizeof(address)); /* any bytes will do */
    f[2].size = TND_MDP_MAX_ADDRESS;
    assert_int_equal(tnd_mdp_decode(&out, f, 5), 0);
    assert_int_equal(out.address_len, TND_MDP_MAX_ADDRESS);
    assert_memory_equal(out.address, address, TND_MDP_MAX_ADDRESS);
    tnd_mdp_msg_clear(&out);

    f[2].size = TND_MDP_MAX_ADDRESS + 1;
    expect_malformed(f, 5,
                     "FINAL client address must be 1..255 bytes, got "
                     "256");
    f[2].size = 0;
    expect_malformed(f, 5, "client address must be 1..255 bytes, got 0");

    MALFORMED("REQUEST frame 3 must be the empty envelope delimiter",
              F("MDPW02"), F("\x02"), F("k"), F("x"), F("{}"));
}

static void bodies_over_the_limit_are_rejected(void **state)
{
    char *big = malloc(TND_MDP_MAX_BODY + 1);
    tnd_frame f[5] = {F("MDPW02"), F("\x04"), F("k"), F(""), {big, 0}};
    tnd_frame c[4] = {F("MDPC02"), F("\x01"), F("coder"), {big, 0}};
    tnd_mdp_msg out;

    (void)state;
    assert_non_null(big);
    memset(big, 'x', TND_MDP_MAX_BODY + 1);
    f[4].size = TND_MDP_MAX_BODY;
    assert_int_equal(tnd_mdp_decode(&out, f, 5), 0);
    assert_int_equal(out.body_len, TND_MDP_MAX_BODY);
    tnd_mdp_msg_clear(&out);

    f[4].size = TND_MDP_MAX_BODY + 1;
    expect_malformed(f, 5,
                     "body is 16777217 bytes, more than the limit of "
                     "16777216");
    c[3].size = TND_MDP_MAX_BODY + 1;
    expect_malformed(c, 4, "more than the limit");
    free(big);
}

static void init_clear_and_names(void **state)
{
    tnd_mdp_msg msg;

    (void)state;
    tnd_mdp_msg_init(&msg, true, TND_MDPW_READY, "coder");
    assert_true(msg.worker);
    assert_string_equal(msg.service, "coder");
    assert_null(msg.body);
    msg.body = malloc(4);
    tnd_mdp_msg_clear(&msg);
    assert_null(msg.body);
    assert_int_equal(msg.command, 0);
    tnd_mdp_msg_clear(&msg); /* zeroed: fine */

    assert_string_equal(tnd_mdp_command_name(true, TND_MDPW_READY), "READY");
    assert_string_equal(tnd_mdp_command_name(true, TND_MDPW_DISCONNECT),
                        "DISCONNECT");
    assert_string_equal(tnd_mdp_command_name(true, 7), "UNKNOWN");
    assert_string_equal(tnd_mdp_command_name(true, 0), "UNKNOWN");
    assert_string_equal(tnd_mdp_command_name(false, TND_MDPC_REQUEST),
                        "REQUEST");
    assert_string_equal(tnd_mdp_command_name(false, TND_MDPC_FINAL), "FINAL");
    assert_string_equal(tnd_mdp_command_name(false, 4), "UNKNOWN");
    assert_string_equal(tnd_mdp_command_name(false, -1), "UNKNOWN");
}

static void printable_shows_text_as_is_and_binary_as_hex(void **state)
{
    unsigned char longest[TND_MDP_MAX_IDENTITY];
    char out[TND_MDP_MAX_PRINTABLE];
    char small[7];

    (void)state;
    tnd_mdp_printable(out, sizeof(out), (const unsigned char *)"coder-1", 7);
    assert_string_equal(out, "coder-1");
    /* a ZeroMQ generated identity: a zero byte and a 32-bit number */
    tnd_mdp_printable(out, sizeof(out),
                      (const unsigned char *)"\x00\x6b\x8b\x45\x67", 5);
    assert_string_equal(out, "006b8b4567");
    /* one space is enough to make it hex */
    tnd_mdp_printable(out, sizeof(out), (const unsigned char *)"a b", 3);
    assert_string_equal(out, "612062");
    tnd_mdp_printable(out, sizeof(out), (const unsigned char *)"", 0);
    assert_string_equal(out, "");

    /* 2 * len + 1 bytes is enough, as promised */
    tnd_mdp_printable(small, sizeof(small), (const unsigned char *)"\1\2\3", 3);
    assert_string_equal(small, "010203");
    tnd_mdp_printable(small, 2, (const unsigned char *)"a", 1);
    assert_string_equal(small, "a");
    /* too small: cut short, still terminated */
    tnd_mdp_printable(small, 4, (const unsigned char *)"\1\2\3", 3);
    assert_string_equal(small, "01");
    tnd_mdp_printable(small, 0, (const unsigned char *)"a", 1);

    /* the longest identity fits TND_MDP_MAX_PRINTABLE whole, so two
     * identities that differ in the last byte print differently */
    memset(longest, 0xab, sizeof(longest));
    longest[sizeof(longest) - 1] = 0xcd;
    tnd_mdp_printable(out, sizeof(out), longest, sizeof(longest));
    assert_int_equal(strlen(out), 2 * TND_MDP_MAX_IDENTITY);
    assert_string_equal(out + strlen(out) - 4, "abcd");
}

/* ---- sockets ---------------------------------------------------------- */

static void *ctx, *router, *dealer;

static int open_pair(void **state)
{
    const char *id = "dealer-1";

    (void)state;
    ctx = zmq_ctx_new();
    router = zmq_socket(ctx, ZMQ_ROUTER);
    dealer = zmq_socket(ctx, ZMQ_DEALER);
    if (!router || !dealer || tnd_mdp_socket_limits(router) < 0 ||
        tnd_mdp_socket_limits(dealer) < 0 ||
        zmq_setsockopt(dealer, ZMQ_ROUTING_ID, id, strlen(id)) < 0 ||
        zmq_bind(router, "inproc://test-mdp") < 0 ||
        zmq_connect(dealer, "inproc://test-mdp") < 0)
        return -1;
    return 0;
}

static int close_pair(void **state)
{
    (void)state;
    zmq_close(dealer);
    zmq_close(router);
    zmq_ctx_term(ctx);
    return 0;
}

/* Wait (with a deadline) until socket has a message, then receive it. */
static int recv_soon(tnd_mdp_msg *out, unsigned char *identity,
                     size_t *identity_len, void *socket)
{
    zmq_pollitem_t item = {socket, 0, ZMQ_POLLIN, 0};

    assert_int_equal(zmq_poll(&item, 1, 2000), 1);
    return tnd_mdp_recv(out, identity, identity_len, socket);
}

static void send_and_receive_both_ways(void **state)
{
    unsigned char id[TND_MDP_MAX_IDENTITY];
    char request[] = "{\"tandem\":1}", empty[] = "{}";
    size_t id_len = 99;
    tnd_mdp_msg msg, out;

    (void)state;
    tnd_mdp_msg_init(&msg, true, TND_MDPW_READY, "coder");
    assert_int_equal(tnd_mdp_send(dealer, NULL, 0, &msg), 0);
    assert_int_equal(recv_soon(&out, id, &id_len, router), 0);
    assert_int_equal(id_len, 8);
    assert_memory_equal(id, "dealer-1", 8);
    assert_true(out.worker);
    assert_int_equal(out.command, TND_MDPW_READY);
    assert_string_equal(out.service, "coder");
    tnd_mdp_msg_clear(&out);

    /* the broker answers with a request, addressed by that identity */
    tnd_mdp_msg_init(&msg, true, TND_MDPW_REQUEST, NULL);
    memcpy(msg.address, "t1:1", 4);
    msg.address_len = 4;
    msg.body = request;
    msg.body_len = strlen(request);
    assert_int_equal(tnd_mdp_send(router, id, id_len, &msg), 0);
    assert_int_equal(recv_soon(&out, NULL, NULL, dealer), 0);
    assert_int_equal(out.command, TND_MDPW_REQUEST);
    assert_int_equal(out.address_len, 4);
    assert_memory_equal(out.address, "t1:1", 4);
    assert_string_equal(out.body, "{\"tandem\":1}");
    tnd_mdp_msg_clear(&out);

    /* a client message the other way */
    tnd_mdp_msg_init(&msg, false, TND_MDPC_REQUEST, "reviewer");
    msg.body = empty;
    msg.body_len = 2;
    assert_int_equal(tnd_mdp_send(dealer, NULL, 0, &msg), 0);
    assert_int_equal(recv_soon(&out, id, &id_len, router), 0);
    assert_false(out.worker);
    assert_string_equal(out.service, "reviewer");
    assert_string_equal(out.body, "{}");
    tnd_mdp_msg_clear(&out);
}

static void nothing_waiting_is_a_timeout(void **state)
{
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len = 99;
    tnd_mdp_msg out;
    int64_t start = tnd_now_ms();

    (void)state;
    assert_int_equal(tnd_mdp_recv(&out, id, &id_len, router), TND_ETIMEOUT);
    assert_int_equal(id_len, 0);
    assert_null(out.body);
    assert_int_equal(tnd_mdp_recv(&out, NULL, NULL, dealer), TND_ETIMEOUT);
    assert_true(tnd_now_ms() - start < 30000); /* it did not block */
}

/* Send count frames (the first the MDPW02 header) from the dealer. */
static void send_frames(size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const char *data = i == 0 ? "MDPW02" : "x";
        assert_true(zmq_send(dealer, data, strlen(data),
                             i + 1 < count ? ZMQ_SNDMORE : 0) >= 0);
    }
}

static void too_many_frames_are_drained_and_reported(void **state)
{
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len = 0;
    tnd_mdp_msg msg, out;

    (void)state;
    /* 8 frames (9 with the identity) are read and judged by the command */
    send_frames(TND_MDP_MAX_FRAMES);
    assert_int_equal(recv_soon(&out, id, &id_len, router), -1);
    assert_non_null(strstr(tnd_error_last(), "unknown MDP/Worker command"));

    /* more than 8 are not even collected */
    send_frames(12);
    tnd_mdp_msg_init(&msg, true, TND_MDPW_HEARTBEAT, NULL);
    assert_int_equal(tnd_mdp_send(dealer, NULL, 0, &msg), 0);
    assert_int_equal(recv_soon(&out, id, &id_len, router), -1);
    assert_string_equal(tnd_error_last(),
                        "malformed MDP message: more than 8 frames");
    assert_null(out.body);
    /* the sender is known, so it can be told off */
    assert_int_equal(id_len, 8);
    assert_memory_equal(id, "dealer-1", 8);

    /* the rest of the big message is gone; the next one reads fine */
    assert_int_equal(recv_soon(&out, id, &id_len, router), 0);
    assert_int_equal(out.command, TND_MDPW_HEARTBEAT);
    assert_int_equal(tnd_mdp_recv(&out, id, &id_len, router), TND_ETIMEOUT);

    /* the same on the dealer side, where there is no identity */
    for (int i = 0; i < 10; i++)
        assert_true(zmq_send(router, i ? "x" : "dealer-1", i ? 1 : 8,
                             ZMQ_SNDMORE) >= 0);
    assert_true(zmq_send(router, "x", 1, 0) >= 0);
    assert_int_equal(
        tnd_mdp_send(router, (const unsigned char *)"dealer-1", 8, &msg), 0);
    assert_int_equal(recv_soon(&out, NULL, NULL, dealer), -1);
    assert_non_null(strstr(tnd_error_last(), "more than 8 frames"));
    assert_int_equal(recv_soon(&out, NULL, NULL, dealer), 0);
    assert_int_equal(out.command, TND_MDPW_HEARTBEAT);
}

static void malformed_message_still_names_its_sender(void **state)
{
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len = 0;
    tnd_mdp_msg out;

    (void)state;
    assert_true(zmq_send(dealer, "MDPW01", 6, ZMQ_SNDMORE) >= 0);
    assert_true(zmq_send(dealer, "\x01", 1, ZMQ_SNDMORE) >= 0);
    assert_true(zmq_send(dealer, "coder", 5, 0) >= 0);
    assert_int_equal(recv_soon(&out, id, &id_len, router), -1);
    assert_non_null(strstr(tnd_error_last(), "not MDPC02 or MDPW02"));
    assert_int_equal(id_len, 8);
    assert_memory_equal(id, "dealer-1", 8);
}

static void send_to_an_unknown_peer_fails(void **state)
{
    int one = 1;
    tnd_mdp_msg msg;

    (void)state;
    assert_int_equal(
        zmq_setsockopt(router, ZMQ_ROUTER_MANDATORY, &one, sizeof(one)), 0);
    tnd_mdp_msg_init(&msg, true, TND_MDPW_HEARTBEAT, NULL);
    assert_int_equal(
        tnd_mdp_send(router, (const unsigned char *)"nobody", 6, &msg), -1);
    assert_memory_equal(tnd_error_last(), "send failed: ", 13);
}

static void socket_limits_are_applied(void **state)
{
    int64_t maxmsg = 0;
    int linger = -1, hwm = 0;
    size_t len = sizeof(maxmsg);

    (void)state;
    assert_int_equal(zmq_getsockopt(router, ZMQ_MAXMSGSIZE, &maxmsg, &len), 0);
    assert_true(maxmsg > TND_MDP_MAX_BODY);
    len = sizeof(linger);
    assert_int_equal(zmq_getsockopt(dealer, ZMQ_LINGER, &linger, &len), 0);
    assert_int_equal(linger, 0);
    len = sizeof(hwm);
    assert_int_equal(zmq_getsockopt(dealer, ZMQ_SNDHWM, &hwm, &len), 0);
    assert_true(hwm > 0);
}

static void a_socket_error_is_not_a_timeout(void **state)
{
    void *pub = zmq_socket(ctx, ZMQ_PUB); /* cannot receive at all */
    tnd_mdp_msg out;

    (void)state;
    assert_non_null(pub);
    assert_int_equal(tnd_mdp_recv(&out, NULL, NULL, pub), -1);
    assert_memory_equal(tnd_error_last(), "receive failed: ", 16);
    zmq_close(pub);
}

/* The workers of an agent with --threads are AGENT.N, and each maps back
 * to its process; a name that only looks like one stays whole. */
static void worker_names_map_back_to_their_agent(void **state)
{
    char name[32], agent[32];

    (void)state;
    assert_int_equal(tnd_mdp_worker_name(name, sizeof(name), "coder-1", 0), 0);
    assert_string_equal(name, "coder-1");
    assert_int_equal(tnd_mdp_worker_name(name, sizeof(name), "coder-1", 12), 0);
    assert_string_equal(name, "coder-1.12");
    tnd_mdp_worker_agent(agent, sizeof(agent), name);
    assert_string_equal(agent, "coder-1");
    tnd_mdp_worker_agent(agent, sizeof(agent), "coder-1");
    assert_string_equal(agent, "coder-1");
    tnd_mdp_worker_agent(agent, sizeof(agent), "my.agent");
    assert_string_equal(agent, "my.agent");
    tnd_mdp_worker_agent(agent, sizeof(agent), "trailing.");
    assert_string_equal(agent, "trailing.");
    assert_int_equal(tnd_mdp_worker_name(name, 8, "coder-1", 2), -1);
}

/* ---- what the ZAP handler and the kernel say of a sender -------------- */

/* A ZAP handler's metadata frame of name=value pairs (ZMTP's form). */
static size_t metadata(unsigned char *out, const char *const *pairs)
{
    size_t len = 0;

    for (size_t i = 0; pairs[i]; i += 2) {
        size_t n = strlen(pairs[i]), v = strlen(pairs[i + 1]);
        out[len++] = (unsigned char)n;
        memcpy(out + len, pairs[i], n);
        len += n;
        for (int shift = 24; shift >= 0; shift -= 8)
            out[len++] = (unsigned char)(v >> shift);
        memcpy(out + len, pairs[i + 1], v);
        len += v;
    }
    return len;
}

/* A client over ipc:// to a ROUTER whose ZAP handler (answering here)
 * admits it with user id "client" and the properties pairs; the message
 * as tnd_mdp_recv reads it. */
static void received_with(tnd_mdp_msg *out, const char *const *pairs)
{
    void *c = zmq_ctx_new(), *zap = zmq_socket(c, ZMQ_REP),
         *r = zmq_socket(c, ZMQ_ROUTER), *d = zmq_socket(c, ZMQ_DEALER);
    char dir[] = "/tmp/tnd-mdp-XXXXXX", endpoint[64], body[] = "{}";
    unsigned char id[TND_MDP_MAX_IDENTITY], meta[512];
    size_t id_len, meta_len = metadata(meta, pairs);
    int64_t deadline = tnd_now_ms() + 5000;
    tnd_mdp_msg msg;
    int rc = TND_ETIMEOUT;

    assert_non_null(mkdtemp(dir));
    snprintf(endpoint, sizeof(endpoint), "ipc://%s/s", dir);
    assert_int_equal(zmq_bind(zap, "inproc://zeromq.zap.01"), 0);
    assert_int_equal(zmq_setsockopt(r, ZMQ_ZAP_DOMAIN, "test", 4), 0);
    assert_int_equal(zmq_bind(r, endpoint), 0);
    assert_int_equal(zmq_connect(d, endpoint), 0);
    tnd_mdp_msg_init(&msg, false, TND_MDPC_REQUEST, "tandem.answer");
    msg.body = body;
    msg.body_len = 2;
    assert_int_equal(tnd_mdp_send(d, NULL, 0, &msg), 0);
    while (rc == TND_ETIMEOUT && tnd_now_ms() < deadline) {
        zmq_pollitem_t items[2] = {{zap, 0, ZMQ_POLLIN, 0},
                                   {r, 0, ZMQ_POLLIN, 0}};
        zmq_poll(items, 2, 100);
        if (items[0].revents & ZMQ_POLLIN)
            zap_answer(zap, "200", "OK", "client", meta, meta_len);
        if (items[1].revents & ZMQ_POLLIN)
            rc = tnd_mdp_recv(out, id, &id_len, r);
    }
    assert_int_equal(rc, 0);
    assert_string_equal(out->service, "tandem.answer");
    zmq_close(d);
    zmq_close(r);
    zmq_close(zap);
    zmq_ctx_term(c);
    snprintf(endpoint, sizeof(endpoint), "%s/s", dir);
    unlink(endpoint);
    rmdir(dir);
}

static void the_zap_handlers_key_name_is_read(void **state)
{
    const char *const named[] = {TND_MDP_KEY_NAME, "build-host",
                                 TND_MDP_KEY_FINGERPRINT, "rq:rM>}U?@Ln", NULL};
    tnd_mdp_msg out;
    unsigned uid = 12345;

    (void)state;
    received_with(&out, named);
    assert_string_equal(out.user_id, "client");
    assert_string_equal(out.key_name, "build-host");
    assert_string_equal(out.key_fingerprint, "rq:rM>}U?@Ln");
    /* over ipc:// libzmq names the peer as the kernel saw it */
    if (tnd_mdp_peer_uid(&uid, out.peer_address) == 0)
        assert_int_equal(uid, (unsigned)geteuid());
    tnd_mdp_msg_clear(&out);
}

static void a_key_name_too_long_or_not_printable_is_none(void **state)
{
    char long_name[TND_MDP_MAX_KEY_NAME + 2];
    const char *const odd[] = {TND_MDP_KEY_NAME, "build host",
                               TND_MDP_KEY_FINGERPRINT, long_name, NULL};
    const char *const none[] = {NULL};
    tnd_mdp_msg out;

    (void)state;
    memset(long_name, 'k', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    received_with(&out, odd);
    assert_string_equal(out.user_id, "client");
    assert_string_equal(out.key_name, "");
    assert_string_equal(out.key_fingerprint, "");
    tnd_mdp_msg_clear(&out);
    received_with(&out, none);
    assert_string_equal(out.key_name, "");
    tnd_mdp_msg_clear(&out);
}

static void endpoint_refused(const char *endpoint, bool bind, const char *says)
{
    assert_int_equal(tnd_mdp_endpoint_check(endpoint, bind), -1);
    if (!strstr(tnd_error_last(), says))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), says);
}

/* libzmq took a port past 65535 modulo 65536 (tandem serve --bind
 * tcp://127.0.0.1:99999 listened on 34463, and said so) and answered a
 * missing port with "Invalid argument" and exit 1. */
static void endpoints_are_checked_before_libzmq_sees_them(void **state)
{
    (void)state;
    assert_int_equal(tnd_mdp_endpoint_check("tcp://127.0.0.1:5555", false), 0);
    assert_int_equal(tnd_mdp_endpoint_check("tcp://[::1]:5555", false), 0);
    assert_int_equal(tnd_mdp_endpoint_check("tcp://host-1:65535", false), 0);
    assert_int_equal(tnd_mdp_endpoint_check("ipc:///run/x.sock", false), 0);
    assert_int_equal(tnd_mdp_endpoint_check("tcp://127.0.0.1:0", true), 0);
    assert_int_equal(tnd_mdp_endpoint_check("tcp://127.0.0.1:*", true), 0);
    assert_int_equal(tnd_mdp_endpoint_check("tcp://0.0.0.0:5555", true), 0);
    endpoint_refused("tcp://127.0.0.1:99999", true, "1..65535");
    endpoint_refused("tcp://127.0.0.1:65536", false, "1..65535");
    endpoint_refused("tcp://127.0.0.1:0", false, "not '0'");
    endpoint_refused("tcp://127.0.0.1:abc", false, "not 'abc'");
    endpoint_refused("tcp://127.0.0.1:", false, "the port must be a number");
    endpoint_refused("tcp://127.0.0.1", false,
                     "names no port: give tcp://HOST:PORT");
    endpoint_refused("tcp://[::1]", true, "names no port");
    endpoint_refused("127.0.0.1:5555", false, "give tcp://127.0.0.1:5555");
    endpoint_refused("udp://x:5", false, "is not an endpoint");
    endpoint_refused("ipc://", true, "names no socket");
}

static void the_uid_of_an_ipc_peer_address(void **state)
{
    static const struct {
        const char *address;
        int rc;
        unsigned uid;
    } rows[] = {
        {"localhost:1000:1000:4242", 0, 1000},
        {":0:0:1", 0, 0},
        {"localhost:4294967295:0:1", 0, 4294967295u},
        {"localhost:1000:1000", -1, 0}, /* no pid */
        {"127.0.0.1", -1, 0},
        {"", -1, 0},
        {"localhost:10x0:1000:4242", -1, 0},
        {"1000:1000:4242", -1, 0}, /* no host before the uid */
        {"localhost:99999999999:0:1", -1, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        unsigned uid = 7;
        int rc = tnd_mdp_peer_uid(&uid, rows[i].address);
        if (rc != rows[i].rc || (rc == 0 && uid != rows[i].uid))
            fail_msg("row %zu (%s): rc %d uid %u", i, rows[i].address, rc, uid);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worker_names_map_back_to_their_agent),
        cmocka_unit_test(the_zap_handlers_key_name_is_read),
        cmocka_unit_test(a_key_name_too_long_or_not_printable_is_none),
        cmocka_unit_test(the_uid_of_an_ipc_peer_address),
        cmocka_unit_test(endpoints_are_checked_before_libzmq_sees_them),
        cmocka_unit_test(client_commands_round_trip),
        cmocka_unit_test(worker_commands_round_trip),
        cmocka_unit_test(encode_lays_out_the_rfc_frames),
        cmocka_unit_test(empty_body_decodes_as_an_empty_string),
        cmocka_unit_test(one_leading_empty_frame_is_tolerated),
        cmocka_unit_test(wrong_headers_and_commands_are_rejected),
        cmocka_unit_test(wrong_frame_counts_are_rejected),
        cmocka_unit_test(bad_services_are_rejected),
        cmocka_unit_test(bad_addresses_and_delimiters_are_rejected),
        cmocka_unit_test(bodies_over_the_limit_are_rejected),
        cmocka_unit_test(init_clear_and_names),
        cmocka_unit_test(printable_shows_text_as_is_and_binary_as_hex),
        cmocka_unit_test_setup_teardown(send_and_receive_both_ways, open_pair,
                                        close_pair),
        cmocka_unit_test_setup_teardown(nothing_waiting_is_a_timeout, open_pair,
                                        close_pair),
        cmocka_unit_test_setup_teardown(
            too_many_frames_are_drained_and_reported, open_pair, close_pair),
        cmocka_unit_test_setup_teardown(
            malformed_message_still_names_its_sender, open_pair, close_pair),
        cmocka_unit_test_setup_teardown(send_to_an_unknown_peer_fails,
                                        open_pair, close_pair),
        cmocka_unit_test_setup_teardown(socket_limits_are_applied, open_pair,
                                        close_pair),
        cmocka_unit_test_setup_teardown(a_socket_error_is_not_a_timeout,
                                        open_pair, close_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
