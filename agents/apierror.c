/* LLM API error answers to messages (see apierror.h). */
#include "agents/apierror.h"

#include <stdlib.h>

#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define SHOWN_MAX 300

char *tnd_apierror_message(const char *body, size_t len)
{
    json_object *root = NULL, *err = NULL;
    char *msg = NULL, *shown;

    if (!body)
        return tnd_xstrdup("");
    if (tnd_json_parse(&root, body, len) == 0 &&
        json_object_is_type(root, json_type_object)) {
        if (json_object_object_get_ex(root, "error", &err) &&
            json_object_is_type(err, json_type_object))
            tnd_json_get_str(&msg, err, "message", 4096, TND_JSON_OPTIONAL);
        else
            tnd_json_get_str(&msg, root, "error", 4096, TND_JSON_OPTIONAL);
    }
    json_object_put(root);
    tnd_error_clear();
    if (!msg && len > 0 && !tnd_str_is_binary(body, len))
        msg = tnd_xstrndup(body, len);
    if (!msg)
        return tnd_xstrdup("");
    shown = tnd_log_printable(tnd_str_trim(msg), SHOWN_MAX);
    free(msg);
    return shown;
}

int tnd_apierror_status(const tnd_apierror_ctx *ctx, long status,
                        const char *body, size_t len)
{
    char *said = tnd_apierror_message(body, len);
    const char *sep = *said ? ": " : "";
    int error = -1;

    switch (status) {
    case 401:
    case 403:
        if (*ctx->key_env)
            tnd_error_set("%ld from %s%s%s; check the key in $%s%s", status,
                          ctx->url, sep, said, ctx->key_env,
                          ctx->key_set ? "" : " (it is not set)");
        else
            tnd_error_set("%ld from %s%s%s; the server wants a key: set "
                          "llm.api_key_env to the variable that holds it",
                          status, ctx->url, sep, said);
        break;
    case 404:
        tnd_error_set("404 from %s%s%s%s%s", ctx->url, sep, said,
                      ctx->not_found ? "; " : "",
                      ctx->not_found ? ctx->not_found : "");
        break;
    case 400:
    case 413:
    case 422:
        tnd_error_set("%ld from %s: the request was rejected%s%s", status,
                      ctx->url, sep, said);
        break;
    case 408:
    case 409:
    case 425:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
    case 529:
        tnd_error_set("%ld from %s%s%s", status, ctx->url, sep, said);
        error = TND_ERETRY;
        break;
    default:
        tnd_error_set("unexpected HTTP %ld from %s%s%s", status, ctx->url, sep,
                      said);
        error = status >= 500 ? TND_ERETRY : -1;
        break;
    }
    free(said);
    return error;
}
