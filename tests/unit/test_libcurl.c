/* Unit tests for agents/libcurl: libcurl loaded on first use, and the
 * error a machine without it gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agents/libcurl.h"
#include "common/error.h"

static void the_installed_library_loads(void **state)
{
    const tnd_libcurl *api = tnd_libcurl_get();
    CURL *curl;

    (void)state;
    assert_non_null(api);
    assert_ptr_equal(api, tnd_libcurl_get()); /* once per process */
    assert_non_null(curl = api->easy_init());
    assert_int_equal(api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L), CURLE_OK);
    api->easy_cleanup(curl);
    assert_string_equal(api->easy_strerror(CURLE_OK), "No error");
}

static void a_missing_library_says_what_to_install(void **state)
{
    tnd_libcurl api;

    (void)state;
    assert_int_equal(tnd_libcurl_load(&api, "libtandem-no-such-curl.so.4"), -1);
    assert_non_null(strstr(tnd_error_last(), "cannot load libcurl"));
    assert_non_null(strstr(tnd_error_last(), "libtandem-no-such-curl.so.4"));
    assert_non_null(strstr(tnd_error_last(), "libcurl4"));
    assert_null(api.easy_init);
}

static void a_library_without_curl_is_refused(void **state)
{
    tnd_libcurl api;

    (void)state;
    /* libc is loaded already, and has none of curl's functions */
    assert_int_equal(tnd_libcurl_load(&api, "libc.so.6"), -1);
    assert_non_null(strstr(tnd_error_last(), "libc.so.6 has no curl_"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_installed_library_loads),
        cmocka_unit_test(a_missing_library_says_what_to_install),
        cmocka_unit_test(a_library_without_curl_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
