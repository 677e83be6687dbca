/* libcurl, loaded on first use (see libcurl.h). */
#include "agents/libcurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

/* Each function: its name in the library, and where it goes. */
static const struct {
    const char *name;
    size_t offset;
} symbols[] = {
    {"curl_easy_strerror", offsetof(tnd_libcurl, easy_strerror)},
    {"curl_easy_init", offsetof(tnd_libcurl, easy_init)},
    {"curl_easy_cleanup", offsetof(tnd_libcurl, easy_cleanup)},
    {"curl_easy_reset", offsetof(tnd_libcurl, easy_reset)},
    {"curl_easy_setopt", offsetof(tnd_libcurl, easy_setopt)},
    {"curl_easy_getinfo", offsetof(tnd_libcurl, easy_getinfo)},
    {"curl_easy_perform", offsetof(tnd_libcurl, easy_perform)},
    {"curl_slist_append", offsetof(tnd_libcurl, slist_append)},
    {"curl_slist_free_all", offsetof(tnd_libcurl, slist_free_all)},
    {"curl_multi_init", offsetof(tnd_libcurl, multi_init)},
    {"curl_multi_cleanup", offsetof(tnd_libcurl, multi_cleanup)},
    {"curl_multi_add_handle", offsetof(tnd_libcurl, multi_add_handle)},
    {"curl_multi_remove_handle", offsetof(tnd_libcurl, multi_remove_handle)},
    {"curl_multi_perform", offsetof(tnd_libcurl, multi_perform)},
    {"curl_multi_wait", offsetof(tnd_libcurl, multi_wait)},
    {"curl_multi_info_read", offsetof(tnd_libcurl, multi_info_read)},
};

int tnd_libcurl_load(tnd_libcurl *out, const char *soname)
{
    CURLcode (*global_init)(long flags);
    CURLcode rc;
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    void *sym;

    memset(out, 0, sizeof(*out));
    if (!lib)
        return tnd_error_set("cannot load libcurl: %s (install the libcurl4 "
                             "package, or run 'make deps')",
                             dlerror());
    /* on failure the library stays loaded: one is not unloaded half-used */
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        if (!(sym = dlsym(lib, symbols[i].name)))
            return tnd_error_set("%s has no %s: it is not a libcurl tandem "
                                 "can use (7.x or 8.x)",
                                 soname, symbols[i].name);
        /* POSIX: a function's address fits a void * (dlsym's contract) */
        memcpy((char *)out + symbols[i].offset, &sym, sizeof(sym));
    }
    if (!(sym = dlsym(lib, "curl_global_init")))
        return tnd_error_set("%s has no curl_global_init: it is not a libcurl "
                             "tandem can use",
                             soname);
    memcpy(&global_init, &sym, sizeof(sym));
    if ((rc = global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
        return tnd_error_set("cannot start libcurl: %s",
                             out->easy_strerror(rc));
    return 0;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tnd_libcurl api;
static int load_rc = -1;
static char why[512]; /* the error of the first load, for every caller */

static void load(void)
{
    if ((load_rc = tnd_libcurl_load(&api, TND_LIBCURL_SONAME)) < 0)
        snprintf(why, sizeof(why), "%s", tnd_error_last());
}

const tnd_libcurl *tnd_libcurl_get(void)
{
    pthread_once(&once, load);
    if (load_rc < 0) {
        tnd_error_set("%s", why);
        return NULL;
    }
    return &api;
}
