/* Fuzz agents/edits: tnd_edits_parse on a coder model's answer (as the
 * coder has it from tnd_llm_complete: a C string, valid UTF-8).
 *
 * Edits found are what the coder sends on in its code reply, so each has
 * a kind, a path tnd_edit_path_check accepts and its texts, there are at
 * most TND_BODY_MAX_EDITS of them, and the reply they make decodes on
 * the orchestrator's side with the same edits. */
#include "tests/fuzz/fuzz.h"

#include "agents/edits.h"
#include "common/error.h"
#include "proto/code.h"

static void check(const tnd_edit *edits, size_t n, char *rationale)
{
    static char task_id[] = "t1";
    tnd_code_reply reply, back;
    char *body;
    size_t len;

    FUZZ_CHECK(n >= 1 && n <= TND_BODY_MAX_EDITS);
    FUZZ_CHECK(rationale != NULL);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(edits[i].kind >= TND_EDIT_REPLACE &&
                   edits[i].kind <= TND_EDIT_DELETE);
        FUZZ_CHECK(tnd_edit_path_check(edits[i].path) == 0);
        FUZZ_CHECK(edits[i].search && edits[i].replace);
        /* a REPLACE of nothing (an empty SEARCH) creates a file: the
         * workspace takes it only where none is; a coder's edits are
         * placed by their text, never by a line */
        FUZZ_CHECK(edits[i].line == 0);
    }
    memset(&reply, 0, sizeof(reply));
    reply.task_id = task_id;
    reply.attempt = 1;
    reply.rationale = rationale;
    reply.edits = (tnd_edit *)edits;
    reply.nedits = n;
    body = tnd_code_reply_encode(&reply, &len);
    FUZZ_CHECK(tnd_code_reply_decode(&back, body, len) == 0);
    FUZZ_CHECK(back.nedits == n);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(back.edits[i].kind == edits[i].kind);
    tnd_code_reply_clear(&back);
    free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *answer = fuzz_answer(data, size);
    tnd_edit *edits = NULL;
    size_t n = 0;
    char *rationale = NULL;

    if (tnd_edits_parse(&edits, &n, &rationale, answer) == 0)
        check(edits, n, rationale);
    else
        FUZZ_CHECK(edits == NULL && n == 0 && rationale == NULL &&
                   *tnd_error_last());
    tnd_edit_list_free(edits, n);
    free(rationale);
    free(answer);
    return 0;
}
