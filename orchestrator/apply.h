/* tnd_apply - put an approved patch into the user's tree, and commit it
 * (`tandem run --apply`, `--commit`).
 *
 * The run worked on a copy; the user may have edited their tree since it
 * started. The patch goes in only when it applies cleanly to the tree as
 * it is now, all of it or nothing, so no uncommitted work is ever
 * overwritten: in a git work tree with `git apply --check` then `git
 * apply` (no --3way: a conflict is a refusal, never markers in a file);
 * elsewhere with tandem's own strict applier (each hunk's old lines found
 * exactly once, byte for byte; a created file must not exist; a deleted
 * file must hold exactly what the patch removes).
 *
 * A commit holds the patch and nothing else: it is built from the patch
 * on the audited commit in an index of its own (apply --cached,
 * write-tree, commit-tree), never from the files in the tree, and HEAD
 * moves to it only while it still names the audited commit (update-ref
 * with the old value). The files it touches must have no changes of the
 * user's (staged, unstaged or untracked) before it is applied, so the
 * tree then holds what the commit does; whatever else the user staged
 * stays staged and out of the commit. Commit hooks are not run: the
 * change has just passed tandem's own gate. git runs with an argv, never
 * a shell. */
#ifndef TND_APPLY_H
#define TND_APPLY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

/* What the user asked to be done with an approved change. */
typedef enum tnd_apply_mode {
    TND_APPLY_NONE = 0, /* leave the tree alone (the default) */
    TND_APPLY_TREE,     /* --apply */
    TND_APPLY_COMMIT,   /* --commit: apply, then commit */
} tnd_apply_mode;

/* What tnd_apply_patch did. */
typedef struct tnd_apply_result {
    tnd_apply_mode mode;
    bool git;       /* the tree is a git work tree (git apply was used) */
    bool applied;   /* the tree now holds the patch */
    bool committed; /* and a commit holds it (--commit) */
    char *commit;   /* that commit's id, or NULL */
    char *why;      /* why not applied or not committed; NULL when all that
                       was asked is done, or, committed, a warning (git's
                       index not brought up to date) */
    char **paths;   /* the files the patch touches, relative to the tree,
                       NULL-terminated */
} tnd_apply_result;

/* 0 when repo is in a git work tree whose HEAD names a commit, so
 * --commit can commit there; TND_ECONFIG with an error naming repo and
 * the fix otherwise (git not installed, not a work tree, no commit yet
 * while the work tree holds files the run would not see, no identity to
 * commit as). For checking before a run is paid for. */
int tnd_apply_can_commit(const char *repo);

/* Put the patch (its text, diff, and the same text's file, patch_file,
 * which git reads) into repo's tree as mode asks. Fills *out (clear it
 * with tnd_apply_result_clear); returns 0 when everything asked was done,
 * 1 when not (out->why says why, out->applied whether the tree changed),
 * never touching the tree unless the whole patch applies. message is the
 * commit message (tnd_apply_message), used with TND_APPLY_COMMIT; so is
 * head, the commit HEAD named when the change's base was taken
 * (tnd_apply_head), or NULL: with TND_APPLY_COMMIT nothing is applied
 * unless HEAD names it still (a checkout during the run put the commit
 * on another branch, onto a tree nobody audited), and it is committed
 * only while HEAD names it as the commit is made. */
int tnd_apply_patch(tnd_apply_result *out, const char *repo, const char *diff,
                    const char *patch_file, tnd_apply_mode mode,
                    const char *message, const char *head);

/* The commit HEAD names in the git work tree at repo ("" when there is
 * none yet, or no git). Caller frees. */
char *tnd_apply_head(const char *repo);

/* Say on err, prefixed "ME: ", what tnd_apply_patch did (rc its
 * return): committed, applied, or why not, naming patch_file, where the
 * approved patch stays, and exit_code, the exit it makes then. tandem
 * run's words, and tandem submit's. */
void tnd_apply_say(FILE *err, const char *me, const tnd_apply_result *res,
                   int rc, const char *repo, const char *patch_file,
                   int exit_code);

/* Free what out holds; safe on a zeroed result. */
void tnd_apply_result_clear(tnd_apply_result *out);

/* The commit message for an approved change: a subject line (the first
 * line of the coder's rationale, or the task when the rationale is
 * empty; cut at a word to at most 72 bytes, "..." marking a cut), a blank
 * line, the whole rationale when the subject does not already say all
 * of it, and a trailer "Tandem-Session: ID". Caller frees. */
char *tnd_apply_message(const char *rationale, const char *task,
                        const char *session);

/* report.json's "apply": {"asked", "applied", "committed", "commit",
 * "why", "paths", "via"}. A new object. */
json_object *tnd_apply_json(const tnd_apply_result *r);

#endif
