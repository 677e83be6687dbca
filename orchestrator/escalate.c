/* Answers to an escalation, and asking for one on a terminal (see
 * escalate.h). */
#include "orchestrator/escalate.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "common/str.h"
#include "common/xalloc.h"

static const char *const answer_names[] = {
    NULL, "approve", "reject", "guide", "budget", "skip", "stop"};
static const tnd_names answer_kinds = TND_NAMES("answer", answer_names);

const char *tnd_answer_name(tnd_answer_kind kind)
{
    return tnd_names_name(&answer_kinds, (int)kind);
}

int tnd_answer_kind_parse(tnd_answer_kind *out, const char *name)
{
    return tnd_names_parse((int *)out, &answer_kinds, name);
}

void tnd_answer_clear(tnd_answer *answer)
{
    free(answer->text);
    memset(answer, 0, sizeof(*answer));
}

#define IDLE_MS 40

/* How the caller hears about waiting. */
typedef struct waiter {
    tnd_escalate_idle_fn idle;
    void *payload;
} waiter;

/* Wait until in has something to read, calling the idle function every
 * IDLE_MS meanwhile: often enough that the broker's heartbeats keep
 * their pace at the shortest orchestrator.heartbeat_ms a test uses
 * (100), so no agent thinks the orchestrator gone while a person reads.
 * False when the idle function says to stop. in must be unbuffered (see
 * tnd_escalate_ask), so poll sees what fgets will. */
static bool wait_input(FILE *in, const waiter *w)
{
    struct pollfd p = {.fd = fileno(in), .events = POLLIN};

    if (!w->idle)
        return true;
    for (;;) {
        int n = poll(&p, 1, IDLE_MS);
        if (n > 0 || (n < 0 && errno != EINTR))
            return true;
        if (!w->idle(w->payload))
            return false;
    }
}

/* One line from in, trimmed; NULL at end of input. Caller frees. */
static char *read_line(FILE *in, const waiter *w)
{
    char buf[4096];

    if (!wait_input(in, w) || !fgets(buf, sizeof(buf), in))
        return NULL;
    if (!strchr(buf, '\n')) {
        /* a line too long for us: drop the rest of it */
        int c;
        while ((c = fgetc(in)) != EOF && c != '\n')
            ;
    }
    return tnd_xstrdup(tnd_str_trim(buf));
}

/* Ask for a non-empty line; NULL at end of input. */
static char *ask_text(const char *what, FILE *in, FILE *out, const waiter *w)
{
    for (;;) {
        char *line;
        fprintf(out, "%s> ", what);
        fflush(out);
        if (!(line = read_line(in, w)))
            return NULL;
        if (*line)
            return line;
        free(line);
    }
}

/* Ask for a number of more attempts until one is in range (saying the
 * range again after anything else); 0 at end of input. */
static int ask_count(FILE *in, FILE *out, const waiter *w)
{
    for (;;) {
        char *text = ask_text("more attempts (1..50)", in, out, w), *end;
        long n;
        bool number;

        if (!text)
            return 0;
        n = strtol(text, &end, 10);
        number = !*end; /* end points into text: look before freeing */
        free(text);
        if (number && n >= 1 && n <= 50)
            return (int)n;
        fputs("more attempts must be a number from 1 to 50\n", out);
    }
}

/* The choice a line names: its letter or its whole word, one the menu
 * offers; 0 for anything else (a line that only began with a letter
 * was taken for it, so "abort" approved). */
static char choice_of(const char *line, bool review)
{
    static const char *const words[] = {"approve", "reject", "guide",
                                        "budget",  "skip",   "quit"};
    const char *offered = review ? "arq" : "argbsq";

    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
        char letter = words[i][0];
        if ((strlen(line) == 1 && line[0] == letter) ||
            strcmp(line, words[i]) == 0 ||
            (letter == 'q' && strcmp(line, "stop") == 0))
            return strchr(offered, letter) ? letter : 0;
    }
    return 0;
}

int tnd_escalate_ask(tnd_answer *answer, FILE *in, FILE *out, bool review,
                     tnd_escalate_idle_fn idle, void *payload)
{
    waiter w = {idle, payload};

    memset(answer, 0, sizeof(*answer));
    /* unbuffered: what poll says is readable is what fgets reads; a
     * terminal hands over whole lines anyway */
    setvbuf(in, NULL, _IONBF, 0);
    fputs(review ? "What now?\n"
                   "  a  approve the change      r  reject it\n"
                   "  q  stop; answer later\n"
                 : "What now?\n"
                   "  a  approve the last proposal      r  reject the task\n"
                   "  g  give the coder guidance        b  grant more "
                   "attempts\n"
                   "  s  skip: one more attempt as is   q  stop; answer "
                   "later\n",
          out);
    for (;;) {
        char *line;
        char c;
        fputs(review ? "choice [a/r/q]> " : "choice [a/r/g/b/s/q]> ", out);
        fflush(out);
        if (!(line = read_line(in, &w))) {
            answer->kind = TND_ANSWER_STOP;
            return 0;
        }
        switch ((c = choice_of(line, review))) {
        case 'a':
            answer->kind = TND_ANSWER_APPROVE;
            break;
        case 'r':
        case 'g': /* each with its text: the reason, the guidance */
            answer->text = ask_text(c == 'r' ? "why" : "guidance for the coder",
                                    in, out, &w);
            answer->kind = !answer->text ? TND_ANSWER_STOP
                           : c == 'r'    ? TND_ANSWER_REJECT
                                         : TND_ANSWER_GUIDE;
            break;
        case 'b':
            answer->kind = TND_ANSWER_BUDGET;
            if ((answer->iterations = ask_count(in, out, &w)) == 0)
                answer->kind = TND_ANSWER_STOP;
            break;
        case 's':
            answer->kind = TND_ANSWER_SKIP;
            break;
        case 'q':
            answer->kind = TND_ANSWER_STOP;
            break;
        default:
            fputs(review ? "a, r or q (or the word), please\n"
                         : "a, r, g, b, s or q (or the word), please\n",
                  out);
            break;
        }
        free(line);
        if (answer->kind)
            return 0;
    }
}
