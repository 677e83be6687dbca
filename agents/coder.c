/* The coder's request handler (see coder.h). */
#include "agents/coder.h"

#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/edits.h"
#include "agents/prompt.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/code.h"

/* Why an answer the provider cut at max_tokens is not used, for the
 * model's re-ask, the gate's feedback and the user: its last edits may
 * be cut and the rest of the change was never written, so applying the
 * edits that parse would approve part of a change as the whole. Caller
 * frees. */
static char *cut_error(const tnd_llm_answer *answer)
{
    if (answer->filtered)
        return tnd_xstrdup(
            "the provider stopped the answer with its content filter, so "
            "the change it describes may be incomplete and none of its "
            "edits were used. Make the change again, in small edits");
    return tnd_xasprintf(
        "the answer was cut off at the model's output limit (max_tokens) "
        "after %ld tokens, so the change it describes is incomplete and none "
        "of its edits were used. Make the same change in fewer, smaller "
        "edits (SEARCH blocks of a few lines rather than whole files), and "
        "keep the explanation short; or raise agents.coder.llm.max_tokens",
        answer->usage.completion_tokens);
}

char *tnd_coder_handle(tnd_llm *llm, const char *body, size_t len,
                       size_t *reply_len)
{
    tnd_code_request req;
    tnd_code_reply reply;
    tnd_llm_answer answer;
    tnd_prompt prompt;
    char *user = NULL, *out = NULL, *parse_error = NULL;

    memset(&reply, 0, sizeof(reply));
    memset(&answer, 0, sizeof(answer));
    if (tnd_code_request_decode(&req, body, len) < 0) {
        out = tnd_agent_fail(req.task_id, req.attempt, reply_len);
        tnd_code_request_clear(&req);
        return out;
    }
    tnd_log_info("task %s attempt %d: asking %s", req.task_id, req.attempt,
                 tnd_llm_describe(llm));
    user = tnd_prompt_coder_user(&req);
    memset(&prompt, 0, sizeof(prompt));
    prompt.system = tnd_prompt_coder_system();
    prompt.role = "coder";
    prompt.task_id = req.task_id;
    prompt.attempt = req.attempt;

    for (int call = 1; call <= 2; call++) {
        prompt.user = user;
        prompt.call = call;
        tnd_llm_answer_clear(&answer);
        if (tnd_llm_complete(&answer, llm, &prompt) < 0) {
            out = tnd_agent_fail(req.task_id, req.attempt, reply_len);
            goto done;
        }
        tnd_usage_add(&reply.usage, &answer.usage);
        free(parse_error);
        parse_error = NULL;
        tnd_edit_list_free(reply.edits, reply.nedits);
        reply.edits = NULL;
        reply.nedits = 0;
        free(reply.rationale);
        reply.rationale = NULL;
        if (answer.truncated)
            parse_error = cut_error(&answer);
        else if (tnd_edits_parse(&reply.edits, &reply.nedits, &reply.rationale,
                                 answer.text) < 0)
            parse_error = tnd_xstrdup(tnd_error_last());
        if (!parse_error)
            break;
        tnd_log_warn("task %s attempt %d: unusable answer (%s)%s", req.task_id,
                     req.attempt, parse_error,
                     call == 1 ? "; asking again" : "");
        free(user);
        user = tnd_prompt_coder_retry(&req, parse_error);
    }
    if (parse_error) {
        reply.format_error = parse_error;
        parse_error = NULL;
        /* redacted before the cut: a key across it would leave its
         * head in the journal and the report */
        reply.rationale = tnd_log_printable(answer.text, 2000);
    }
    reply.task_id = tnd_xstrdup(req.task_id);
    reply.attempt = req.attempt;
    tnd_log_info("task %s attempt %d: %zu edit(s), %ld+%ld tokens", req.task_id,
                 req.attempt, reply.nedits, reply.usage.prompt_tokens,
                 reply.usage.completion_tokens);
    out = tnd_code_reply_encode(&reply, reply_len);
done:
    free(parse_error);
    free(user);
    tnd_llm_answer_clear(&answer);
    tnd_code_reply_clear(&reply);
    tnd_code_request_clear(&req);
    return out;
}
