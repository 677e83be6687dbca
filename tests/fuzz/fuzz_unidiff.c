/* Fuzz orchestrator/unidiff: tnd_unidiff_edits on the patch `tandem
 * review --diff FILE` reads (bytes, no NUL needed).
 *
 * A patch read becomes at most TND_BODY_MAX_EDITS edits, each with a
 * kind, a path and both texts, ready for tnd_workspace_apply; one that is
 * refused leaves nothing behind and says why. */
#include "tests/fuzz/fuzz.h"

#include "common/error.h"
#include "orchestrator/unidiff.h"
#include "proto/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_edit *edits = NULL;
    size_t n = 0;

    if (tnd_unidiff_edits(&edits, &n, (const char *)data, size) < 0) {
        FUZZ_CHECK(edits == NULL && n == 0 && *tnd_error_last());
        return 0;
    }
    /* none: a diff of mode changes alone */
    FUZZ_CHECK(n <= TND_BODY_MAX_EDITS);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(edits[i].kind >= TND_EDIT_REPLACE &&
                   edits[i].kind <= TND_EDIT_DELETE);
        FUZZ_CHECK(edits[i].path && edits[i].search && edits[i].replace);
        /* an empty search only where a hunk's header anchors it */
        FUZZ_CHECK(edits[i].kind != TND_EDIT_REPLACE || *edits[i].search ||
                   edits[i].line > 0);
        tnd_edit_clear(&edits[i]);
    }
    free(edits);
    return 0;
}
