/* The reviewer's request handler (see reviewer.h). */
#include "agents/reviewer.h"

#include <stdlib.h>
#include <string.h>

#include "agents/critique.h"
#include "agents/prompt.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/audit.h"
#include "skills/skill.h"

static void run_skills(tnd_audit_reply *reply, const tnd_reviewer_ctx *ctx,
                       const tnd_audit_request *req)
{
    size_t n = 0;

    for (char **p = ctx->config->reviewer.skills; p && *p; p++)
        n++;
    reply->skills = tnd_xcalloc(n + 1, sizeof(*reply->skills));
    for (size_t i = 0; i < n && i < TND_BODY_MAX_SKILLS; i++) {
        const char *name = ctx->config->reviewer.skills[i];
        const tnd_skill_config *skill = tnd_config_skill(ctx->config, name);
        tnd_skill_result *r = &reply->skills[reply->nskills++];
        if (!skill) {
            /* the loader rejects this; a hand-built config might not */
            memset(r, 0, sizeof(*r));
            r->name = tnd_xstrdup(name);
            r->status = TND_SKILL_ERROR;
            r->required = true;
            r->command = tnd_xstrdup("");
            r->output =
                tnd_xasprintf("no skill named '%s' is configured", name);
            continue;
        }
        tnd_skill_run(r, skill, req->workspace, ctx->envp, ctx->cancel);
        tnd_log_info("task %s attempt %d: %s", req->task_id, req->attempt,
                     tnd_skill_summary(r));
    }
}

/* Ask for the critique; a second call carries the parse error. Returns
 * -1 only when the model could not be reached (reply->critique_error is
 * set for an answer that never parsed). */
static int critique(tnd_audit_reply *reply, const tnd_reviewer_ctx *ctx,
                    const tnd_audit_request *req)
{
    char *user = tnd_prompt_reviewer_user(req, reply->skills, reply->nskills);
    char *ask = tnd_xstrdup(user);
    tnd_llm_answer answer;
    tnd_prompt prompt;
    int error = 0;

    memset(&answer, 0, sizeof(answer));
    memset(&prompt, 0, sizeof(prompt));
    prompt.system = tnd_prompt_reviewer_system();
    prompt.role = "reviewer";
    prompt.task_id = req->task_id;
    prompt.attempt = req->attempt;
    for (int call = 1; call <= 2; call++) {
        prompt.user = ask;
        prompt.call = call;
        tnd_llm_answer_clear(&answer);
        if (tnd_llm_complete(&answer, ctx->llm, &prompt) < 0) {
            error = -1;
            break;
        }
        tnd_usage_add(&reply->usage, &answer.usage);
        if (tnd_critique_parse(&reply->critique, answer.text) == 0) {
            free(reply->critique_error);
            reply->critique_error = NULL;
            break;
        }
        free(reply->critique_error);
        reply->critique_error = tnd_xstrdup(tnd_error_last());
        tnd_log_warn("task %s attempt %d: unusable critique (%s)%s",
                     req->task_id, req->attempt, reply->critique_error,
                     call == 1 ? "; asking again" : "");
        free(ask);
        ask = tnd_prompt_reviewer_retry(user, reply->critique_error);
    }
    tnd_llm_answer_clear(&answer);
    free(ask);
    free(user);
    return error;
}

char *tnd_reviewer_handle(const tnd_reviewer_ctx *ctx, const char *body,
                          size_t len, size_t *reply_len)
{
    tnd_audit_request req;
    tnd_audit_reply reply;
    char *out;

    memset(&reply, 0, sizeof(reply));
    if (tnd_audit_request_decode(&req, body, len) < 0) {
        tnd_log_error("%s", tnd_error_last());
        out = tnd_error_reply_encode(req.task_id, req.attempt, tnd_error_last(),
                                     reply_len);
        tnd_audit_request_clear(&req);
        return out;
    }
    if (!tnd_fs_is_dir(req.workspace)) {
        tnd_error_set("workspace %s is not a directory this reviewer can "
                      "see; a reviewer must share the orchestrator's "
                      "filesystem (see README: agents on other hosts)",
                      req.workspace);
        tnd_log_error("%s", tnd_error_last());
        out = tnd_error_reply_encode(req.task_id, req.attempt, tnd_error_last(),
                                     reply_len);
        tnd_audit_request_clear(&req);
        return out;
    }
    run_skills(&reply, ctx, &req);
    if (ctx->cancel && atomic_load(ctx->cancel)) {
        out = tnd_error_reply_encode(req.task_id, req.attempt, "cancelled",
                                     reply_len);
        goto done;
    }
    if (critique(&reply, ctx, &req) < 0) {
        tnd_log_error("%s", tnd_error_last());
        out = tnd_error_reply_encode(req.task_id, req.attempt, tnd_error_last(),
                                     reply_len);
        goto done;
    }
    reply.task_id = tnd_xstrdup(req.task_id);
    reply.attempt = req.attempt;
    if (reply.critique)
        tnd_log_info("task %s attempt %d: critique says %s (confidence "
                     "%.2f, %zu issue(s))",
                     req.task_id, req.attempt,
                     tnd_verdict_name(reply.critique->verdict),
                     reply.critique->confidence, reply.critique->nissues);
    out = tnd_audit_reply_encode(&reply, reply_len);
done:
    tnd_audit_reply_clear(&reply);
    tnd_audit_request_clear(&req);
    return out;
}
