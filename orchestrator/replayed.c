/* An attempt replayed against what the session holds of it (see loop.h):
 * its journaled edits, applied again to a new snapshot, must make the
 * diff its journaled audit saw, or a person was shown. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/loop.h"
#include "orchestrator/session.h"
#include "proto/body.h"
#include "proto/json.h"

/* The files a message names at most. */
#define NAMES_MAX 4

static const char HEAD[] = "diff --git a/";

/* The part of diff for one file that starts at p (a "diff --git" line):
 * its length, and its path in *path (length *plen). A workspace's diff
 * names each file twice ("diff --git a/P b/P"), so the path is half of
 * what the line holds past "a/", less " b/". */
static size_t file_part(const char *p, const char **path, size_t *plen)
{
    const char *nl = strchr(p, '\n'), *next;
    size_t line = nl ? (size_t)(nl - p) : strlen(p);
    size_t names = line - (sizeof(HEAD) - 1);

    *path = p + sizeof(HEAD) - 1;
    *plen = names > 3 ? (names - 3) / 2 : names;
    next = nl ? strstr(nl, "\ndiff --git a/") : NULL;
    return next ? (size_t)(next + 1 - p) : strlen(p);
}

/* The part of diff for the file whose part in another diff starts at p,
 * or NULL: its length in *found. */
static const char *same_file(const char *diff, const char *p, size_t *found)
{
    const char *path, *q;
    size_t plen, qlen, qplen;

    file_part(p, &path, &plen);
    for (q = diff; q && *q; q += qlen) {
        const char *qpath;
        if (strncmp(q, HEAD, sizeof(HEAD) - 1) != 0)
            return NULL; /* not a workspace's diff */
        qlen = file_part(q, &qpath, &qplen);
        if (qplen == plen && memcmp(qpath, path, plen) == 0) {
            *found = qlen;
            return q;
        }
    }
    return NULL;
}

/* Name into b the files whose parts of diff are missing in other, or,
 * unless missing_only, differ from other's (at most NAMES_MAX in all;
 * *named counts them all). */
static void name_changed(tnd_buf *b, size_t *named, const char *diff,
                         const char *other, bool missing_only)
{
    const char *p, *path;
    size_t len, plen;

    for (p = diff; *p && strncmp(p, HEAD, sizeof(HEAD) - 1) == 0; p += len) {
        const char *q;
        size_t qlen = 0;
        char *raw, *shown;
        len = file_part(p, &path, &plen);
        q = same_file(other, p, &qlen);
        if (q && (missing_only || (qlen == len && memcmp(q, p, len) == 0)))
            continue;
        if ((*named)++ >= NAMES_MAX)
            continue;
        raw = tnd_xstrndup(path, plen);
        shown = tnd_str_one_line(raw, 200);
        tnd_buf_printf(b, "%s%s", b->len ? ", " : "", shown);
        free(shown);
        free(raw);
    }
}

/* The files where was and now differ, "a.c, b.h" (caller frees), or
 * NULL when they cannot be told. */
static char *changed_files(const char *was, const char *now)
{
    tnd_buf b;
    size_t named = 0;

    tnd_buf_init(&b, 4096);
    name_changed(&b, &named, was, now, false);
    name_changed(&b, &named, now, was, true);
    if (named > NAMES_MAX)
        tnd_buf_printf(&b, " and %zu more", named - NAMES_MAX);
    if (!b.len) {
        tnd_buf_free(&b);
        return NULL;
    }
    return tnd_buf_detach(&b, NULL);
}

bool tnd_loop_audit_journaled(const run *r, int n)
{
    for (size_t i = 0; i < tnd_journal_count(r->journal); i++) {
        json_object *rec = tnd_journal_record(r->journal, i);
        const char *type = tnd_journal_type(rec);
        if (tnd_json_int_or(rec, "attempt", 0) != n)
            continue;
        if (strcmp(type, "audit") == 0 || strcmp(type, "skills") == 0 ||
            strncmp(type, "critique.", 9) == 0 ||
            (strcmp(type, "escalation") == 0 &&
             tnd_str_eq(tnd_json_str_or(rec, "at", NULL), "audit")))
            return true;
    }
    return false;
}

/* Attempt a taken as the session holds it: was (len bytes, as read from
 * its diff file; taken) is its diff, and the failures the files as they
 * are now gave it are gone. What the journal decided of it is decided by
 * the journal (one_attempt, as_journaled). */
static void take_as_journaled(attempt *a, char *was, size_t len)
{
    free(a->diff);
    a->diff = NULL;
    if (len)
        a->diff = was;
    else
        free(was);
    free(a->apply_error);
    a->apply_error = NULL;
    a->in.apply_error = NULL;
    /* no change, and no failure the journal can tell: as it was then, an
     * edit that made nothing or did not apply; its decision says which */
    a->in.empty = !a->diff && !a->in.format_error;
    a->as_journaled = true;
}

/* The kind of the answer the replay carries ("approve"), or "answer". */
static const char *pending_kind(const run *r)
{
    return r->pending ? tnd_json_str_or(r->pending, "kind", "answer")
                      : "answer";
}

int tnd_loop_as_audited(run *r, attempt *a, const char *name)
{
    char *path, *was = NULL, *now, *files;
    const char *what;
    size_t len = 0;
    bool same;

    /* an answer that ends the session holds every attempt it replays to
     * the session's files: all of them were decided, and the replay must
     * come to the question without asking an agent anything */
    if (!tnd_loop_audit_journaled(r, a->n) &&
        !(r->answer_ends && tnd_loop_find(r, "decision", a->n, 0) >= 0))
        return 0;
    path = tnd_session_path(r->session, name);
    if (tnd_fs_read(&was, &len, path, TND_BODY_MAX_DIFF + 1) < 0) {
        tnd_error_clear();
        free(path); /* gone: nothing to hold it to */
        return 0;
    }
    free(path);
    /* as the session keeps it: secrets redacted */
    now = tnd_log_redact(tnd_xstrdup(a->diff ? a->diff : ""));
    same = strlen(now) == len && memcmp(now, was, len) == 0;
    files = same ? NULL : changed_files(was, now);
    free(now);
    if (same) {
        free(was);
        return 0;
    }
    what = files ? files : "its files";
    if (r->answer_ends) {
        /* approve or reject: the person answered what they were shown,
         * the attempts as the session holds them, which the files of
         * now do not change; nothing more is made of them */
        tnd_loop_end_progress(r);
        fprintf(r->err,
                "tandem: warning: attempt %d's change to %s, made again from "
                "its journaled edits, is not the one the session holds (%s); "
                "your %s ends the session, so it takes the attempt as "
                "the session holds it%s\n",
                a->n, what, name, pending_kind(r),
                tnd_str_eq(pending_kind(r), "approve")
                    ? ", and the diff approved may not apply to the files "
                      "as they are now"
                    : "");
        free(files);
        take_as_journaled(a, was, len);
        return 0;
    }
    free(was);
    tnd_error_set(
        "%s changed since this session started: attempt %d's change to %s, "
        "made again from its journaled edits, is not the one its journaled "
        "audit saw (%s), so the session cannot go on. Put the files back as "
        "they were, or start a new run%s",
        r->repo, a->n, what, name,
        r->pending ? "; tandem approve or tandem reject still end it, "
                     "taking the change as it was audited"
                   : "");
    free(files);
    return -1;
}
