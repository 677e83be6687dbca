/* The sessions tandem serve accepted and has not ended, and how the
 * newest that ended did (see accepted.h). */
#include "orchestrator/accepted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/journal.h"
#include "proto/json.h"

/* Records past twice those kept (pending sessions and outcomes), plus
 * this, and the file is written afresh: the journal keeps its records in
 * memory too. */
#define COMPACT_SLACK 1024
/* Records the list holds at most before it is rewritten, whatever it
 * keeps: well under what a journal reader takes (200,000). Compacted only
 * at twice what it keeps, a full queue (--queue-max 100000) grew the
 * file past that, and the next server could not read it. What it keeps
 * is at most --max-sessions (1,024) + --queue-max (100,000) pending and
 * TND_ACCEPTED_ENDED_MAX outcomes, so a rewrite always brings it under. */
#define COMPACT_AT_MOST 150000

typedef struct entry {
    char *repo, *id;
    json_object *answer; /* owned; NULL: a task to run */
} entry;

typedef struct outcome {
    char *repo, *id, *owner; /* id NULL: a place free, or let go */
    int code;
} outcome;

struct tnd_accepted {
    char *path;
    tnd_journal *journal;
    entry *e; /* accepted and not ended, oldest first */
    size_t n, alloc;
    outcome *ended; /* a ring of TND_ACCEPTED_ENDED_MAX; NULL until one */
    size_t nended, ended_at;
    size_t records_max; /* before a rewrite, whatever it keeps */
};

static json_object *accept_record(const char *repo, const char *id,
                                  json_object *answer)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "repo", json_object_new_string(repo));
    json_object_object_add(f, "session", json_object_new_string(id));
    if (answer)
        json_object_object_add(f, "answer", json_object_get(answer));
    return f;
}

/* An "end" record; the outcome's fields when repo is not NULL. */
static json_object *end_record(const char *id, const char *repo, int code,
                               const char *owner)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "session", json_object_new_string(id));
    if (repo) {
        json_object_object_add(f, "repo", json_object_new_string(repo));
        json_object_object_add(f, "code", json_object_new_int(code));
        if (owner)
            json_object_object_add(f, "owner", json_object_new_string(owner));
    }
    return f;
}

static void outcome_clear(outcome *o)
{
    free(o->repo);
    free(o->id);
    free(o->owner);
    memset(o, 0, sizeof(*o));
}

/* The newest outcome of id, or NULL. */
static outcome *outcome_find(const tnd_accepted *a, const char *id)
{
    for (size_t k = 1; k <= a->nended; k++) {
        outcome *o = &a->ended[(a->ended_at + TND_ACCEPTED_ENDED_MAX - k) %
                               TND_ACCEPTED_ENDED_MAX];
        if (o->id && strcmp(o->id, id) == 0)
            return o;
    }
    return NULL;
}

void tnd_accepted_set_records_max(tnd_accepted *self, size_t max)
{
    self->records_max = max;
}

size_t tnd_accepted_ended(const tnd_accepted *self)
{
    return self->nended;
}

const char *tnd_accepted_ended_id(const tnd_accepted *self, size_t k)
{
    if (k >= self->nended)
        return NULL;
    return self
        ->ended[(self->ended_at + TND_ACCEPTED_ENDED_MAX - 1 - k) %
                TND_ACCEPTED_ENDED_MAX]
        .id;
}

/* Let go of the outcome of id: it is pending again (answered). */
static void drop_outcome(tnd_accepted *a, const char *id)
{
    outcome *o = outcome_find(a, id);

    if (o)
        outcome_clear(o);
}

/* Keep the outcome as the newest, in place of an older one of id; past
 * the cap the oldest goes. */
static void keep_outcome(tnd_accepted *a, const char *repo, const char *id,
                         const char *owner, int code)
{
    outcome *o;

    drop_outcome(a, id);
    if (!a->ended)
        a->ended = tnd_xcalloc(TND_ACCEPTED_ENDED_MAX, sizeof(*a->ended));
    o = &a->ended[a->ended_at];
    outcome_clear(o);
    o->repo = tnd_xstrdup(repo);
    o->id = tnd_xstrdup(id);
    o->owner = owner ? tnd_xstrdup(owner) : NULL;
    o->code = code;
    a->ended_at = (a->ended_at + 1) % TND_ACCEPTED_ENDED_MAX;
    if (a->nended < TND_ACCEPTED_ENDED_MAX)
        a->nended++;
}

static void remember(tnd_accepted *a, const char *repo, const char *id,
                     json_object *answer)
{
    TND_GROW(a->e, a->alloc, a->n + 1);
    a->e[a->n].repo = tnd_xstrdup(repo);
    a->e[a->n].answer = answer ? json_object_get(answer) : NULL;
    a->e[a->n++].id = tnd_xstrdup(id);
}

static void entry_free(entry *e)
{
    free(e->repo);
    free(e->id);
    json_object_put(e->answer);
}

static void entry_free(entry *e);

static void forget(tnd_accepted *a, const char *id)
{
    for (size_t k = 0; k < a->n; k++)
        if (strcmp(a->e[k].id, id) == 0) {
            entry_free(&a->e[k]);
            memmove(&a->e[k], &a->e[k + 1], (a->n - k - 1) * sizeof(entry));
            a->n--;
            return;
        }
}

/* The accepted and not ended, and the outcomes, from the records of j.
 * An "end" without an outcome is one from before outcomes were kept, or
 * of a session whose journal could not be read. */
static void collect(tnd_accepted *a, const tnd_journal *j)
{
    for (size_t i = 0; i < tnd_journal_count(j); i++) {
        json_object *rec = tnd_journal_record(j, i);
        const char *type = tnd_journal_type(rec);
        const char *id = tnd_json_str_or(rec, "session", NULL);
        const char *repo = tnd_json_str_or(rec, "repo", NULL);
        json_object *answer = tnd_json_field(rec, "answer");
        json_object *code = tnd_json_field(rec, "code");
        if (id && repo && strcmp(type, "accept") == 0) {
            forget(a, id); /* accepted again, with an answer */
            drop_outcome(a, id);
            remember(a, repo, id,
                     json_object_is_type(answer, json_type_object) ? answer
                                                                   : NULL);
        } else if (id && strcmp(type, "end") == 0) {
            forget(a, id);
            if (repo && json_object_is_type(code, json_type_int) &&
                json_object_get_int(code) >= 0 &&
                json_object_get_int(code) <= 255)
                keep_outcome(a, repo, id, tnd_json_str_or(rec, "owner", NULL),
                             json_object_get_int(code));
        }
    }
}

/* The outcomes (oldest first) and the pending ones, in a fresh file that
 * replaces the old at once (a crash before the rename leaves the old
 * one, which says the same). One sync before the rename, not one a
 * record: with 1,024 outcomes kept, a sync each stalled the server's
 * loop for a thousand device flushes. */
static int compact(tnd_accepted *a)
{
    char *tmp = tnd_xasprintf("%s.new", a->path);
    tnd_journal *fresh;
    int rc = -1;

    unlink(tmp);
    if (!(fresh = tnd_journal_open(tmp)))
        goto out;
    for (size_t k = a->nended; k >= 1; k--) {
        const outcome *o =
            &a->ended[(a->ended_at + TND_ACCEPTED_ENDED_MAX - k) %
                      TND_ACCEPTED_ENDED_MAX];
        if (o->id &&
            tnd_journal_note(fresh, "end",
                             end_record(o->id, o->repo, o->code, o->owner)) < 0)
            goto out;
    }
    for (size_t i = 0; i < a->n; i++)
        if (tnd_journal_note(
                fresh, "accept",
                accept_record(a->e[i].repo, a->e[i].id, a->e[i].answer)) < 0)
            goto out;
    if (tnd_journal_sync(fresh) < 0)
        goto out;
    /* named as the list from now on: its errors name the file there is */
    if (tnd_journal_move(fresh, a->path) < 0)
        goto out;
    tnd_journal_close(&a->journal);
    a->journal = fresh;
    fresh = NULL;
    rc = 0;
out:
    tnd_journal_close(&fresh);
    free(tmp);
    return rc;
}

/* Append a record to the list. A write that failed (a full disk) left
 * its journal refusing every later record, as a session's must: there a
 * step recorded after a missing one would replay wrong. The list's
 * records stand alone and what is pending is in memory, so the list is
 * written afresh first; a server whose disk filled once takes tasks
 * again once there is room, not only after a restart. */
static int append(tnd_accepted *a, const char *type, json_object *fields)
{
    if (tnd_journal_failed(a->journal) && compact(a) < 0) {
        json_object_put(fields);
        return -1;
    }
    return tnd_journal_append(a->journal, type, fields);
}

tnd_accepted *tnd_accepted_open(const char *path)
{
    tnd_accepted *a = tnd_xcalloc(1, sizeof(*a));
    tnd_journal *old = tnd_journal_open(path);

    a->path = tnd_xstrdup(path);
    a->records_max = COMPACT_AT_MOST;
    if (!old)
        goto fail;
    collect(a, old);
    tnd_journal_close(&old);
    if (compact(a) < 0)
        goto fail;
    return a;
fail:
    tnd_error_prefix("the list of accepted sessions");
    tnd_accepted_close(&a);
    return NULL;
}

void tnd_accepted_close(tnd_accepted **self_p)
{
    tnd_accepted *a = self_p ? *self_p : NULL;

    if (!a)
        return;
    tnd_journal_close(&a->journal);
    for (size_t i = 0; i < a->n; i++)
        entry_free(&a->e[i]);
    free(a->e);
    for (size_t i = 0; i < a->nended; i++)
        outcome_clear(&a->ended[i]);
    free(a->ended);
    free(a->path);
    free(a);
    *self_p = NULL;
}

size_t tnd_accepted_pending(const tnd_accepted *self)
{
    return self->n;
}

const char *tnd_accepted_repo(const tnd_accepted *self, size_t i)
{
    return self->e[i].repo;
}

const char *tnd_accepted_id(const tnd_accepted *self, size_t i)
{
    return self->e[i].id;
}

json_object *tnd_accepted_answer(const tnd_accepted *self, size_t i)
{
    return self->e[i].answer;
}

/* Rewrite the list when it holds twice what it keeps, or COMPACT_AT_MOST
 * records. The record just appended is on disk either way, so a rewrite
 * that fails is a warning: the next one tries again. */
static void compact_if_due(tnd_accepted *self)
{
    size_t limit = 2 * (self->n + self->nended) + COMPACT_SLACK;

    if (limit > self->records_max)
        limit = self->records_max;
    if (tnd_journal_count(self->journal) > limit && compact(self) < 0)
        tnd_log_warn("%s", tnd_error_last());
}

int tnd_accepted_add(tnd_accepted *self, const char *repo, const char *id,
                     json_object *answer, const tnd_client_who *who)
{
    json_object *copy = NULL;
    int rc = -1;

    if (answer) {
        /* a copy: the caller's object stays as it made it */
        if (json_object_deep_copy(answer, &copy, NULL) < 0) {
            tnd_error_set("session %s: cannot copy its answer", id);
            return -1;
        }
        tnd_client_who_add(copy, who);
    }
    if (append(self, "accept", accept_record(repo, id, copy)) < 0)
        goto out;
    forget(self, id);       /* an answer to a session accepted before */
    drop_outcome(self, id); /* or that ended waiting for it */
    remember(self, repo, id, copy);
    compact_if_due(self);
    rc = 0;
out:
    json_object_put(copy);
    return rc;
}

int tnd_accepted_end(tnd_accepted *self, const char *id, int code,
                     const char *owner)
{
    const char *repo = NULL;

    for (size_t i = 0; i < self->n && !repo; i++)
        if (strcmp(self->e[i].id, id) == 0)
            repo = self->e[i].repo;
    if (repo && code >= 0)
        keep_outcome(self, repo, id, owner, code);
    else
        repo = NULL;
    if (append(self, "end", end_record(id, repo, code, owner)) < 0)
        return -1;
    forget(self, id); /* repo with it */
    compact_if_due(self);
    return 0;
}

bool tnd_accepted_outcome_of(const tnd_accepted *self, const char *id,
                             tnd_accepted_outcome *out)
{
    const outcome *o = outcome_find(self, id);

    if (!o)
        return false;
    out->repo = o->repo;
    out->id = o->id;
    out->owner = o->owner;
    out->code = o->code;
    return true;
}
