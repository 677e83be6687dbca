/* Task budgets (see budget.h). */
#include "orchestrator/budget.h"

#include <stdio.h>

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
                 "gate.max_wall_s (%d) reached: %.1f s since the "
                 "task started",
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
