/* HTTP over one reused libcurl easy handle (see http.h). */
#include "agents/http.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agents/libcurl.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

struct tnd_http {
    const tnd_libcurl *api;
    CURL *curl;
    CURLM *multi; /* for calls with a cancel fd; made on the first */
    char errbuf[CURL_ERROR_SIZE];
};

typedef struct transfer {
    const tnd_http_request *req;
    const tnd_libcurl *api;
    CURL *curl;
    tnd_buf body;
    bool too_big;
    bool chunk_abort;
    bool ended; /* the chunk callback said the answer is complete */
    long retry_after_ms;
} transfer;

tnd_http *tnd_http_new(void)
{
    const tnd_libcurl *api = tnd_libcurl_get();
    tnd_http *h;

    if (!api)
        return NULL;
    h = tnd_xcalloc(1, sizeof(*h));
    h->api = api;
    if (!(h->curl = api->easy_init())) {
        free(h);
        tnd_error_set("cannot create a libcurl handle");
        return NULL;
    }
    return h;
}

void tnd_http_destroy(tnd_http **self_p)
{
    tnd_http *h = self_p ? *self_p : NULL;

    if (!h)
        return;
    h->api->easy_cleanup(h->curl);
    if (h->multi)
        h->api->multi_cleanup(h->multi);
    free(h);
    *self_p = NULL;
}

void tnd_http_response_clear(tnd_http_response *res)
{
    free(res->body);
    memset(res, 0, sizeof(*res));
    res->retry_after_ms = -1;
}

long tnd_http_parse_retry_after(const char *value)
{
    char *end;
    long secs;
    struct tm tm;
    const char *rest;

    while (*value == ' ' || *value == '\t')
        value++;
    if (isdigit((unsigned char)*value)) {
        secs = strtol(value, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (*end || secs < 0 || secs > 86400)
            return -1;
        return secs * 1000;
    }
    memset(&tm, 0, sizeof(tm));
    rest = strptime(value, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!rest)
        return -1;
    {
        time_t when = timegm(&tm), now = time(NULL);
        if (when == (time_t)-1)
            return -1;
        return when > now ? (long)(when - now) * 1000 : 0;
    }
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    long status = 0;

    /* with chunks_only, an error status's body is kept for the message
     * instead of going to a callback that expects the stream */
    if (t->req->on_chunk && t->req->chunks_only)
        t->api->easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (t->req->on_chunk && (!t->req->chunks_only || status / 100 == 2)) {
        int rc = t->req->on_chunk(data, n, t->req->payload);
        if (rc == TND_HTTP_CHUNK_END) {
            t->ended = true;
            return 0;
        }
        if (rc != 0) {
            t->chunk_abort = true;
            return 0;
        }
        if (t->req->chunks_only)
            return n;
    }
    if (tnd_buf_append(&t->body, data, n) < 0) {
        t->too_big = true;
        return 0;
    }
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";

    if (n > sizeof(name) - 1 && n < 256 &&
        strncasecmp(data, name, sizeof(name) - 1) == 0) {
        char value[256];
        memcpy(value, data + sizeof(name) - 1, n - (sizeof(name) - 1));
        value[n - (sizeof(name) - 1)] = '\0';
        t->retry_after_ms = tnd_http_parse_retry_after(value);
    }
    return n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    transfer *t = arg;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return t->req->cancel && atomic_load(t->req->cancel) ? 1 : 0;
}

/* Whether rc says the server could not be reached at all: a wrong base
 * URL, a server that is not running, no network. */
static bool unreachable(CURLcode rc)
{
    return rc == CURLE_COULDNT_RESOLVE_HOST ||
           rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_COULDNT_CONNECT;
}

static bool transient(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

/* The transfer set up on h's handle, waiting on the server and on
 * req->cancel_fd at once: curl_easy_perform waits up to a second between
 * two looks at the cancel flag (its progress callback), and an agent
 * told to stop with a model call out took that second more. */
static CURLcode perform_cancellable(tnd_http *h, const tnd_http_request *req)
{
    const tnd_libcurl *api = h->api;
    CURLcode rc = CURLE_RECV_ERROR;
    CURLMsg *msg;
    int running = 1, left;

    if (!h->multi && !(h->multi = api->multi_init()))
        return CURLE_OUT_OF_MEMORY;
    if (api->multi_add_handle(h->multi, h->curl) != CURLM_OK)
        return CURLE_FAILED_INIT;
    for (;;) {
        struct curl_waitfd stop = {req->cancel_fd, CURL_WAIT_POLLIN, 0};
        if (api->multi_perform(h->multi, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (!running)
            break;
        if (api->multi_wait(h->multi, &stop, 1, 1000, NULL) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (stop.revents || atomic_load(req->cancel)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
    }
    while ((msg = api->multi_info_read(h->multi, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h->curl)
            rc = msg->data.result;
    api->multi_remove_handle(h->multi, h->curl);
    return rc;
}

static int perform(tnd_http_response *out, tnd_http *h,
                   const tnd_http_request *req, bool post)
{
    struct curl_slist *headers = NULL;
    transfer t;
    CURLcode rc;
    const char *method = post ? "POST" : "GET";
    int error = 0;

    memset(out, 0, sizeof(*out));
    out->retry_after_ms = -1;
    memset(&t, 0, sizeof(t));
    t.req = req;
    t.api = h->api;
    t.curl = h->curl;
    t.retry_after_ms = -1;
    tnd_buf_init(&t.body, req->max_response);
    h->errbuf[0] = '\0';

    for (const char *const *p = req->headers; p && *p; p++)
        headers = h->api->slist_append(headers, *p);
    /* no 100-continue round trip for big prompts */
    headers = h->api->slist_append(headers, "Expect:");

    h->api->easy_reset(h->curl);
    h->api->easy_setopt(h->curl, CURLOPT_URL, req->url);
    h->api->easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
    h->api->easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->errbuf);
    h->api->easy_setopt(h->curl, CURLOPT_HTTPHEADER, headers);
    h->api->easy_setopt(h->curl, CURLOPT_USERAGENT, "tandem/" TND_VERSION);
    h->api->easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    h->api->easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    h->api->easy_setopt(h->curl, CURLOPT_PROTOCOLS,
                        (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    h->api->easy_setopt(h->curl, CURLOPT_HTTP_VERSION,
                        (long)CURL_HTTP_VERSION_2TLS);
    h->api->easy_setopt(h->curl, CURLOPT_ACCEPT_ENCODING, "");
    h->api->easy_setopt(h->curl, CURLOPT_TIMEOUT_MS,
                        req->timeout_ms > 0 ? req->timeout_ms : 300000L);
    h->api->easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
                        req->timeout_ms > 0 && req->timeout_ms < 30000
                            ? req->timeout_ms
                            : 30000L);
    h->api->easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_write);
    h->api->easy_setopt(h->curl, CURLOPT_WRITEDATA, &t);
    h->api->easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
    h->api->easy_setopt(h->curl, CURLOPT_HEADERDATA, &t);
    h->api->easy_setopt(h->curl, CURLOPT_NOPROGRESS, 0L);
    h->api->easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    h->api->easy_setopt(h->curl, CURLOPT_XFERINFODATA, &t);
    if (post) {
        h->api->easy_setopt(h->curl, CURLOPT_POST, 1L);
        h->api->easy_setopt(h->curl, CURLOPT_POSTFIELDS, req->body);
        h->api->easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                            (curl_off_t)req->body_len);
    } else {
        h->api->easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
    }

    rc = req->cancel && req->cancel_fd >= 0 ? perform_cancellable(h, req)
                                            : h->api->easy_perform(h->curl);
    h->api->slist_free_all(headers);
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && t.ended)) {
        h->api->easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &out->status);
        out->body = tnd_buf_detach(&t.body, &out->len);
        out->retry_after_ms = t.retry_after_ms;
        return 0;
    }
    tnd_buf_free(&t.body);
    if (t.too_big) {
        error = tnd_error_set("%s %s: the response is larger than %zu bytes",
                              method, req->url, req->max_response);
    } else if (rc == CURLE_ABORTED_BY_CALLBACK && req->cancel) {
        tnd_error_set("%s %s: cancelled", method, req->url);
        error = TND_ECANCELLED;
    } else if (t.chunk_abort) {
        /* the chunk callback set the error */
        error = -1;
    } else {
        tnd_error_set("%s %s: %s%s%s%s%s", method, req->url,
                      h->api->easy_strerror(rc), h->errbuf[0] ? " (" : "",
                      h->errbuf, h->errbuf[0] ? ")" : "",
                      !unreachable(rc) ? ""
                      : req->probe     ? "; check --base-url"
                                       : "; check --base-url, or run `tandem "
                                         "doctor`");
        error = transient(rc) ? TND_ERETRY : -1;
    }
    return error;
}

int tnd_http_post(tnd_http_response *out, tnd_http *self,
                  const tnd_http_request *req)
{
    return perform(out, self, req, true);
}

int tnd_http_get(tnd_http_response *out, tnd_http *self,
                 const tnd_http_request *req)
{
    return perform(out, self, req, false);
}
