/* Fuzz the cassette reader, agents/replay: the replay provider opening a
 * cassette file (it reads a path; the input is a memfd) and answering
 * from it.
 *
 * A cassette that opens answers every call it records, as often as
 * asked, and says so plainly for a call it does not; one that does not
 * open says why. */
#include "tests/fuzz/fuzz.h"

#include "agents/replay.h"
#include "common/error.h"

static void ask(void *state, const char *role, int attempt, int call)
{
    tnd_prompt p = {NULL, "the prompt", role, "t1", attempt, call};
    tnd_llm_call c = {.prompt = &p, .cancel_fd = -1, .timeout_ms = 1000};
    tnd_llm_answer a = {0};
    long retry = 0;

    if (tnd_replay_backend.complete(state, &a, &c, &retry) == 0)
        FUZZ_CHECK(a.text != NULL);
    else
        FUZZ_CHECK(a.text == NULL && *tnd_error_last());
    FUZZ_CHECK(retry == -1);
    free(a.text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_llm_config cfg;
    char path[64];
    void *state;

    if (fuzz_file(path, sizeof(path), data, size) < 0)
        abort();
    memset(&cfg, 0, sizeof(cfg));
    cfg.cassette = path;
    state = tnd_replay_backend.open(&cfg);
    if (!state) {
        FUZZ_CHECK(*tnd_error_last());
        return 0;
    }
    for (int attempt = 1; attempt <= 2; attempt++)
        for (int call = 1; call <= 2; call++) {
            ask(state, "coder", attempt, call);
            ask(state, "reviewer", attempt, call);
        }
    ask(state, "reviewer.2", 1, 1);
    tnd_replay_backend.close(state);
    return 0;
}
