/* Fuzz agents/cassette: a recording (`tandem run --record`, one JSON
 * line per LLM answer, maybe torn by a crash) turned into a cassette.
 *
 * Any recording gives a cassette (bad lines skipped and counted), and
 * the replay provider opens every cassette the recorder writes: a
 * recording that cannot be replayed is a run that cannot be repeated.
 * The recording is a memfd; the cassette goes to a private directory
 * under /dev/shm (or $TMPDIR), removed at exit. */
#include "tests/fuzz/fuzz.h"

#include "agents/cassette.h"
#include "agents/replay.h"
#include "common/error.h"

static char dir[256];
static char out[300];

static void cleanup(void)
{
    unlink(out);
    rmdir(dir);
}

static void setup(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                       : getenv("TMPDIR")            ? getenv("TMPDIR")
                                                     : "/tmp";

    snprintf(dir, sizeof(dir), "%s/tandem-fuzz-XXXXXX", base);
    if (!mkdtemp(dir))
        abort();
    snprintf(out, sizeof(out), "%s/cassette.json", dir);
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_llm_config cfg;
    char partial[64];
    size_t count = 0, skipped = 0;
    void *state;

    if (!*dir)
        setup();
    if (fuzz_file(partial, sizeof(partial), data, size) < 0)
        abort();
    FUZZ_CHECK(tnd_cassette_from_recording(partial, out, "fuzz", &count,
                                           &skipped) == 0);
    memset(&cfg, 0, sizeof(cfg));
    cfg.cassette = out;
    state = tnd_replay_backend.open(&cfg);
    if (!state)
        fprintf(stderr, "the recorded cassette does not open: %s\n",
                tnd_error_last());
    FUZZ_CHECK(state != NULL);
    tnd_replay_backend.close(state);
    return 0;
}
