/* Fuzz agents/critique: tnd_critique_parse on a reviewer model's answer
 * (as the reviewer has it from tnd_llm_complete: a C string, valid
 * UTF-8).
 *
 * A critique found must be one the schema accepts (the reviewer sends it
 * on as JSON in its audit reply): tnd_critique_to_json, dumped and read
 * back with tnd_critique_from_json, gives the same critique, and every
 * issue cites its evidence. */
#include "tests/fuzz/fuzz.h"

#include "agents/critique.h"
#include "common/error.h"
#include "proto/json.h"

static char *dump(const tnd_critique *c)
{
    json_object *obj = tnd_critique_to_json(c);
    char *text = tnd_json_dump(obj, NULL);

    json_object_put(obj);
    return text;
}

static void check(const tnd_critique *c)
{
    json_object *obj = NULL;
    tnd_critique *again = NULL;
    char *one, *two;

    FUZZ_CHECK(c->verdict == TND_VERDICT_APPROVE ||
               c->verdict == TND_VERDICT_REVISE);
    FUZZ_CHECK(c->confidence >= 0 && c->confidence <= 1);
    FUZZ_CHECK(c->summary != NULL);
    for (size_t i = 0; i < c->nissues; i++)
        FUZZ_CHECK((c->issues[i].evidence && *c->issues[i].evidence) ||
                   (c->issues[i].file && c->issues[i].line > 0));
    one = dump(c);
    FUZZ_CHECK(tnd_json_parse(&obj, one, strlen(one)) == 0);
    FUZZ_CHECK(tnd_critique_from_json(&again, obj) == 0);
    two = dump(again);
    /* "%.3g" rounds scores once; what it wrote reads back the same */
    FUZZ_CHECK(strcmp(one, two) == 0);
    free(one);
    free(two);
    json_object_put(obj);
    tnd_critique_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *answer = fuzz_answer(data, size);
    tnd_critique *c = NULL;

    if (tnd_critique_parse(&c, answer) == 0)
        check(c);
    else
        FUZZ_CHECK(c == NULL && *tnd_error_last());
    tnd_critique_destroy(&c);
    free(answer);
    return 0;
}
