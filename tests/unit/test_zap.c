/* Unit tests for orchestrator/zap: over a real CURVE handshake on
 * loopback tcp, a listed key gets in with its roles as the messages'
 * User-Id, an unlisted key and a peer without CURVE get nothing through,
 * and refusals are counted. */
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
#include "common/log.h"
#include "orchestrator/zap.h"

typedef struct fixture {
    void *ctx, *server;
    void *client; /* closed by teardown even when a check fails */
    tnd_zap *zap;
    tnd_curve_pair server_keys, listed, other;
    tnd_curve_list list;
    char endpoint[64];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    int yes = 1, linger = 0;
    size_t len;

    tnd_log_init("test", TND_LOG_ERROR);
    f->ctx = zmq_ctx_new();
    zmq_ctx_set(f->ctx, ZMQ_BLOCKY, 0); /* a failed test leaves a client */
    if (tnd_curve_generate(&f->server_keys) < 0 ||
        tnd_curve_generate(&f->listed) < 0 || tnd_curve_generate(&f->other) < 0)
        return -1;
    f->list.entries = calloc(1, sizeof(tnd_curve_entry));
    f->list.n = 1;
    memcpy(f->list.entries[0].public_key, f->listed.public_key,
           TND_CURVE_Z85_LEN + 1);
    f->list.entries[0].roles = TND_CURVE_REVIEWER;
    if (!(f->zap = tnd_zap_new(f->ctx, &f->list, NULL, NULL)))
        return -1;
    f->server = zmq_socket(f->ctx, ZMQ_ROUTER);
    zmq_setsockopt(f->server, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(f->server, ZMQ_CURVE_SERVER, &yes, sizeof(yes));
    zmq_setsockopt(f->server, ZMQ_CURVE_SECRETKEY, f->server_keys.secret_key,
                   TND_CURVE_Z85_LEN);
    if (zmq_bind(f->server, "tcp://127.0.0.1:*") < 0)
        return -1;
    len = sizeof(f->endpoint);
    zmq_getsockopt(f->server, ZMQ_LAST_ENDPOINT, f->endpoint, &len);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    zmq_close(f->server);
    if (f->client)
        zmq_close(f->client);
    tnd_zap_destroy(&f->zap);
    zmq_ctx_term(f->ctx);
    free(f->list.entries);
    free(f);
    return 0;
}

/* A DEALER that connects with keys (NULL: no CURVE) and sends "hello". */
static void *client(fixture *f, const tnd_curve_pair *keys)
{
    void *c = zmq_socket(f->ctx, ZMQ_DEALER);
    int linger = 0;

    zmq_setsockopt(c, ZMQ_LINGER, &linger, sizeof(linger));
    if (keys) {
        zmq_setsockopt(c, ZMQ_CURVE_SERVERKEY, f->server_keys.public_key,
                       TND_CURVE_Z85_LEN);
        zmq_setsockopt(c, ZMQ_CURVE_PUBLICKEY, keys->public_key,
                       TND_CURVE_Z85_LEN);
        zmq_setsockopt(c, ZMQ_CURVE_SECRETKEY, keys->secret_key,
                       TND_CURVE_Z85_LEN);
    }
    if (f->client)
        zmq_close(f->client);
    f->client = c;
    assert_int_equal(zmq_connect(c, f->endpoint), 0);
    zmq_send(c, "hello", 5, ZMQ_DONTWAIT);
    return c;
}

/* The Key-Name and Key-Fingerprint of the last message received. */
static char got_name[128], got_fp[128];

/* Serve ZAP and wait up to ms for a message at the server: its User-Id
 * into user (or "" when it has none); false when none came. */
static bool received(fixture *f, long ms, char *user, size_t size)
{
    int64_t deadline = tnd_now_ms() + ms;

    while (tnd_now_ms() < deadline) {
        zmq_pollitem_t items[2] = {{tnd_zap_socket(f->zap), 0, ZMQ_POLLIN, 0},
                                   {f->server, 0, ZMQ_POLLIN, 0}};
        zmq_poll(items, 2, 50);
        if (items[0].revents & ZMQ_POLLIN)
            assert_true(tnd_zap_serve(f->zap) >= 0);
        if (items[1].revents & ZMQ_POLLIN) {
            zmq_msg_t m;
            const char *uid;
            int more = 1;
            size_t ms_len = sizeof(more);
            user[0] = '\0';
            while (more) { /* the routing id, then the body */
                zmq_msg_init(&m);
                zmq_msg_recv(&m, f->server, 0);
                uid = zmq_msg_gets(&m, "User-Id");
                if (uid && !user[0]) {
                    const char *name = zmq_msg_gets(&m, TND_MDP_KEY_NAME),
                               *fp = zmq_msg_gets(&m, TND_MDP_KEY_FINGERPRINT);
                    snprintf(user, size, "%s", uid);
                    snprintf(got_name, sizeof(got_name), "%s",
                             name ? name : "(none)");
                    snprintf(got_fp, sizeof(got_fp), "%s", fp ? fp : "(none)");
                }
                zmq_getsockopt(f->server, ZMQ_RCVMORE, &more, &ms_len);
                zmq_msg_close(&m);
            }
            return true;
        }
    }
    return false;
}

static void a_listed_key_gets_in_with_its_roles(void **state)
{
    fixture *f = *state;
    char user[64];
    client(f, &f->listed);
    assert_true(received(f, 10000, user, sizeof(user)));
    assert_string_equal(user, "reviewer");
    assert_int_equal(tnd_zap_refused(f->zap), 0);
    /* no NAME on its line: the key is named by its fingerprint */
    assert_string_equal(got_name, tnd_curve_fingerprint(f->listed.public_key));
    assert_string_equal(got_fp, tnd_curve_fingerprint(f->listed.public_key));
}

/* The reply's metadata names the key: every message of the peer carries
 * the NAME of its line as Key-Name, and its fingerprint. */
static void a_named_key_is_known_by_its_name(void **state)
{
    fixture *f = *state;
    char user[64];

    snprintf(f->list.entries[0].name, sizeof(f->list.entries[0].name), "%s",
             "build-host");
    client(f, &f->listed);
    assert_true(received(f, 10000, user, sizeof(user)));
    assert_string_equal(user, "reviewer");
    assert_string_equal(got_name, "build-host");
    assert_string_equal(got_fp, tnd_curve_fingerprint(f->listed.public_key));
}

/* The frame itself, byte for byte (ZMTP metadata: a 1-byte name length,
 * the name, a 4-byte value length in network order, the value). */
static void the_metadata_frame_is_zmtps_form(void **state)
{
    const char *key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
    static const unsigned char want[] =
        "\x08Key-Name\0\0\0\x02"
        "ci"
        "\x0fKey-Fingerprint\0\0\0\x0crq:rM>}U?@Ln";
    unsigned char out[TND_ZAP_METADATA_MAX];
    size_t len = tnd_zap_metadata(out, key, "ci");

    (void)state;
    assert_int_equal(len, sizeof(want) - 1);
    assert_memory_equal(out, want, len);
    /* no name: the fingerprint stands for it */
    len = tnd_zap_metadata(out, key, "");
    assert_int_equal(len, 9 + 4 + 12 + 16 + 4 + 12);
    assert_memory_equal(out + 13, "rq:rM>}U?@Ln", 12);
    /* the longest name a line keeps still fits */
    char name[sizeof(((tnd_curve_entry *)0)->name)];
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    assert_true(tnd_zap_metadata(out, key, name) <= TND_ZAP_METADATA_MAX);
}

/* What a peer's user id (its key's roles) lets it ask. */
static void roles_say_what_a_peer_may_ask(void **state)
{
    (void)state;
    assert_true(tnd_zap_may_serve("coder,reviewer", "reviewer.2"));
    assert_false(tnd_zap_may_serve("client,person", "coder"));
    assert_true(tnd_zap_may_submit("client"));
    assert_true(tnd_zap_may_submit("person"));
    assert_false(tnd_zap_may_submit("coder,reviewer"));
    assert_int_equal(tnd_zap_roles("client,person"),
                     TND_CURVE_CLIENT | TND_CURVE_PERSON);
    assert_int_equal(tnd_zap_roles(""), 0);
    assert_int_equal(tnd_zap_roles("client;rm"), 0);
    assert_int_equal(tnd_zap_roles(NULL), 0);
}

static void other_keys_and_plain_peers_get_nothing_through(void **state)
{
    fixture *f = *state;
    char user[64];
    int64_t deadline = tnd_now_ms() + 10000;

    client(f, &f->other);
    /* refused: the handshake is answered 400, no message arrives */
    while (tnd_zap_refused(f->zap) == 0 && tnd_now_ms() < deadline)
        assert_false(received(f, 50, user, sizeof(user)));
    assert_int_equal(tnd_zap_refused(f->zap), 1);
    assert_false(received(f, 300, user, sizeof(user)));
    /* without CURVE the handshake fails before ZAP is asked */
    client(f, NULL);
    assert_false(received(f, 500, user, sizeof(user)));
}

/* path holds text, put in place by a rename (as an editor saves). */
static void write_list(const char *path, const char *text)
{
    char tmp[256];
    FILE *fp;

    snprintf(tmp, sizeof(tmp), "%s.new", path);
    assert_non_null(fp = fopen(tmp, "w"));
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(rename(tmp, path), 0);
}

/* A key removed from the authorized-keys file is refused from then on,
 * without a restart (it was admitted until the server restarted); a
 * file that no longer reads admits the server's own key alone. */
static void the_list_is_read_again_when_it_changes(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/tnd-test-zap-XXXXXX", path[64], text[256], user[64];
    char fp_listed[64], fp_own[64];
    tnd_curve_entry own;
    int64_t deadline = tnd_now_ms() + 10000;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/authorized", dir);
    snprintf(text, sizeof(text), "reviewer %s\n", f->listed.public_key);
    write_list(path, text);
    memset(&own, 0, sizeof(own));
    memcpy(own.public_key, f->other.public_key, TND_CURVE_Z85_LEN + 1);
    own.roles = TND_CURVE_CODER;
    snprintf(fp_listed, sizeof(fp_listed), "%s",
             tnd_curve_fingerprint(f->listed.public_key));
    snprintf(fp_own, sizeof(fp_own), "%s",
             tnd_curve_fingerprint(f->other.public_key));
    tnd_zap_destroy(&f->zap);
    assert_non_null(f->zap = tnd_zap_new(f->ctx, &f->list, path, &own));

    assert_false(tnd_zap_reload(f->zap)); /* the file as it was */
    assert_true(tnd_zap_key_may_serve(f->zap, fp_listed, "reviewer"));
    assert_false(tnd_zap_key_may_serve(f->zap, fp_listed, "coder"));

    /* the key's line removed */
    write_list(path, "# nobody\n");
    assert_true(tnd_zap_reload(f->zap));
    assert_false(tnd_zap_reload(f->zap));
    assert_false(tnd_zap_key_may_serve(f->zap, fp_listed, "reviewer"));
    assert_true(tnd_zap_key_may_serve(f->zap, fp_own, "coder"));
    client(f, &f->listed);
    while (tnd_zap_refused(f->zap) == 0 && tnd_now_ms() < deadline)
        assert_false(received(f, 50, user, sizeof(user)));
    assert_int_equal(tnd_zap_refused(f->zap), 1);

    /* listed again, then a line that does not read: own key alone */
    write_list(path, text);
    assert_true(tnd_zap_reload(f->zap));
    assert_true(tnd_zap_key_may_serve(f->zap, fp_listed, "reviewer"));
    snprintf(text, sizeof(text), "reviewers %s\n", f->listed.public_key);
    write_list(path, text);
    assert_true(tnd_zap_reload(f->zap));
    assert_false(tnd_zap_key_may_serve(f->zap, fp_listed, "reviewer"));
    assert_true(tnd_zap_key_may_serve(f->zap, fp_own, "coder"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_listed_key_gets_in_with_its_roles,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            other_keys_and_plain_peers_get_nothing_through, setup, teardown),
        cmocka_unit_test_setup_teardown(a_named_key_is_known_by_its_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_list_is_read_again_when_it_changes,
                                        setup, teardown),
        cmocka_unit_test(the_metadata_frame_is_zmtps_form),
        cmocka_unit_test(roles_say_what_a_peer_may_ask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
