/* The bodies of MDP/Client between a client and tandem serve (see
 * client.h and PROTOCOL.md, "MDP/Client"). */
#include "proto/client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/json.h"

#define MAX_KIND 32

static const struct {
    tnd_client_kind kind;
    const char *service;
    const char *type;
} kinds[] = {
    {TND_CLIENT_KIND_SUBMIT, TND_CLIENT_SUBMIT, "submit"},
    {TND_CLIENT_KIND_ATTACH, TND_CLIENT_ATTACH, "attach"},
    {TND_CLIENT_KIND_STATUS, TND_CLIENT_STATUS, "status"},
    {TND_CLIENT_KIND_ANSWER, TND_CLIENT_ANSWER, "answer"},
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

const char *tnd_client_service(tnd_client_kind kind)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].kind == kind)
            return kinds[i].service;
    return NULL;
}

static json_object *body_new(const char *type)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "tandem", json_object_new_int(TND_BODY_VERSION));
    json_object_object_add(o, "type", json_object_new_string(type));
    return o;
}

/* ---- requests ----------------------------------------------------------- */

/* 40 (SHA-1) or 64 (SHA-256) lowercase hexadecimal digits. */
static bool commit_id(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");

    return !s[n] && (n == 40 || n == 64);
}

static int absolute(const char *field, const char *path)
{
    if (path[0] != '/')
        return tnd_error_set("field '%s' must be an absolute path, got "
                             "'%s' (the client resolves it)",
                             field, path);
    return 0;
}

static int decode_submit(tnd_client_request *out, json_object *obj)
{
    json_object *review;

    if (tnd_json_get_str(&out->repo, obj, "repo", TND_BODY_MAX_PATH,
                         TND_JSON_REQUIRED) < 0 ||
        absolute("repo", out->repo) < 0 ||
        tnd_json_get_str(&out->task, obj, "task", TND_BODY_MAX_TASK,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&out->config, obj, "config", TND_BODY_MAX_PATH,
                         TND_JSON_OPTIONAL) < 0 ||
        (out->config && absolute("config", out->config) < 0) ||
        tnd_json_get_bool(&out->detach, obj, "detach", TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_bool(&out->on_head, obj, "on_head", TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_str(&out->session, obj, "session", TND_BODY_MAX_ID,
                         TND_JSON_OPTIONAL) < 0)
        return -1;
    if ((review = tnd_json_field(obj, "review"))) {
        if (!json_object_is_type(review, json_type_object))
            return tnd_error_set("field 'review' must be an object");
        out->review = true;
        if (tnd_json_get_bool(&out->staged, review, "staged",
                              TND_JSON_OPTIONAL) < 0 ||
            tnd_json_get_str(&out->diff, review, "diff", TND_BODY_MAX_DIFF,
                             TND_JSON_OPTIONAL) < 0 ||
            tnd_json_get_str(&out->rev, review, "rev", 64, TND_JSON_OPTIONAL) <
                0) {
            tnd_error_prefix("field 'review'");
            return -1;
        }
        if (out->staged && out->diff)
            return tnd_error_set("field 'review': 'staged' and 'diff' do "
                                 "not go together");
        /* a commit id, never a word git would take as an option */
        if (out->rev && (!out->diff || !commit_id(out->rev)))
            return tnd_error_set("field 'review': 'rev' must be a commit id "
                                 "(40 or 64 hexadecimal digits) and go with "
                                 "'diff'");
        if (out->on_head)
            return tnd_error_set("field 'on_head' is for a task: a review "
                                 "judges a change already made");
    }
    if (!out->task[strspn(out->task, " \t\r\n")])
        return tnd_error_set("field 'task' is empty: say what to do");
    return 0;
}

/* The session a request names: none (empty, or blanks) is a bad request
 * that says so, not "no session  runs" with a hole for the id. */
static int get_session(tnd_client_request *out, json_object *obj)
{
    if (tnd_json_get_str(&out->session, obj, "session", TND_BODY_MAX_ID,
                         TND_JSON_REQUIRED) < 0)
        return -1;
    if (!out->session[strspn(out->session, " \t\r\n")])
        return tnd_error_set("field 'session' is empty: give a session id, "
                             "or a part of one only that session has");
    return 0;
}

/* An attach: the session, and the repository to look in for one that
 * ended before the outcomes the server keeps (optional). */
static int decode_attach(tnd_client_request *out, json_object *obj)
{
    if (get_session(out, obj) < 0 ||
        tnd_json_get_str(&out->repo, obj, "repo", TND_BODY_MAX_PATH,
                         TND_JSON_OPTIONAL) < 0)
        return -1;
    return out->repo ? absolute("repo", out->repo) : 0;
}

static int decode_answer(tnd_client_request *out, json_object *obj)
{
    return get_session(out, obj) < 0 ||
                   tnd_json_get_str(&out->repo, obj, "repo", TND_BODY_MAX_PATH,
                                    TND_JSON_REQUIRED) < 0 ||
                   absolute("repo", out->repo) < 0 ||
                   tnd_json_get_str(&out->answer, obj, "answer", MAX_KIND,
                                    TND_JSON_REQUIRED) < 0 ||
                   tnd_json_get_str(&out->text, obj, "text", TND_BODY_MAX_TASK,
                                    TND_JSON_OPTIONAL) < 0 ||
                   tnd_json_get_int(&out->iterations, obj, "iterations", 0, 50,
                                    TND_JSON_OPTIONAL) < 0 ||
                   tnd_json_get_int(&out->tokens, obj, "tokens", 0, 100000000L,
                                    TND_JSON_OPTIONAL) < 0 ||
                   tnd_json_get_int(&out->calls, obj, "calls", 0, 1000,
                                    TND_JSON_OPTIONAL) < 0 ||
                   tnd_json_get_int(&out->escalation, obj, "escalation", -1,
                                    LONG_MAX, TND_JSON_OPTIONAL) < 0
               ? -1
               : 0;
}

int tnd_client_request_decode(tnd_client_request *out, const char *service,
                              const char *body, size_t len)
{
    json_object *obj = NULL;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < NKINDS; i++)
        if (strcmp(service, kinds[i].service) == 0)
            break;
    if (i == NKINDS)
        return tnd_error_set("tandem serve has no service '%s' for clients "
                             "(it offers %s, %s, %s and %s; agents' "
                             "services are not for clients)",
                             service, TND_CLIENT_SUBMIT, TND_CLIENT_ATTACH,
                             TND_CLIENT_STATUS, TND_CLIENT_ANSWER);
    if (len > TND_CLIENT_MAX_BODY)
        return tnd_error_set("the request is %zu bytes, more than the limit "
                             "of %d",
                             len, TND_CLIENT_MAX_BODY);
    if (tnd_body_open(&obj, body, len, kinds[i].type) < 0)
        return -1;
    out->kind = kinds[i].kind;
    switch (out->kind) {
    case TND_CLIENT_KIND_SUBMIT:
        rc = decode_submit(out, obj);
        break;
    case TND_CLIENT_KIND_ATTACH:
        rc = decode_attach(out, obj);
        break;
    case TND_CLIENT_KIND_STATUS:
        rc = 0;
        break;
    case TND_CLIENT_KIND_ANSWER:
        rc = decode_answer(out, obj);
        break;
    }
    json_object_put(obj);
    if (rc < 0) {
        tnd_error_prefix("bad %s request", kinds[i].type);
        tnd_client_request_clear(out);
    }
    return rc;
}

char *tnd_client_request_encode(const tnd_client_request *req, size_t *len)
{
    const char *type = "status";
    json_object *o;

    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].kind == req->kind)
            type = kinds[i].type;
    o = body_new(type);
    if (req->kind == TND_CLIENT_KIND_SUBMIT) {
        json_object_object_add(o, "repo", json_object_new_string(req->repo));
        json_object_object_add(o, "task", json_object_new_string(req->task));
        if (req->config)
            json_object_object_add(o, "config",
                                   json_object_new_string(req->config));
        json_object_object_add(o, "detach",
                               json_object_new_boolean(req->detach));
        if (req->on_head)
            json_object_object_add(o, "on_head", json_object_new_boolean(true));
        if (req->session)
            json_object_object_add(o, "session",
                                   json_object_new_string(req->session));
        if (req->review) {
            json_object *rv = json_object_new_object();
            json_object_object_add(rv, "staged",
                                   json_object_new_boolean(req->staged));
            if (req->diff)
                json_object_object_add(rv, "diff",
                                       json_object_new_string(req->diff));
            if (req->rev)
                json_object_object_add(rv, "rev",
                                       json_object_new_string(req->rev));
            json_object_object_add(o, "review", rv);
        }
    } else if (req->kind == TND_CLIENT_KIND_ATTACH) {
        json_object_object_add(o, "session",
                               json_object_new_string(req->session));
        if (req->repo)
            json_object_object_add(o, "repo",
                                   json_object_new_string(req->repo));
    } else if (req->kind == TND_CLIENT_KIND_ANSWER) {
        json_object_object_add(o, "session",
                               json_object_new_string(req->session));
        json_object_object_add(o, "repo", json_object_new_string(req->repo));
        json_object_object_add(o, "answer",
                               json_object_new_string(req->answer));
        if (req->text)
            json_object_object_add(o, "text",
                                   json_object_new_string(req->text));
        if (req->iterations)
            json_object_object_add(o, "iterations",
                                   json_object_new_int64(req->iterations));
        if (req->tokens)
            json_object_object_add(o, "tokens",
                                   json_object_new_int64(req->tokens));
        if (req->calls)
            json_object_object_add(o, "calls",
                                   json_object_new_int64(req->calls));
        if (req->escalation)
            json_object_object_add(o, "escalation",
                                   json_object_new_int64(req->escalation));
    }
    return tnd_body_finish(o, len);
}

void tnd_client_request_clear(tnd_client_request *req)
{
    free(req->repo);
    free(req->task);
    free(req->config);
    free(req->session);
    free(req->answer);
    free(req->text);
    free(req->diff);
    free(req->rev);
    memset(req, 0, sizeof(*req));
}

/* ---- replies ------------------------------------------------------------ */

char *tnd_client_accepted(const char *session, const char *dir, long queued,
                          size_t *len)
{
    json_object *o = body_new("accepted");

    json_object_object_add(o, "session", json_object_new_string(session));
    json_object_object_add(o, "dir", json_object_new_string(dir));
    json_object_object_add(o, "queued", json_object_new_int64(queued));
    return tnd_body_finish(o, len);
}

char *tnd_client_output(bool err, const char *text, size_t text_len,
                        size_t *len)
{
    json_object *o = body_new("output");

    json_object_object_add(o, "stream",
                           json_object_new_string(err ? "stderr" : "stdout"));
    json_object_object_add(o, "text",
                           json_object_new_string_len(text, (int)text_len));
    return tnd_body_finish(o, len);
}

char *tnd_client_alive(size_t *len)
{
    return tnd_body_finish(body_new("alive"), len);
}

char *tnd_client_done(const char *session, int exit_code, const char *status,
                      json_object *report, size_t *len)
{
    json_object *o = body_new("done");

    json_object_object_add(o, "session", json_object_new_string(session));
    json_object_object_add(o, "exit_code", json_object_new_int(exit_code));
    json_object_object_add(o, "status", tnd_json_str_or_null(status));
    json_object_object_add(o, "report",
                           report ? json_object_get(report) : NULL);
    return tnd_body_finish(o, len);
}

char *tnd_client_error(const char *kind, const char *message, size_t *len)
{
    json_object *o = body_new("error");
    size_t n = strlen(message);

    if (n > TND_BODY_MAX_NOTE)
        n = TND_BODY_MAX_NOTE;
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(o, "error",
                           json_object_new_string_len(message, (int)n));
    return tnd_body_finish(o, len);
}

char *tnd_client_busy(long max_sessions, long queue_max, size_t *len)
{
    json_object *o = body_new("error");
    json_object *limits = json_object_new_object();
    char msg[256];

    snprintf(msg, sizeof(msg),
             "busy: %ld session%s run%s (--max-sessions %ld) and %ld "
             "wait%s (--queue-max %ld); submit again later, or start "
             "tandem serve with higher limits",
             max_sessions, max_sessions == 1 ? "" : "s",
             max_sessions == 1 ? "s" : "", max_sessions, queue_max,
             queue_max == 1 ? "s" : "", queue_max);
    json_object_object_add(o, "kind", json_object_new_string("busy"));
    json_object_object_add(o, "error", json_object_new_string(msg));
    json_object_object_add(limits, "max_sessions",
                           json_object_new_int64(max_sessions));
    json_object_object_add(limits, "queue_max",
                           json_object_new_int64(queue_max));
    json_object_object_add(o, "limits", limits);
    return tnd_body_finish(o, len);
}

static int decode_reply(tnd_client_reply *out, json_object *obj,
                        const char *type)
{
    char *stream = NULL;
    long code = 0;
    int rc;

    if (strcmp(type, "accepted") == 0) {
        out->type = TND_CLIENT_ACCEPTED;
        return tnd_json_get_str(&out->session, obj, "session", TND_BODY_MAX_ID,
                                TND_JSON_REQUIRED) < 0 ||
                       tnd_json_get_str(&out->dir, obj, "dir",
                                        TND_BODY_MAX_PATH,
                                        TND_JSON_REQUIRED) < 0 ||
                       tnd_json_get_int(&out->queued, obj, "queued", 0,
                                        1L << 30, TND_JSON_REQUIRED) < 0
                   ? -1
                   : 0;
    }
    if (strcmp(type, "output") == 0) {
        json_object *t;
        out->type = TND_CLIENT_OUTPUT;
        if (tnd_json_get_str(&stream, obj, "stream", 16, TND_JSON_REQUIRED) < 0)
            return -1;
        out->err = strcmp(stream, "stderr") == 0;
        rc = out->err || strcmp(stream, "stdout") == 0
                 ? 0
                 : tnd_error_set("field 'stream' must be stdout or stderr");
        free(stream);
        if (rc < 0)
            return -1;
        /* the text may hold any byte the session wrote, NUL included */
        if (!(t = tnd_json_field(obj, "text")) ||
            !json_object_is_type(t, json_type_string) ||
            (size_t)json_object_get_string_len(t) > TND_CLIENT_MAX_TEXT)
            return tnd_error_set("field 'text' must be a string of at most "
                                 "%d bytes",
                                 TND_CLIENT_MAX_TEXT);
        out->text_len = (size_t)json_object_get_string_len(t);
        out->text = tnd_xmalloc(out->text_len + 1);
        memcpy(out->text, json_object_get_string(t), out->text_len + 1);
        return 0;
    }
    if (strcmp(type, "alive") == 0) {
        out->type = TND_CLIENT_ALIVE;
        return 0;
    }
    if (strcmp(type, "done") == 0) {
        json_object *report = NULL;
        out->type = TND_CLIENT_DONE;
        if (tnd_json_get_str(&out->session, obj, "session", TND_BODY_MAX_ID,
                             TND_JSON_REQUIRED) < 0 ||
            tnd_json_get_int(&code, obj, "exit_code", 0, 255,
                             TND_JSON_REQUIRED) < 0 ||
            tnd_json_get_str(&out->status, obj, "status", MAX_KIND,
                             TND_JSON_OPTIONAL) < 0 ||
            tnd_json_get_object(&report, obj, "report", TND_JSON_OPTIONAL) < 0)
            return -1;
        out->exit_code = (int)code;
        out->report = report ? json_object_get(report) : NULL;
        return 0;
    }
    if (strcmp(type, "status") == 0) {
        out->type = TND_CLIENT_STATUS_REPLY;
        out->report = json_object_get(obj);
        return 0;
    }
    if (strcmp(type, "error") == 0) {
        out->type = TND_CLIENT_ERROR;
        return tnd_json_get_str(&out->kind, obj, "kind", MAX_KIND,
                                TND_JSON_REQUIRED) < 0 ||
                       tnd_json_get_str(&out->error, obj, "error",
                                        TND_BODY_MAX_NOTE,
                                        TND_JSON_REQUIRED) < 0
                   ? -1
                   : 0;
    }
    return tnd_error_set("a reply of unknown type '%s'", type);
}

int tnd_client_reply_decode(tnd_client_reply *out, const char *body, size_t len)
{
    json_object *obj = NULL;
    char *type = NULL;
    long version = 0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_json_parse(&obj, body, len) < 0)
        goto out;
    if (!json_object_is_type(obj, json_type_object) ||
        tnd_json_get_int(&version, obj, "tandem", 0, 1000000,
                         TND_JSON_REQUIRED) < 0 ||
        version != TND_BODY_VERSION) {
        tnd_error_set("not a tandem body of version %d", TND_BODY_VERSION);
        goto out;
    }
    if (tnd_json_get_str(&type, obj, "type", MAX_KIND, TND_JSON_REQUIRED) < 0)
        goto out;
    rc = decode_reply(out, obj, type);
out:
    if (rc < 0) {
        tnd_error_prefix("bad reply from tandem serve");
        tnd_client_reply_clear(out);
    }
    free(type);
    json_object_put(obj);
    return rc;
}

void tnd_client_reply_clear(tnd_client_reply *reply)
{
    free(reply->session);
    free(reply->dir);
    free(reply->text);
    free(reply->status);
    json_object_put(reply->report);
    free(reply->kind);
    free(reply->error);
    memset(reply, 0, sizeof(*reply));
}

/* ---- who asked ---------------------------------------------------------- */

static const char *const via_names[] = {"", "curve", "ipc", "tcp"};

const char *tnd_client_via_name(tnd_client_via via)
{
    return (unsigned)via < sizeof(via_names) / sizeof(via_names[0])
               ? via_names[via]
               : "";
}

void tnd_client_who_add(json_object *o, const tnd_client_who *who)
{
    if (!who || who->via == TND_CLIENT_VIA_NONE)
        return;
    json_object_object_add(
        o, "via", json_object_new_string(tnd_client_via_name(who->via)));
    json_object_object_add(
        o, "user", *who->user ? json_object_new_string(who->user) : NULL);
    if (*who->key)
        json_object_object_add(o, "key", json_object_new_string(who->key));
    if (*who->address)
        json_object_object_add(o, "address",
                               json_object_new_string(who->address));
}

/* A string field of o into out: "" when missing or too long. */
static void copy_field(char *out, size_t size, json_object *o, const char *name)
{
    const char *v = tnd_json_str_or(o, name, "");

    out[0] = '\0';
    if (strlen(v) < size)
        memcpy(out, v, strlen(v) + 1);
}

void tnd_client_who_read(tnd_client_who *out, json_object *o)
{
    const char *via = tnd_json_str_or(o, "via", "");

    memset(out, 0, sizeof(*out));
    for (size_t i = 1; *via && i < sizeof(via_names) / sizeof(via_names[0]);
         i++)
        if (strcmp(via, via_names[i]) == 0)
            out->via = (tnd_client_via)i;
    if (out->via == TND_CLIENT_VIA_NONE)
        return;
    copy_field(out->user, sizeof(out->user), o, "user");
    copy_field(out->key, sizeof(out->key), o, "key");
    copy_field(out->address, sizeof(out->address), o, "address");
}
