/* Checking LLM configurations without a completion (see probe.h). */
#include "agents/probe.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/anthropic.h"
#include "agents/http.h"
#include "agents/llm.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define MAX_LIST_BYTES (4 << 20)

static bool is_local(const char *url)
{
    const char *p = strstr(url, "://");

    p = p ? p + 3 : url;
    return tnd_str_starts_with(p, "localhost") ||
           tnd_str_starts_with(p, "127.") || tnd_str_starts_with(p, "[::1]");
}

bool tnd_probe_key(char *detail, size_t size, const tnd_llm_config *llm)
{
    const char *var = tnd_llm_key_env(llm);
    const char *value;

    if (!*var) {
        snprintf(detail, size, "no key needed for %s",
                 tnd_provider_name(llm->provider));
        return true;
    }
    value = getenv(var);
    if (value && *value) {
        snprintf(detail, size, "$%s is set", var);
        return true;
    }
    if (is_local(tnd_llm_base_url(llm))) {
        snprintf(detail, size, "$%s is not set (fine for a local server)", var);
        return true;
    }
    /* a header of the config's carries the credential: run goes ahead
     * so (tnd_llm_key_missing), and doctor failed it */
    if (tnd_llm_header_set(llm->headers, "Authorization") ||
        tnd_llm_header_set(llm->headers, "x-api-key")) {
        snprintf(detail, size,
                 "$%s is not set; the config's headers carry the "
                 "credential",
                 var);
        return true;
    }
    snprintf(detail, size,
             "$%s is not set: export it, or name another "
             "variable in llm.api_key_env",
             var);
    return false;
}

bool tnd_probe_program(char *found, size_t size, const char *program)
{
    const char *path = getenv("PATH");

    if (strchr(program, '/')) {
        if (found)
            snprintf(found, size, "%s", program);
        return access(program, X_OK) == 0;
    }
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char *cand =
            tnd_xasprintf("%.*s/%s", (int)(n ? n : 1), n ? path : ".", program);
        bool ok = access(cand, X_OK) == 0;
        if (ok && found)
            snprintf(found, size, "%s", cand);
        free(cand);
        if (ok)
            return true;
        path += n + (colon ? 1 : 0);
    }
    return false;
}

/* Is model among the names in list[].key (also as NAME:latest)? */
static bool offered(json_object *list, const char *key, const char *model,
                    char *names, size_t size)
{
    size_t used = 0;
    bool found = false;

    names[0] = '\0';
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *item = json_object_array_get_idx(list, i), *v;
        const char *name;
        if (!json_object_object_get_ex(item, key, &v) ||
            !json_object_is_type(v, json_type_string))
            continue;
        name = json_object_get_string(v);
        if (strcmp(name, model) == 0 ||
            (tnd_str_starts_with(name, model) &&
             strcmp(name + strlen(model), ":latest") == 0))
            found = true;
        if (used + strlen(name) + 3 < size) {
            used += (size_t)snprintf(names + used, size - used, "%s%s",
                                     used ? ", " : "", name);
        }
    }
    return found;
}

static int probe_http(char *detail, size_t size, const tnd_llm_config *llm,
                      long timeout_ms)
{
    const char *var = tnd_llm_key_env(llm);
    const char *key = *var ? getenv(var) : NULL;
    const char *headers[40];
    char *url, *auth = NULL, *version = NULL, names[512];
    const char *list_key = "data", *name_key = "id";
    size_t n = 0;
    tnd_http *http = tnd_http_new();
    tnd_http_request req;
    tnd_http_response res;
    json_object *root = NULL, *list = NULL;
    int rc, error = -1;

    if (llm->provider == TND_PROVIDER_ANTHROPIC) {
        url = tnd_llm_url(llm, "/v1/models");
        if (key && *key)
            auth = tnd_xasprintf("x-api-key: %s", key);
        version = tnd_xstrdup("anthropic-version: " TND_ANTHROPIC_VERSION);
    } else if (llm->provider == TND_PROVIDER_OLLAMA) {
        url = tnd_llm_url(llm, "/api/tags");
        list_key = "models";
        name_key = "name";
    } else {
        url = tnd_llm_url(llm, "/models");
        if (key && *key)
            auth = tnd_xasprintf("Authorization: Bearer %s", key);
    }
    if (key && *key)
        tnd_log_secret(key);
    tnd_llm_url_guard(url);
    /* a header the config sets replaces tandem's own, as for a model
     * call: a gateway's Authorization must not go out beside the
     * provider's key (doctor sent both) */
    if (auth && !tnd_llm_header_set(llm->headers,
                                    llm->provider == TND_PROVIDER_ANTHROPIC
                                        ? "x-api-key"
                                        : "Authorization"))
        headers[n++] = auth;
    if (version && !tnd_llm_header_set(llm->headers, "anthropic-version"))
        headers[n++] = version;
    for (char **h = llm->headers; h && *h && n < 38; h++)
        headers[n++] = *h;
    headers[n] = NULL;
    memset(&req, 0, sizeof(req));
    req.url = url;
    req.headers = headers;
    req.timeout_ms = timeout_ms;
    req.max_response = MAX_LIST_BYTES;
    req.probe = true;
    if (!http) {
        snprintf(detail, size, "%s", tnd_error_last());
        goto out;
    }
    rc = tnd_http_get(&res, http, &req);
    if (rc < 0) {
        snprintf(detail, size, "%s", tnd_error_last());
        goto out;
    }
    if (res.status == 401 || res.status == 403) {
        snprintf(detail, size, "%ld from %s: check the key in $%s%s",
                 res.status, url, *var ? var : "(none configured)",
                 key && *key ? "" : " (it is not set)");
    } else if (res.status != 200) {
        snprintf(detail, size,
                 "%ld from %s: is this %s's API at the right base URL?",
                 res.status, url, tnd_provider_name(llm->provider));
    } else if (tnd_json_parse(&root, res.body, res.len) < 0 ||
               tnd_json_get_array(&list, root, list_key, 100000,
                                  TND_JSON_REQUIRED) < 0) {
        snprintf(detail, size, "%s answered, but not with a model list: %s",
                 url, tnd_error_last());
    } else if (!offered(list, name_key, llm->model, names, sizeof(names))) {
        snprintf(detail, size, "%s does not offer model '%s' (it offers: %s)",
                 url, llm->model, *names ? names : "none");
    } else {
        snprintf(detail, size, "%s offers %s", url, llm->model);
        error = 0;
    }
    tnd_http_response_clear(&res);
out:
    json_object_put(root);
    tnd_http_destroy(&http);
    tnd_str_free_secret(&auth);
    free(version);
    free(url);
    tnd_log_redact(detail);
    return error;
}

int tnd_probe_endpoint(char *detail, size_t size, const tnd_llm_config *llm,
                       long timeout_ms)
{
    if (tnd_llm_config_check(llm, "llm", false) < 0) {
        snprintf(detail, size, "%s", tnd_error_last());
        return -1;
    }
    if (llm->provider == TND_PROVIDER_REPLAY) {
        tnd_llm *l = tnd_llm_new(llm);
        if (!l) {
            snprintf(detail, size, "%s", tnd_error_last());
            return -1;
        }
        snprintf(detail, size, "%s can be read", llm->cassette);
        tnd_llm_destroy(&l);
        return 0;
    }
    if (llm->provider == TND_PROVIDER_COMMAND) {
        char found[1024];
        if (!tnd_probe_program(found, sizeof(found), llm->command.argv[0])) {
            snprintf(detail, size, "%s is not an executable program on PATH",
                     llm->command.argv[0]);
            return -1;
        }
        snprintf(detail, size, "runs %s", found);
        return 0;
    }
    return probe_http(detail, size, llm, timeout_ms);
}
