/* An earlier server's sessions taken over by the next (see hub_int.h,
 * tnd_hub_take_over): the accepted list's pending sessions read, left,
 * ended or queued again. */
#include "orchestrator/hub_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/accepted.h"
#include "orchestrator/hubsession.h"
#include "orchestrator/journal.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "proto/client.h"
#include "proto/json.h"

/* Room for n more open files: each session taken over holds its lock
 * while it waits, and a restart with more queued than this server's
 * --queue-max ran out of files; the journals past that point could not
 * be read, and those sessions were ended, lost. The soft limit is raised
 * past what the server needs as far as the hard one allows (past the soft
 * limit it had, it warned on every restart where the soft limit was the
 * hard one, however far both were past the need). */
static void room_for(const tnd_hub *h, size_t n)
{
    unsigned long long want = h->o->files + n;

    if (n && tnd_fs_files_raise(want) < want)
        tnd_log_warn("cannot raise the open files limit to %llu (ulimit -Hn "
                     "is lower): some sessions taken over may wait for the "
                     "next server",
                     want);
}

/* Whether a session whose journal could not be read is gone for good:
 * its directory is not there though its repository is (pruned, say), or
 * is there without a journal (a server killed while it made the
 * session, which is accepted before its task is journaled), or its
 * journal opens and is damaged. Anything else (too many open files, a
 * repository on a mount not there yet) may read tomorrow: the session
 * is left for the next server, not ended. */
static bool gone_for_good(const char *repo, const char *dir, const char *path)
{
    int fd;

    if (tnd_fs_is_dir(repo) && !tnd_fs_exists(dir))
        return true;
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno == ENOENT && tnd_fs_is_dir(dir);
    close(fd);
    return true;
}

/* Whether the session in dir has its report.json. */
static bool report_there(const char *dir)
{
    char *path = tnd_fs_join(dir, "report.json");
    bool there = tnd_fs_exists(path);

    free(path);
    return there;
}

/* Why take_over left a session, as its client is told (hub_int.h) */
#define LEFT_CONFIG                                                     \
    "was accepted under another configuration than this server's, and " \
    "waits for a tandem serve with that one"
#define LEFT_UNREADABLE                                                   \
    "could not be read when this server started (its log says why), and " \
    "waits for the next tandem serve"
#define LEFT_UNTRUSTED                                                     \
    "is not run by this server: another user could change the path to "    \
    "its repository (the server's log names the directory); it waits for " \
    "a tandem serve started once that is mended"

/* An earlier server's sessions that did not end: queued again, unless
 * their journal says they finished or wait for a person. One that waits
 * and was accepted with an answer goes on with it; one that journaled
 * its answer already goes on as any other. */
void tnd_hub_take_over(tnd_hub *h)
{
    size_t n = tnd_accepted_pending(h->accepted);
    char **repos = tnd_xcalloc(n + 1, sizeof(char *));
    char **ids = tnd_xcalloc(n + 1, sizeof(char *));
    json_object **answers = tnd_xcalloc(n + 1, sizeof(json_object *));
    size_t nleft = 0;

    h->left = tnd_xcalloc(n + 1, sizeof(char *));
    h->left_why = tnd_xcalloc(n + 1, sizeof(char *));
    room_for(h, n);
    /* a copy: ending one changes the list */
    for (size_t i = 0; i < n; i++) {
        repos[i] = tnd_xstrdup(tnd_accepted_repo(h->accepted, i));
        ids[i] = tnd_xstrdup(tnd_accepted_id(h->accepted, i));
        answers[i] = json_object_get(tnd_accepted_answer(h->accepted, i));
    }
    for (size_t i = 0; i < n; i++) {
        const char *repo = repos[i], *id = ids[i];
        char *dir = tnd_session_dir_of(repo, id);
        char *path = tnd_fs_join(dir, "journal.jsonl");
        json_object *records = NULL;
        const char *last = "";
        bool there = tnd_fs_is_dir(repo);

        if (!there || tnd_hub_trust_repo(repo) < 0) {
            /* changed since it was taken: read and run by path, another
             * user could lead the session's writes elsewhere. The path
             * it was taken in is checked, not where a link there leads
             * now: that is the path it runs by. Not there (a mount not
             * there yet): nothing is read by path in its place */
            if (there)
                fprintf(stderr,
                        "tandem serve: session %s of an earlier server is "
                        "not taken over: %s; it waits for the next tandem "
                        "serve (or tandem resume --repo %s %s)\n",
                        id, tnd_error_last(), repo, id);
            else
                fprintf(stderr,
                        "tandem serve: session %s (%s) of an earlier server "
                        "cannot be read now (its repository is not there): "
                        "it waits for the next tandem serve (or tandem "
                        "resume --repo %s %s)\n",
                        id, repo, repo, id);
            h->left_why[nleft] = there ? LEFT_UNTRUSTED : LEFT_UNREADABLE;
            h->left[nleft++] = tnd_xstrdup(id);
            json_object_put(answers[i]);
            free(path);
            free(dir);
            continue;
        }
        if (tnd_journal_read(&records, path) == 0 &&
            json_object_array_length(records) == 0) {
            /* made, not journaled: its client never heard its id */
            last = "unreadable";
            tnd_log_warn("session %s of an earlier server: that server "
                         "stopped before its task was journaled (%s): it "
                         "never started, and tandem sessions lists it as "
                         "unstarted",
                         id, path);
        } else if (records) {
            for (size_t k = json_object_array_length(records); k-- > 0;) {
                last = tnd_journal_type(json_object_array_get_idx(records, k));
                if (strcmp(last, "resume") != 0)
                    break;
            }
        } else if (gone_for_good(repo, dir, path)) {
            last = "unreadable";
            tnd_log_warn("session %s of an earlier server: %s", id,
                         tnd_error_last());
        } else {
            fprintf(stderr,
                    "tandem serve: session %s (%s) of an earlier server "
                    "cannot be read now (%s): it waits for the next tandem "
                    "serve (or tandem resume --repo %s %s)\n",
                    id, repo, tnd_error_last(), repo, id);
            h->left_why[nleft] = LEFT_UNREADABLE;
            h->left[nleft++] = tnd_xstrdup(id);
            json_object_put(answers[i]);
            free(path);
            free(dir);
            continue;
        }
        bool waits = strcmp(last, "escalation") == 0;
        /* one that asked its person and was killed before its report was
         * written goes on: its run replays the journal to that question
         * and writes report.json (ended here, it waited with none, and a
         * client that came back for it was sent to a file not there) */
        bool reported = !waits || answers[i] || report_there(dir);
        long asked = tnd_json_int_or(answers[i], "escalation", 0);
        if (waits && answers[i] && asked &&
            asked != tnd_journal_waiting_on(records)) {
            /* answered here since, and it asked again: the answer kept
             * is for a question the session moved past (it approved a
             * diff nobody was shown) */
            fprintf(stderr,
                    "tandem serve: session %s asked a person again since "
                    "an earlier server took its answer (%s), for an earlier "
                    "question: that answer is dropped, and the session "
                    "waits for a person\n",
                    id, tnd_json_str_or(answers[i], "answer", "?"));
            json_object_put(answers[i]);
            answers[i] = NULL;
        }
        char *owner =
            records && json_object_array_length(records)
                ? tnd_run_task_owner(json_object_array_get_idx(records, 0))
                : NULL;
        const char *config =
            records && json_object_array_length(records)
                ? tnd_json_str_or(json_object_array_get_idx(records, 0),
                                  "config", NULL)
                : NULL;
        bool other = records && json_object_array_length(records) &&
                     !tnd_hub_runs_config(h, config);
        if (other && strcmp(last, "finish") != 0 &&
            !(waits && !answers[i] && reported)) {
            /* under another configuration: this server's agents would
             * judge it with other rules, and the session failed, its
             * failure kept as its outcome (a review found it lost so);
             * it stays in the list for a server with that one */
            fprintf(stderr,
                    "tandem serve: session %s (%s) was accepted under %s, "
                    "and this server runs %s: it waits for a tandem serve "
                    "with that configuration (or tandem resume --repo %s "
                    "%s)\n",
                    id, repo, config ? config : "the built-in defaults",
                    h->o->config->path ? h->o->config->path
                                       : "the built-in defaults",
                    repo, id);
            h->left_why[nleft] = LEFT_CONFIG;
            h->left[nleft++] = tnd_xstrdup(id);
        } else if (strcmp(last, "finish") == 0 ||
                   (waits && !answers[i] && reported) ||
                   strcmp(last, "unreadable") == 0) {
            int code = strcmp(last, "unreadable") != 0
                           ? tnd_hub_code_of_ended(records)
                           : -1;
            if (tnd_accepted_end(h->accepted, id, code, owner) < 0)
                tnd_log_error("%s", tnd_error_last());
        } else {
            tnd_hubsession *s = tnd_hub_add(h, repo, id, dir, owner);
            /* held while it waits for a slot; one another tandem holds
             * now is queued as before, and its thread says so */
            int lock = tnd_session_lock_dir(dir);
            if (lock >= 0)
                tnd_hubsession_hold_lock(s, lock);
            else
                tnd_error_clear();
            fprintf(stderr,
                    "tandem serve: session %s of an earlier server goes on "
                    "(%s)\n",
                    id, repo);
            if (waits && answers[i] && tnd_hub_set_answer(s, answers[i]) < 0) {
                tnd_log_error("session %s: %s", id, tnd_error_last());
                tnd_hub_forget(h, s);
                if (tnd_accepted_end(h->accepted, id, -1, NULL) < 0)
                    tnd_log_error("%s", tnd_error_last());
            } else if (waits && answers[i]) {
                tnd_client_who who; /* as the accepted list kept it */
                tnd_client_who_read(&who, answers[i]);
                tnd_hubsession_set_who(s, &who);
            }
        }
        json_object_put(answers[i]);
        json_object_put(records);
        free(owner);
        free(path);
        free(dir);
    }
    tnd_str_list_free(&repos);
    tnd_str_list_free(&ids);
    free(answers);
}
