/* The command provider: a program of the user's as the model (see
 * command.h). One tnd_proc_run per attempt; llm.c retries and accounts. */
#include "agents/command.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/proc.h"

#define STDERR_LINES 5   /* lines of stderr quoted in an error */
#define STDERR_BYTES 600 /* and at most this much of them */

typedef struct command {
    char **argv;   /* NULL-terminated copy of llm.command */
    char *display; /* the command as configured, for messages */
} command;

static void command_close(void *state)
{
    command *c = state;

    if (!c)
        return;
    tnd_str_list_free(&c->argv);
    free(c->display);
    free(c);
}

static void *command_open(const tnd_llm_config *cfg)
{
    command *c;
    size_t n = 0;

    if (tnd_llm_config_check(cfg, "llm", false) < 0)
        return NULL;
    c = tnd_xcalloc(1, sizeof(*c));
    while (cfg->command.argv[n])
        n++;
    c->argv = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        c->argv[i] = tnd_xstrdup(cfg->command.argv[i]);
    c->display = tnd_xstrdup(cfg->command.display ? cfg->command.display
                                                  : cfg->command.argv[0]);
    return c;
}

/* True when text holds a line that is exactly "---". */
static bool has_separator(const char *text)
{
    for (const char *p = text; (p = strstr(p, "---")) != NULL; p += 3)
        if ((p == text || p[-1] == '\n') && (p[3] == '\n' || p[3] == '\0'))
            return true;
    return false;
}

/* What the program reads: SYSTEM, "---", USER (see command.h). */
static int build_input(tnd_buf *out, const tnd_prompt *p)
{
    const char *system = p->system ? p->system : "";
    size_t n = strlen(system);

    if (has_separator(system))
        return tnd_error_set("the %s's system prompt holds a line '---', "
                             "which the command provider uses to end it",
                             p->role);
    tnd_buf_init(out, TND_BUF_NOCAP);
    tnd_buf_puts(out, system);
    if (n > 0 && system[n - 1] != '\n')
        tnd_buf_puts(out, "\n");
    tnd_buf_puts(out, "---\n");
    tnd_buf_puts(out, p->user ? p->user : "");
    return 0;
}

/* "; its stderr ends: a | b | c" from the last lines the program wrote
 * on stderr, or "" when it wrote nothing. Redacted before it is cut: a
 * key across the cut would leave its end. Caller frees. */
static char *stderr_tail(const tnd_proc_result *res)
{
    char *s = tnd_log_redact(tnd_xstrdup(res->errors ? res->errors : ""));
    size_t end = strlen(s), start;
    int lines = 0;
    char *tail, *shown, *joined;
    tnd_buf b;

    while (end > 0 && strchr(" \t\r\n", s[end - 1]))
        end--;
    if (end == 0) {
        free(s);
        return tnd_xstrdup("");
    }
    for (start = end; start > 0; start--)
        if (s[start - 1] == '\n' && ++lines == STDERR_LINES)
            break;
    if (end - start > STDERR_BYTES)
        start = end - STDERR_BYTES;
    tail = tnd_xstrndup(s + start, end - start);
    free(s);
    shown = tnd_str_printable(tail, STDERR_BYTES);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "; its stderr ends: ");
    for (const char *p = shown; *p; p++) {
        if (*p == '\n')
            tnd_buf_puts(&b, " | ");
        else if (*p != '\r')
            tnd_buf_append(&b, p, 1);
    }
    joined = tnd_buf_detach(&b, NULL);
    free(tail);
    free(shown);
    return joined;
}

/* The run ended badly: say how, and whether a retry may help. */
static int run_error(const command *c, const tnd_proc_result *res,
                     const tnd_llm_call *call)
{
    char *tail = stderr_tail(res);
    int error = -1;

    switch (res->status) {
    case TND_PROC_CANCELLED:
        tnd_error_set("LLM command '%s' was stopped: cancelled", c->display);
        error = TND_ECANCELLED;
        break;
    case TND_PROC_TIMEOUT:
        tnd_error_set(
            "LLM command '%s' gave no answer within %.1fs and was stopped%s",
            c->display, call->timeout_ms / 1000.0, tail);
        error = TND_ERETRY;
        break;
    case TND_PROC_SIGNALED:
    case TND_PROC_STOPPED: /* it sets no watch; for completeness */
        tnd_error_set("LLM command '%s' was %s%s", c->display,
                      tnd_proc_describe(res), tail);
        break;
    case TND_PROC_EXITED:
        if (res->exit_code == TND_COMMAND_EXIT_RETRY) {
            tnd_error_set(
                "LLM command '%s' exited with status %d (EX_TEMPFAIL: try "
                "again later)%s",
                c->display, res->exit_code, tail);
            error = TND_ERETRY;
        } else {
            tnd_error_set("LLM command '%s' exited with status %d%s",
                          c->display, res->exit_code, tail);
        }
        break;
    }
    free(tail);
    return error;
}

static int command_complete(void *state, tnd_llm_answer *out,
                            const tnd_llm_call *call, long *retry_after_ms)
{
    command *c = state;
    tnd_proc_spec spec = {0};
    tnd_proc_result res = {0};
    tnd_buf input;
    int error = -1;

    *retry_after_ms = -1;
    if (build_input(&input, call->prompt) < 0)
        return -1;
    spec.argv = (const char *const *)c->argv;
    spec.input = tnd_buf_str(&input);
    spec.input_len = input.len;
    spec.timeout_ms = call->timeout_ms;
    spec.output_cap = TND_COMMAND_MAX_ANSWER;
    spec.output_stop = TND_COMMAND_MAX_ANSWER;
    spec.cancel = call->cancel;
    if (tnd_proc_run(&res, &spec) < 0) {
        tnd_error_prefix("LLM command");
        goto out;
    }
    /* too much on stdout, whether it exited or was stopped for it (a
     * flood was said to be "no answer within" the timeout it ran to) */
    if (res.status != TND_PROC_CANCELLED &&
        res.output_total > TND_COMMAND_MAX_ANSWER) {
        /* one wording whichever came first, its exit or its stop (a
         * test saw either, as the machine's load had it) */
        tnd_error_set("LLM command '%s' printed more than %d bytes on "
                      "stdout, more than an answer may be%s",
                      c->display, TND_COMMAND_MAX_ANSWER,
                      res.status == TND_PROC_STOPPED ? ", and was stopped"
                                                     : "");
        goto out;
    }
    if (res.status != TND_PROC_EXITED || res.exit_code != 0) {
        error = run_error(c, &res, call);
        goto out;
    }
    if (memchr(res.output, '\0', res.output_len)) {
        tnd_error_set(
            "LLM command '%s' printed binary data (a NUL byte) instead of an "
            "answer",
            c->display);
        goto out;
    }
    if (res.output[strspn(res.output, " \t\r\n")] == '\0') {
        char *tail = stderr_tail(&res);
        tnd_error_set(
            "LLM command '%s' exited 0 but printed no answer on stdout%s",
            c->display, tail);
        free(tail);
        goto out;
    }
    if (res.errors_len > 0)
        tnd_log_debug("LLM command '%s' wrote %zu bytes on stderr", c->display,
                      res.errors_total);
    out->text = res.output;
    res.output = NULL;
    error = 0;
out:
    tnd_proc_result_free(&res);
    tnd_buf_free(&input);
    return error;
}

const tnd_llm_backend tnd_command_backend = {
    .provider = TND_PROVIDER_COMMAND,
    .base_url = "",
    .key_env = "",
    .open = command_open,
    .complete = command_complete,
    .close = command_close,
};
