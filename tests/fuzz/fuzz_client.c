/* Fuzz proto/client: what a client may send tandem serve, and what a
 * client reads back. The first byte picks the service the request is
 * sent to (tandem.submit, tandem.attach, tandem.status, tandem.answer, or
 * an agent's, which must be refused); the rest is the body, as it arrives in an
 * MDP frame.
 *
 * A request that decodes is one the client could hold, so it must
 * encode to a request that decodes again, and a second trip changes no
 * byte (for valid UTF-8, as PROTOCOL.md defines bodies; other bytes
 * only have to be safe). The whole input is also read as a reply: that
 * must not crash, and a reply that decodes has its fields within their
 * limits. */
#include "tests/fuzz/fuzz.h"

#include "proto/client.h"

static const char *const services[] = {TND_CLIENT_SUBMIT, TND_CLIENT_ATTACH,
                                       TND_CLIENT_STATUS, TND_CLIENT_ANSWER,
                                       "coder"};

static void request(const char *service, const char *body, size_t len,
                    bool utf8)
{
    tnd_client_request a, b;
    char *one, *two;
    size_t len1, len2;

    if (tnd_client_request_decode(&a, service, body, len) < 0) {
        FUZZ_CHECK(a.repo == NULL && a.task == NULL && a.session == NULL);
        return;
    }
    FUZZ_CHECK(strcmp(service, "coder") != 0);
    FUZZ_CHECK(strcmp(tnd_client_service(a.kind), service) == 0);
    FUZZ_CHECK(a.kind != TND_CLIENT_KIND_SUBMIT ||
               (a.repo[0] == '/' && a.task && *a.task));
    if (utf8) {
        one = tnd_client_request_encode(&a, &len1);
        FUZZ_CHECK(tnd_client_request_decode(&b, service, one, len1) == 0);
        two = tnd_client_request_encode(&b, &len2);
        FUZZ_CHECK(len1 == len2 && memcmp(one, two, len1) == 0);
        free(one);
        free(two);
        tnd_client_request_clear(&b);
    }
    tnd_client_request_clear(&a);
}

static void reply(const char *body, size_t len)
{
    tnd_client_reply r;

    if (tnd_client_reply_decode(&r, body, len) < 0)
        return;
    FUZZ_CHECK(r.type >= TND_CLIENT_ACCEPTED && r.type <= TND_CLIENT_ERROR);
    FUZZ_CHECK(r.type != TND_CLIENT_OUTPUT ||
               (r.text && r.text_len <= TND_CLIENT_MAX_TEXT));
    FUZZ_CHECK(r.type != TND_CLIENT_DONE ||
               (r.session && r.exit_code >= 0 && r.exit_code <= 255));
    FUZZ_CHECK(r.type != TND_CLIENT_ERROR || (r.kind && r.error));
    tnd_client_reply_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data + 1;

    if (size < 1)
        return 0;
    request(services[data[0] % 5], body, size - 1,
            tnd_utf8_valid(body, size - 1));
    reply(body, size - 1);
    return 0;
}
