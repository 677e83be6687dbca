/* Answers to an escalation, and asking for one on a terminal (see
 * escalate.h). */
#include "orchestrator/escalate.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The longest line taken: what an answer's text may be on the wire. */
#define LINE_MAX_BYTES (64 << 10)
/* The longest line a terminal's line discipline holds (Linux's n_tty):
 * what a person types or pastes past it is dropped before we see it. */
#define TTY_LINE_BYTES 4095

/* One line from in, trimmed; NULL at end of input. *cut says whether it
 * was longer than LINE_MAX_BYTES (the rest is dropped). Caller frees. */
static char *read_line(FILE *in, const waiter *w, bool *cut)
{
    char *buf;
    size_t n = 0;
    int c = EOF;

    *cut = false;
    if (!wait_input(in, w))
        return NULL;
    buf = tnd_xmalloc(LINE_MAX_BYTES + 1);
    while ((c = fgetc(in)) != EOF && c != '\n') {
        if (n < LINE_MAX_BYTES)
            buf[n++] = (char)c;
        else
            *cut = true;
    }
    if (c == EOF && n == 0 && !*cut) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    memmove(buf, tnd_str_trim(buf), strlen(tnd_str_trim(buf)) + 1);
    return buf;
}

/* Whether the person keeps a line that was cut: asked until yes or no;
 * false at end of input. */
static bool keep_cut(FILE *in, FILE *out, const waiter *w)
{
    for (;;) {
        bool cut, yes, no;
        char *line;
        fputs("use it cut as it is? [y/n]> ", out);
        fflush(out);
        if (!(line = read_line(in, w, &cut)))
            return false;
        yes = strcmp(line, "y") == 0 || strcmp(line, "yes") == 0;
        no = strcmp(line, "n") == 0 || strcmp(line, "no") == 0;
        free(line);
        if (yes || no)
            return yes;
    }
}

/* Ask for a non-empty line; NULL at end of input. A line that was, or
 * may have been, cut is said so, and kept only if the person says so
 * (guidance cut without a word reached the coder half said). */
static char *ask_text(const char *what, FILE *in, FILE *out, const waiter *w)
{
    for (;;) {
        char *line;
        bool cut;
        fprintf(out, "%s> ", what);
        fflush(out);
        if (!(line = read_line(in, w, &cut)))
            return NULL;
        if (cut)
            fprintf(out,
                    "that line is longer than %d KiB, the most an answer "
                    "holds: the rest of it is left out\n",
                    LINE_MAX_BYTES >> 10);
        else if (strlen(line) >= TTY_LINE_BYTES && isatty(fileno(in)))
            fprintf(out,
                    "that line filled the terminal's %d bytes, so what came "
                    "after was dropped; for longer text, quit (q) and answer "
                    "with -m \"$(cat FILE)\"\n",
                    TTY_LINE_BYTES);
        else if (*line)
            return line;
        if (*line && (cut || strlen(line) >= TTY_LINE_BYTES)) {
            if (keep_cut(in, out, w))
                return line;
            if (feof(in)) {
                free(line);
                return NULL;
            }
        }
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
static char choice_of(const char *line, bool review, bool diff)
{
    static const char *const words[] = {"approve", "reject", "guide", "budget",
                                        "skip",    "quit",   "diff"};
    const char *offered =
        review ? (diff ? "arqd" : "arq") : (diff ? "argbsqd" : "argbsq");

    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
        char letter = words[i][0];
        if ((strlen(line) == 1 && line[0] == letter) ||
            strcmp(line, words[i]) == 0 ||
            (letter == 'q' && strcmp(line, "stop") == 0))
            return strchr(offered, letter) ? letter : 0;
    }
    return 0;
}

/* The whole diff, as a terminal may show it. */
static void show_diff(FILE *out, const char *diff)
{
    char *d = tnd_str_printable(diff, strlen(diff) + 1);

    fprintf(out, "%s%s", d, *d && d[strlen(d) - 1] == '\n' ? "" : "\n");
    free(d);
}

int tnd_escalate_ask(tnd_answer *answer, FILE *in, FILE *out, bool review,
                     const char *diff, tnd_escalate_idle_fn idle, void *payload)
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
    if (diff)
        fputs("  d  show the whole diff\n", out);
    for (;;) {
        char *line;
        char c;
        bool cut;
        fputs(review ? (diff ? "choice [a/r/q/d]> " : "choice [a/r/q]> ")
                     : (diff ? "choice [a/r/g/b/s/q/d]> "
                             : "choice [a/r/g/b/s/q]> "),
              out);
        fflush(out);
        if (!(line = read_line(in, &w, &cut))) {
            answer->kind = TND_ANSWER_STOP;
            return 0;
        }
        switch ((c = choice_of(line, review, diff != NULL))) {
        case 'd':
            show_diff(out, diff);
            break;
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
            fputs(review ? (diff ? "a, r, q or d (or the word), please\n"
                                 : "a, r or q (or the word), please\n")
                         : (diff ? "a, r, g, b, s, q or d (or the word), "
                                   "please\n"
                                 : "a, r, g, b, s or q (or the word), "
                                   "please\n"),
                  out);
            break;
        }
        free(line);
        if (answer->kind)
            return 0;
    }
}
