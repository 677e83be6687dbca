/* The append-only, fsync'd session journal (see journal.h). */
#include "orchestrator/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define JOURNAL_MAX_BYTES (512 << 20)

/* The most records a journal may hold: far past any session (50
 * iterations a budget, each a dozen records), and a bound on what one
 * that is not tandem's costs to read (10 MB of "{}" lines took 2.7 GB
 * and 9 s of tandem sessions). */
#define JOURNAL_MAX_RECORDS 200000

/* A record holds what tandem parsed (a reply, at most TND_JSON_MAX_DEPTH
 * deep) a few levels down ("reply", a quorum's members): read back with
 * room for them, or a reply as deep as a body may be made its record
 * unreadable, dropped as torn and its call paid again (a review found
 * it). */
#define RECORD_DEPTH (TND_JSON_MAX_DEPTH + 8)

struct tnd_journal {
    char *path;
    int fd;
    json_object *records; /* array */
    long next_seq;
    off_t end; /* where the next record goes (after the last whole one) */
    bool torn;
    bool broken; /* an append failed: refuse the rest */
};

/* The longest string an outline keeps of a field. */
#define OUTLINE_STRING_MAX 1024

/* rec's outline (see tnd_journal_read_outline): its scalar fields, a
 * string cut at OUTLINE_STRING_MAX bytes, and an empty object for each
 * object field (that it is there). Takes rec. */
static json_object *outline(json_object *rec)
{
    json_object *o = json_object_new_object();

    json_object_object_foreach(rec, key, value)
    {
        json_type t = json_object_get_type(value);
        if (t == json_type_string &&
            json_object_get_string_len(value) > OUTLINE_STRING_MAX)
            json_object_object_add(
                o, key,
                json_object_new_string_len(json_object_get_string(value),
                                           OUTLINE_STRING_MAX));
        else if (t == json_type_object)
            json_object_object_add(o, key, json_object_new_object());
        else if (t != json_type_array)
            json_object_object_add(o, key, json_object_get(value));
    }
    json_object_put(rec);
    return o;
}

/* Parse text into records (outlines of them with lean); *good_end is
 * the offset after the last whole record. A damaged last line is torn
 * (ignored); damage before it is an error. */
static int parse(json_object *records, const char *path, const char *text,
                 size_t len, size_t *good_end, bool *torn, bool lean)
{
    size_t pos = 0;
    long line = 0;

    *good_end = 0;
    *torn = false;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        json_object *rec = NULL;
        line++;
        if (!nl ||
            tnd_json_parse_depth(&rec, text + pos, n, RECORD_DEPTH) < 0 ||
            !json_object_is_type(rec, json_type_object)) {
            json_object_put(rec);
            if (!nl || (size_t)(nl - text) + 1 == len) {
                /* the last line: a crash cut it short */
                *torn = true;
                return 0;
            }
            return tnd_error_set("%s:%ld: the journal is damaged (not a "
                                 "whole JSON record); it cannot be resumed "
                                 "safely",
                                 path, line);
        }
        if (json_object_array_length(records) == JOURNAL_MAX_RECORDS) {
            json_object_put(rec);
            return tnd_error_set("%s: more than %d records; this is no "
                                 "journal tandem wrote",
                                 path, JOURNAL_MAX_RECORDS);
        }
        json_object_array_add(records, lean ? outline(rec) : rec);
        pos += n + 1;
        *good_end = pos;
    }
    return 0;
}

static int read_records(json_object **out, const char *path, bool lean)
{
    char *text = NULL;
    size_t len = 0, end;
    bool torn;
    json_object *records = json_object_new_array();
    int rc = tnd_fs_read(&text, &len, path, JOURNAL_MAX_BYTES);

    *out = NULL;
    if (rc < 0) {
        json_object_put(records);
        return rc;
    }
    rc = parse(records, path, text, len, &end, &torn, lean);
    free(text);
    if (rc < 0) {
        json_object_put(records);
        return -1;
    }
    *out = records;
    return 0;
}

int tnd_journal_read(json_object **out, const char *path)
{
    return read_records(out, path, false);
}

int tnd_journal_read_outline(json_object **out, const char *path)
{
    return read_records(out, path, true);
}

int tnd_journal_read_at(json_object **out, int dirfd, const char *path)
{
    char *text = NULL;
    size_t len = 0, end;
    bool torn;
    json_object *records;
    int rc = tnd_fs_read_at(&text, &len, dirfd, "journal.jsonl", path,
                            JOURNAL_MAX_BYTES);

    *out = NULL;
    if (rc < 0)
        return rc;
    records = json_object_new_array();
    rc = parse(records, path, text, len, &end, &torn, false);
    free(text);
    if (rc < 0) {
        json_object_put(records);
        return -1;
    }
    *out = records;
    return 0;
}

tnd_journal *tnd_journal_open(const char *path)
{
    tnd_journal *j = tnd_xcalloc(1, sizeof(*j));
    char *text = NULL;
    size_t len = 0, end = 0;
    int rc;

    j->path = tnd_xstrdup(path);
    j->fd = -1;
    j->records = json_object_new_array();
    rc = tnd_fs_read(&text, &len, path, JOURNAL_MAX_BYTES);
    if (rc < 0 && rc != TND_ENOTFOUND)
        goto fail;
    if (rc == 0 &&
        parse(j->records, path, text, len, &end, &j->torn, false) < 0)
        goto fail;
    free(text);
    text = NULL;
    if (j->torn)
        tnd_log_warn("%s: the last record was cut short by a crash; "
                     "ignoring it",
                     path);
    /* a link there (a repository can carry .tandem) is not followed */
    j->fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (j->fd < 0) {
        tnd_error_sys("cannot open %s", path);
        goto fail;
    }
    /* drop a torn tail so the next record starts on a clean line */
    if (ftruncate(j->fd, (off_t)end) < 0) {
        tnd_error_sys("cannot repair %s", path);
        goto fail;
    }
    j->end = (off_t)end;
    j->next_seq = (long)json_object_array_length(j->records) + 1;
    return j;
fail:
    free(text);
    tnd_journal_close(&j);
    return NULL;
}

void tnd_journal_close(tnd_journal **self_p)
{
    tnd_journal *j = self_p ? *self_p : NULL;

    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd);
    json_object_put(j->records);
    free(j->path);
    free(j);
    *self_p = NULL;
}

static int append(tnd_journal *self, const char *type, json_object *fields,
                  bool sync)
{
    json_object *rec = json_object_new_object();
    char when[40];
    char *line;
    size_t len, done = 0;

    if (self->broken) {
        json_object_put(fields);
        json_object_put(rec);
        return tnd_error_set("%s: an earlier write failed; nothing more is "
                             "recorded",
                             self->path);
    }
    tnd_clock_iso8601(when, sizeof(when), tnd_wall_ms());
    json_object_object_add(rec, "seq", json_object_new_int64(self->next_seq));
    json_object_object_add(rec, "time", json_object_new_string(when));
    json_object_object_add(rec, "type", json_object_new_string(type));
    if (fields) {
        json_object_object_foreach(fields, key, val)
        {
            json_object_object_add(rec, key, json_object_get(val));
        }
        json_object_put(fields);
    }
    line = tnd_json_dump(rec, &len);
    line = tnd_xrealloc(line, len + 2, 1);
    line[len++] = '\n';
    line[len] = '\0';
    tnd_log_redact_json(line);
    len = strlen(line);
    while (done < len) {
        ssize_t n =
            pwrite(self->fd, line + done, len - done, self->end + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            tnd_error_sys("cannot write the journal %s", self->path);
            goto fail;
        }
        done += (size_t)n;
    }
    if (sync && fdatasync(self->fd) < 0) {
        tnd_error_sys("cannot sync the journal %s", self->path);
        goto fail;
    }
    self->end += (off_t)len;
    self->next_seq++;
    json_object_array_add(self->records, rec);
    free(line);
    return 0;
fail:
    /* cut back what was partly written: the journal stays whole */
    if (ftruncate(self->fd, self->end) < 0) {
        /* the next open will see a torn line and ignore it */
    }
    self->broken = true;
    json_object_put(rec);
    free(line);
    return -1;
}

int tnd_journal_append(tnd_journal *self, const char *type, json_object *fields)
{
    return append(self, type, fields, true);
}

int tnd_journal_note(tnd_journal *self, const char *type, json_object *fields)
{
    return append(self, type, fields, false);
}

size_t tnd_journal_count(const tnd_journal *self)
{
    return json_object_array_length(self->records);
}

json_object *tnd_journal_record(const tnd_journal *self, size_t index)
{
    return json_object_array_get_idx(self->records, index);
}

json_object *tnd_journal_records(const tnd_journal *self)
{
    return self->records;
}

int tnd_journal_status(tnd_session_status *out, json_object *records)
{
    size_t n = records ? json_object_array_length(records) : 0;

    *out = TND_SESSION_OPEN;
    for (size_t i = n; i-- > 0;) {
        json_object *rec = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(rec);
        if (strcmp(type, "resume") == 0)
            continue; /* a resume that reached the same question again */
        if (strcmp(type, "finish") == 0 &&
            tnd_session_status_parse(out, tnd_json_str_or(rec, "status", "")) <
                0) {
            tnd_error_prefix("journal.jsonl:%zu", i + 1);
            return -1;
        }
        if (strcmp(type, "escalation") == 0)
            *out = TND_SESSION_WAITING;
        break;
    }
    return 0;
}

long tnd_journal_waiting_on(json_object *records)
{
    size_t n = records ? json_object_array_length(records) : 0;

    for (size_t i = n; i-- > 0;) {
        json_object *rec = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(rec);
        if (strcmp(type, "resume") == 0)
            continue;
        return strcmp(type, "escalation") == 0 ? tnd_json_int_or(rec, "seq", 0)
                                               : 0;
    }
    return 0;
}

int tnd_journal_sync(tnd_journal *self)
{
    if (self->broken)
        return tnd_error_set("%s: an earlier write failed; nothing more is "
                             "recorded",
                             self->path);
    if (fdatasync(self->fd) < 0) {
        self->broken = true;
        return tnd_error_sys("cannot sync the journal %s", self->path);
    }
    return 0;
}

bool tnd_journal_failed(const tnd_journal *self)
{
    return self->broken;
}

int tnd_journal_move(tnd_journal *self, const char *path)
{
    if (rename(self->path, path) < 0)
        return tnd_error_sys("cannot replace %s", path);
    free(self->path);
    self->path = tnd_xstrdup(path);
    return 0;
}

bool tnd_journal_was_torn(const tnd_journal *self)
{
    return self->torn;
}

const char *tnd_journal_type(json_object *record)
{
    json_object *t;

    if (!json_object_object_get_ex(record, "type", &t) ||
        !json_object_is_type(t, json_type_string))
        return "";
    return json_object_get_string(t);
}
