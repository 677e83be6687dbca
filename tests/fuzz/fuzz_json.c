/* Fuzz proto/json: tnd_json_parse, tnd_json_check_unique_keys and
 * tnd_json_dump, which every body, critique, cassette and API answer go
 * through (the input is the JSON text, without a NUL).
 *
 * The key check reads any text without harm (it runs on what a model
 * wrote before the schema does). What parses dumps as valid UTF-8 that
 * parses again to the same dump, and a dump never repeats a key: json-c
 * holds one value per key, so the check finding a repeat there would
 * refuse a critique that has none. */
#include "tests/fuzz/fuzz.h"

#include "proto/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    json_object *obj = NULL, *again = NULL;
    char *one, *two;
    size_t len1, len2;

    (void)tnd_json_check_unique_keys(text, size);
    if (tnd_json_parse(&obj, text, size) < 0)
        return 0;
    one = tnd_json_dump(obj, &len1);
    FUZZ_CHECK(tnd_utf8_valid(one, len1));
    FUZZ_CHECK(tnd_json_check_unique_keys(one, len1) == 0);
    FUZZ_CHECK(tnd_json_parse(&again, one, len1) == 0);
    two = tnd_json_dump(again, &len2);
    FUZZ_CHECK(len1 == len2 && memcmp(one, two, len1) == 0);
    free(one);
    free(two);
    json_object_put(obj);
    json_object_put(again);
    return 0;
}
