/* Task budgets (see budget.h). */
#include "orchestrator/budget.h"

#include <stdio.h>
#include <string.h>

int tnd_budget_spent(char *why, size_t size, const tnd_gate_config *gate,
                     const tnd_usage *used, int64_t elapsed_ms)
{
    long tokens = used->prompt_tokens + used->completion_tokens;

    if (gate->max_tokens > 0 && tokens >= gate->max_tokens) {
        snprintf(why, size, "gate.max_tokens (%ld) reached: %ld tokens used%s",
                 gate->max_tokens, tokens,
                 used->estimated ? " (partly estimated)" : "");
        return 1;
    }
    if (gate->max_llm_calls > 0 && used->calls >= gate->max_llm_calls) {
        snprintf(why, size, "gate.max_llm_calls (%d) reached: %ld calls made",
                 gate->max_llm_calls, used->calls);
        return 1;
    }
    if (gate->max_wall_s > 0 &&
        elapsed_ms >= (int64_t)gate->max_wall_s * 1000) {
        snprintf(why, size,
                 "gate.max_wall_s (%d) reached: %.1f s since this run "
                 "started (or a person last answered)",
                 gate->max_wall_s, elapsed_ms / 1000.0);
        return 1;
    }
    return 0;
}

long tnd_budget_wall_left(const tnd_gate_config *gate, int64_t elapsed_ms)
{
    int64_t left;

    if (gate->max_wall_s <= 0)
        return -1;
    left = (int64_t)gate->max_wall_s * 1000 - elapsed_ms;
    return left > 0 ? (long)left : 0;
}

/* The longest one model call may take an agent: every try at its
 * timeout, with the backoff between tries (agents/llm.c caps a wait at
 * 30 s). */
static long llm_call_s(const tnd_llm_config *llm)
{
    return (long)llm->timeout_s * (llm->max_retries + 1) +
           30L * llm->max_retries;
}

long tnd_budget_request_s(const tnd_config *c, const char *service)
{
    long model, skills = 0;

    if (c->orchestrator.request_timeout_s > 0)
        return c->orchestrator.request_timeout_s;
    if (strcmp(service, "coder") == 0)
        return 2 * llm_call_s(&c->coder.llm) + 60;
    model = llm_call_s(&c->reviewer.llm);
    for (size_t i = 0; i < c->reviewer.nmodels; i++)
        if (llm_call_s(&c->reviewer.models[i]) > model)
            model = llm_call_s(&c->reviewer.models[i]);
    for (char **n = c->reviewer.skills; n && *n; n++) {
        const tnd_skill_config *sk = tnd_config_skill(c, *n);
        skills += sk ? sk->timeout_s : 0;
    }
    return skills + 2 * model + 60;
}
