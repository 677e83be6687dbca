/* Fuzz agents/cassette: a recording (`tandem run --record`, one JSON
 * line per LLM answer, maybe torn by a crash) turned into a cassette.
 *
 * Any recording gives a cassette (bad lines skipped and counted), and
 * the replay provider opens every cassette the recorder writes: a
 * recording that cannot be replayed is a run that cannot be repeated.
 * The recording is a memfd; the cassette goes to a private directory
 * under /dev/shm (or $TMPDIR), removed when the input is done. */
#include "tests/fuzz/fuzz.h"

#include "agents/cassette.h"
#include "agents/replay.h"
#include "common/error.h"

/* A directory of its own for each input's cassette, removed when the
 * input is done: a crash leaves only the one it was writing. */
static int make_dir(char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                       : tmp && *tmp                 ? tmp
                                                     : "/tmp";

    snprintf(dir, size, "%s/tandem-fuzz-XXXXXX", base);
    return mkdtemp(dir) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_llm_config cfg;
    char partial[64], dir[256], out[300];
    size_t count = 0, skipped = 0;
    void *state;

    if (make_dir(dir, sizeof(dir)) < 0 ||
        fuzz_file(partial, sizeof(partial), data, size) < 0)
        abort();
    snprintf(out, sizeof(out), "%s/cassette.json", dir);
    FUZZ_CHECK(tnd_cassette_from_recording(partial, out, "fuzz", NULL, &count,
                                           &skipped) == 0);
    memset(&cfg, 0, sizeof(cfg));
    cfg.cassette = out;
    state = tnd_replay_backend.open(&cfg);
    FUZZ_CHECK(state != NULL);
    tnd_replay_backend.close(state);
    unlink(out);
    rmdir(dir);
    return 0;
}
