/* Fuzz proto/body, proto/code and proto/audit: every body a peer can
 * send, read by the decoder its "type" names (the input is one body, as
 * it arrives in an MDP frame, without a NUL).
 *
 * A body that decodes is a value the sender could hold, so the encoder
 * must write it as a body that decodes again, and the pair must agree:
 * one trip may normalise (a score printed "%.3g"), a second changes no
 * byte. That holds for bodies as PROTOCOL.md defines them, valid UTF-8:
 * the decoders also take other bytes, which the encoder writes as U+FFFD
 * (three bytes for one, so a field at its limit may no longer fit), and
 * for those only memory safety is checked. Other types ("error" among
 * them) are refused by a caller that expects a reply. */
#include "tests/fuzz/fuzz.h"

#include "common/utf8.h"
#include "proto/audit.h"
#include "proto/body.h"
#include "proto/code.h"

#define ROUND_TRIP(type, decode, encode, clear, data, size, utf8)      \
    do {                                                               \
        type a, b;                                                     \
        char *one, *two;                                               \
        size_t len1, len2;                                             \
        if (decode(&a, (const char *)(data), (size)) < 0 || !(utf8)) { \
            clear(&a);                                                 \
            break;                                                     \
        }                                                              \
        one = encode(&a, &len1);                                       \
        FUZZ_CHECK(decode(&b, one, len1) == 0);                        \
        two = encode(&b, &len2);                                       \
        FUZZ_CHECK(len1 == len2 && memcmp(one, two, len1) == 0);       \
        free(one);                                                     \
        free(two);                                                     \
        clear(&a);                                                     \
        clear(&b);                                                     \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char type[32];
    json_object *obj = NULL;
    bool utf8 = tnd_utf8_valid((const char *)data, size);

    if (tnd_body_type(type, sizeof(type), (const char *)data, size) < 0)
        return 0;
    FUZZ_CHECK(strlen(type) < sizeof(type));
    if (strcmp(type, "code") == 0) {
        ROUND_TRIP(tnd_code_request, tnd_code_request_decode,
                   tnd_code_request_encode, tnd_code_request_clear, data, size,
                   utf8);
    } else if (strcmp(type, "code_reply") == 0) {
        ROUND_TRIP(tnd_code_reply, tnd_code_reply_decode, tnd_code_reply_encode,
                   tnd_code_reply_clear, data, size, utf8);
    } else if (strcmp(type, "audit") == 0) {
        ROUND_TRIP(tnd_audit_request, tnd_audit_request_decode,
                   tnd_audit_request_encode, tnd_audit_request_clear, data,
                   size, utf8);
    } else if (strcmp(type, "audit_reply") == 0) {
        ROUND_TRIP(tnd_audit_reply, tnd_audit_reply_decode,
                   tnd_audit_reply_encode, tnd_audit_reply_clear, data, size,
                   utf8);
    } else {
        /* "error" and unknown types: what a caller expecting a reply
         * hears */
        FUZZ_CHECK(tnd_body_open(&obj, (const char *)data, size, "code_reply") <
                   0);
        FUZZ_CHECK(obj == NULL);
    }
    return 0;
}
