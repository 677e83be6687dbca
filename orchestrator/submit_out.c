/* What tandem submit (and an answer command through a server) writes:
 * the session's stdout, once whatever servers send it, the server's
 * words on stderr without escape codes, the status table, and how a
 * session ended that nobody followed (see submit_int.h). */
#include "orchestrator/submit_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

/* Write len bytes of the result (what: "the approved diff") on stdout,
 * flushed; a failed or short write is kept in s->out_lost: the command
 * then says the output was lost and exits 1 (exchange). */
void tnd_submit_put_out(tnd_submit_client *s, const char *what,
                        const char *text, size_t len)
{
    errno = 0;
    if ((fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 &&
         !ferror(stdout)) ||
        s->out_lost)
        return;
    s->out_lost = tnd_xasprintf("cannot write %s on stdout: %s", what,
                                errno ? strerror(errno) : "a write failed");
}

/* The session's stdout, text (len bytes), written once whatever servers
 * send it: after a server was lost, the next one sends it again from its
 * start (a session resumed, or its report's diff), and what was written
 * already is checked against it, not written twice. Output that is not
 * what was written is not mixed in: the output is lost (exit 1), and
 * the session keeps its own. */
void tnd_submit_put_session_out(tnd_submit_client *s, const char *text,
                                size_t len)
{
    s->out_resent = true;
    if (s->out_again) {
        size_t n = len < s->out_again ? len : s->out_again;
        tnd_sha256_update(&s->again_sum, text, n);
        s->out_again -= n;
        text += n;
        len -= n;
        if (!s->out_again) {
            unsigned char was[TND_SHA256_LEN], now[TND_SHA256_LEN];
            tnd_sha256 sum = s->out_sum;
            tnd_sha256_final(was, &sum);
            tnd_sha256_final(now, &s->again_sum);
            if (memcmp(was, now, sizeof(was)) != 0 && !s->out_lost)
                s->out_lost = tnd_xasprintf(
                    "the session's output, as the server that took it up "
                    "again sent it, is not what was written before the "
                    "first was lost");
        }
    }
    if (!len || s->out_lost)
        return;
    if (!s->out_len)
        tnd_sha256_init(&s->out_sum);
    tnd_sha256_update(&s->out_sum, text, len);
    s->out_len += len;
    s->wrote_out = true;
    tnd_submit_put_out(s, "the session's output", text, len);
}

/* The session ended: what a server that took it up again sent of its
 * stdout, if any came, must have covered all that was written before
 * (one shorter, even a prefix of it, left a part of another attempt's
 * diff on stdout, and exit 0). */
void tnd_submit_out_end(tnd_submit_client *s)
{
    if (s->out_again && s->out_resent && !s->out_lost)
        s->out_lost = tnd_xasprintf(
            "the session's output, as the server that took it up again "
            "sent it, is not what was written before the first was lost "
            "(%zu bytes shorter)",
            s->out_again);
}

/* A server's words for a person's terminal: no escape codes (a hostile
 * endpoint, --connect, or a repository path, are not the server's to
 * choose what the terminal does). Caller frees. */
static char *shown(const char *text)
{
    return tnd_str_printable(text, strlen(text) + 1);
}

/* The server's error, said on stderr. */
void tnd_submit_say_error(const tnd_submit_client *s, const tnd_client_reply *r)
{
    char *text = shown(r->error);

    fprintf(stderr, "%s: %s\n", s->me, text);
    free(text);
}

void tnd_submit_print_status(const tnd_client_reply *r)
{
    json_object *list = tnd_json_array(r->report, "sessions");

    printf("running %ld of %ld, queued %ld of %ld%s\n",
           tnd_json_int_or(r->report, "running", 0),
           tnd_json_int_or(r->report, "max_sessions", 0),
           tnd_json_int_or(r->report, "queued", 0),
           tnd_json_int_or(r->report, "queue_max", 0),
           tnd_json_bool_or(r->report, "stopping", false) ? " (stopping)" : "");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        char *id = shown(tnd_json_str_or(e, "session", "?"));
        char *state = shown(tnd_json_str_or(e, "state", "?"));
        char *repo = shown(tnd_json_str_or(e, "repo", "?"));
        printf("%s  %-7s  %s\n", id, state, repo);
        free(id);
        free(state);
        free(repo);
    }
    if (tnd_json_int_or(r->report, "more", 0) > 0)
        printf("... and %ld more, past what one reply lists\n",
               tnd_json_int_or(r->report, "more", 0));
}

/* How a session that ended while nobody followed it ended, on stderr:
 * its status and why, and for one that waits, the answers. */
void tnd_submit_said_end(const tnd_client_reply *r)
{
    const char *reason = tnd_json_str_or(r->report, "reason", NULL);
    const char *repo = tnd_json_str_or(r->report, "repo", NULL);
    bool review = strcmp(tnd_json_str_or(r->report, "kind", ""), "review") == 0;
    char *why = reason ? tnd_str_printable(reason, strlen(reason)) : NULL;
    char *where = repo ? tnd_str_printable(repo, strlen(repo)) : NULL;

    fprintf(stderr, "tandem: session %s ended %s%s%s\n", r->session,
            r->status ? r->status : "", why ? ": " : "", why ? why : "");
    if (r->exit_code == TND_EXIT_HUMAN) {
        fprintf(stderr,
                "the session waits for an answer; from %s run one of:\n"
                "  tandem approve %s\n"
                "  tandem reject %s -m WHY\n",
                where ? where : "its repository", r->session, r->session);
        if (!review)
            fprintf(stderr,
                    "  tandem guide %s -m TEXT\n"
                    "  tandem budget %s --iterations N\n",
                    r->session, r->session);
    }
    free(why);
    free(where);
}

/* A server lost: what the next one sends of the session's stdout starts
 * again from its beginning. */
void tnd_submit_out_from_start(tnd_submit_client *s)
{
    s->out_again = s->out_len;
    tnd_sha256_init(&s->again_sum);
    s->out_resent = false;
}
