/* Fuzz proto/mdp: tnd_mdp_decode on frames as tnd_mdp_recv hands them
 * over (at most TND_MDP_MAX_FRAMES + 1: the optional empty frame in
 * front).
 *
 * Input: frames one after the other, each a length byte L and L bytes;
 * L = 255 takes the rest of the input (bodies are the big frames). A
 * message that decodes must encode back to the frames it came from (the
 * empty frame in front dropped): the broker forwards what it decoded,
 * and a change on the way is a message the peer never sent. */
#include "tests/fuzz/fuzz.h"

#include "proto/mdp.h"

#define MAX_IN (TND_MDP_MAX_FRAMES + 1)

static size_t split(tnd_frame *frames, const uint8_t *data, size_t size)
{
    size_t n = 0, at = 0;

    while (at < size && n < MAX_IN) {
        size_t len = data[at++];
        if (len == 255 || len > size - at)
            len = size - at;
        frames[n].data = data + at;
        frames[n].size = len;
        n++;
        at += len;
    }
    return n;
}

static void check_encoding(const tnd_mdp_msg *msg, const tnd_frame *in,
                           size_t n)
{
    tnd_frame out[TND_MDP_MAX_FRAMES];
    unsigned char command;
    size_t m;

    if (n > 0 && in[0].size == 0) {
        in++;
        n--;
    }
    m = tnd_mdp_encode(out, &command, msg);
    FUZZ_CHECK(m == n);
    for (size_t i = 0; i < m; i++) {
        FUZZ_CHECK(out[i].size == in[i].size);
        FUZZ_CHECK(out[i].size == 0 ||
                   memcmp(out[i].data, in[i].data, out[i].size) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_frame frames[MAX_IN];
    size_t n = split(frames, data, size);
    tnd_mdp_msg msg;
    char shown[TND_MDP_MAX_PRINTABLE];

    if (tnd_mdp_decode(&msg, frames, n) < 0) {
        FUZZ_CHECK(msg.body == NULL);
        return 0;
    }
    FUZZ_CHECK(
        strcmp(tnd_mdp_command_name(msg.worker, msg.command), "UNKNOWN") != 0);
    FUZZ_CHECK(strlen(msg.service) <= TND_MDP_MAX_SERVICE);
    FUZZ_CHECK(msg.address_len <= TND_MDP_MAX_ADDRESS);
    FUZZ_CHECK(!msg.body || msg.body[msg.body_len] == '\0');
    check_encoding(&msg, frames, n);
    /* what the broker logs of a client address, at every size */
    tnd_mdp_printable(shown, sizeof(shown), msg.address, msg.address_len);
    FUZZ_CHECK(strlen(shown) < sizeof(shown));
    if (size > 0) {
        size_t small = data[0] % sizeof(shown);
        tnd_mdp_printable(shown, small, msg.address, msg.address_len);
        FUZZ_CHECK(small == 0 || strlen(shown) < small);
    }
    tnd_mdp_msg_clear(&msg);
    return 0;
}
