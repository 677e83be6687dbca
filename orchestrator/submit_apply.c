/* tandem submit --apply, --commit: a served session's approved change
 * into the client's own tree (see submit_int.h).
 *
 * The client applies, not the server: the tree is the user's, and the
 * client is the user's process, with the user's authority over it; a
 * server applies nothing a request asked for. So it applies only to its
 * own --repo (the report's repository must be that one), with the same
 * rules as tandem run (apply.h), and only the change the report says
 * was approved. */
#include "orchestrator/submit_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "orchestrator/session.h"
#include "proto/body.h"
#include "proto/json.h"

/* Bytes of a report read from the session's directory. */
#define REPORT_MAX (32 << 20)

/* The approved attempt's rationale: the last attempt's. */
static const char *rationale_of(json_object *report)
{
    json_object *attempts = tnd_json_array(report, "attempts");
    size_t n = attempts ? json_object_array_length(attempts) : 0;

    return n ? tnd_json_str_or(json_object_array_get_idx(attempts, n - 1),
                               "rationale", NULL)
             : NULL;
}

/* report.json of session in repo, read from its directory (a reply may
 * come without it: too large). NULL with the error set. */
static json_object *read_report(const char *repo, const char *session)
{
    char *dir = tnd_session_dir_of(repo, session);
    char *path = tnd_fs_join(dir, "report.json"), *text = NULL;
    json_object *o = NULL;
    size_t len = 0;

    if (tnd_fs_read(&text, &len, path, REPORT_MAX) == 0 &&
        tnd_json_parse(&o, text, len) < 0)
        tnd_error_prefix("%s", path);
    free(text);
    free(path);
    free(dir);
    return o;
}

/* The commit the session's attempts started from, for --commit; NULL
 * (said) when it was not submitted with --commit. */
static const char *base_commit(const tnd_submit_client *s, json_object *report,
                               const char *session)
{
    json_object *ws = NULL;
    const char *head;

    json_object_object_get_ex(report, "workspace", &ws);
    head = ws ? tnd_json_str_or(ws, "commit", NULL) : NULL;
    if (!head)
        fprintf(stderr,
                "%s: not committed: session %s was not submitted with "
                "--commit, so its attempts worked on your files as they "
                "were, not on a commit; nothing was applied (apply it with "
                "--apply, or submit again with --commit) (exit %d)\n",
                s->me, session, TND_EXIT_NOT_APPLIED);
    return head;
}

int tnd_submit_apply(tnd_submit_client *s, json_object *reply_report,
                     const char *session)
{
    json_object *report = reply_report ? json_object_get(reply_report)
                                       : read_report(s->apply_repo, session);
    const char *repo, *diff, *rel, *head = NULL;
    char *real = NULL, *file = NULL, *msg = NULL;
    tnd_apply_result res;
    int rc, code = TND_EXIT_NOT_APPLIED;

    memset(&res, 0, sizeof(res));
    if (!report) {
        fprintf(stderr,
                "%s: not applied: session %s's report cannot be "
                "read: %s (exit %d)\n",
                s->me, session, tnd_error_last(), TND_EXIT_NOT_APPLIED);
        return TND_EXIT_NOT_APPLIED;
    }
    repo = tnd_json_str_or(report, "repo", "");
    diff = tnd_json_str_or(report, "final_diff_text", NULL);
    rel = tnd_json_str_or(report, "final_diff", NULL);
    real = *repo ? tnd_fs_realpath(repo) : NULL;
    if (!real || strcmp(real, s->apply_repo) != 0) {
        /* the server names the repository: its word is no authority to
         * write anywhere but where this client was pointed */
        fprintf(stderr,
                "%s: not applied: session %s is of %s, not of the "
                "repository here (%s); run this in that repository or give "
                "--repo (exit %d)\n",
                s->me, session, *repo ? repo : "no repository", s->apply_repo,
                TND_EXIT_NOT_APPLIED);
        goto out;
    }
    if (!diff || !rel ||
        strcmp(tnd_json_str_or(report, "status", ""), "approved") != 0) {
        fprintf(stderr,
                "%s: not applied: session %s has no approved change "
                "(exit %d)\n",
                s->me, session, TND_EXIT_NOT_APPLIED);
        goto out;
    }
    if (s->apply == TND_APPLY_COMMIT &&
        !(head = base_commit(s, report, session)))
        goto out;
    file = tnd_fs_join(s->apply_repo, rel);
    msg = tnd_apply_message(rationale_of(report),
                            tnd_json_str_or(report, "task", ""), session);
    rc = tnd_apply_patch(&res, s->apply_repo, diff, file, s->apply, msg, head);
    tnd_apply_say(stderr, s->me, &res, rc, s->apply_repo, file,
                  TND_EXIT_NOT_APPLIED);
    if (reply_report) /* --json prints it: what was done is in it */
        json_object_object_add(reply_report, "apply", tnd_apply_json(&res));
    code = rc == 0 ? TND_EXIT_OK : TND_EXIT_NOT_APPLIED;
out:
    tnd_apply_result_clear(&res);
    json_object_put(report);
    free(msg);
    free(file);
    free(real);
    return code;
}
