/* tnd_libcurl - libcurl, loaded the first time a model is called.
 *
 * Only the agents talk HTTP, yet linking libcurl made every program of
 * tandem load it and the ~30 libraries it needs (TLS, Kerberos, LDAP,
 * SSH, IDN...) at every start: 4 ms of CPU per `tandem submit`, paid
 * by each task a pipeline sends. The functions http.c uses are looked up
 * here with dlopen(3) instead, once per process, and curl_global_init is
 * called once; the library stays loaded until exit (libcurl's global
 * state is not meant to be unloaded). The headers still come from the
 * libcurl -dev package, so the calls are checked against the same
 * prototypes at compile time. */
#ifndef TND_LIBCURL_H
#define TND_LIBCURL_H

#include <curl/curl.h>

/* The shared library to load: libcurl's ABI has been .so.4 since 2006. */
#ifndef TND_LIBCURL_SONAME
#define TND_LIBCURL_SONAME "libcurl.so.4"
#endif

typedef struct tnd_libcurl {
    const char *(*easy_strerror)(CURLcode code);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *curl);
    void (*easy_reset)(CURL *curl);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *curl);
    struct curl_slist *(*slist_append)(struct curl_slist *list,
                                       const char *string);
    void (*slist_free_all)(struct curl_slist *list);
    /* a call that waits on its cancel fd too (http.c; since 7.28) */
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *curl);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *curl);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMcode (*multi_wait)(CURLM *multi, struct curl_waitfd *extra,
                            unsigned int nextra, int timeout_ms, int *numfds);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *left);
} tnd_libcurl;

/* Load the library soname and look up every function into *out, then
 * call its curl_global_init. 0; or -1 with the error set, naming the
 * library and the fix (out is then zeroed or partly filled: unusable).
 * The library is never unloaded. tnd_libcurl_get uses it once; tests
 * call it directly. */
int tnd_libcurl_load(tnd_libcurl *out, const char *soname);

/* libcurl, loaded and globally initialised on the first call from any
 * thread. NULL with the error set when it cannot be: the library or one
 * of its functions is missing (the message names the file and the Debian
 * package to install), or curl_global_init failed. Every later call
 * gives the same answer. */
const tnd_libcurl *tnd_libcurl_get(void);

#endif
