/* tnd_journal - the session's append-only journal: the source of truth.
 *
 * .tandem/sessions/ID/journal.jsonl holds one JSON object per line, one
 * line per step of the run (the task, each proposal, each audit, each
 * decision, each escalation and human answer, the finish). A record is
 * written with a single write(2) and fsync'd before the run acts on it,
 * so after a crash the journal holds every step that was taken, and a
 * resumed run can rebuild its state from it without asking any model
 * again. A torn last line (the crash hit mid-write) is detected and
 * ignored, never fatal; damage anywhere else is an error.
 *
 * Every record has "seq" (1, 2, ...), "time" (ISO 8601 UTC) and "type";
 * the rest depends on the type (docs/ARCHITECTURE.md, "Journal"). */
#ifndef TND_JOURNAL_H
#define TND_JOURNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/session.h"

typedef struct tnd_journal tnd_journal;

/* Open path for appending, creating it if needed; existing records are
 * read first (see tnd_journal_records) so seq continues. NULL with the
 * error set when the file cannot be opened or is damaged before its last
 * line. */
tnd_journal *tnd_journal_open(const char *path);

/* Close; sets *self_p to NULL; safe on NULL. */
void tnd_journal_close(tnd_journal **self_p);

/* Append one record: "seq", "time" and "type" are added to fields (which
 * is consumed: its reference is put). The line is written whole and
 * fsync'd before this returns. -1 with an error naming the file and the
 * cause (e.g. "No space left on device") when it could not be; the
 * journal then refuses further appends, so no later step is recorded
 * without this one. */
int tnd_journal_append(tnd_journal *self, const char *type,
                       json_object *fields);

/* Append like tnd_journal_append, without the fsync: for a record whose
 * loss in a power cut costs no step, only a count (`asked`, see paid.h).
 * A process that dies leaves it in the file all the same, and the next
 * tnd_journal_append makes it durable with its own record. */
int tnd_journal_note(tnd_journal *self, const char *type, json_object *fields);

/* The records read at open plus those appended since, in order.
 * Borrowed: valid until the journal is closed. */
size_t tnd_journal_count(const tnd_journal *self);
json_object *tnd_journal_record(const tnd_journal *self, size_t index);

/* All of them, as the JSON array tnd_journal_read gives. Borrowed. */
json_object *tnd_journal_records(const tnd_journal *self);

/* Where the session of records (a JSON array) stands by its last step, a
 * resume not counting: the outcome its finish record names,
 * TND_SESSION_WAITING after an escalation, else TND_SESSION_OPEN (it can
 * be resumed). The lock and report.json are the caller's to weigh. -1
 * when the finish record names no outcome ("journal.jsonl:LINE: unknown
 * session status 'X' (known: ...)"). */
int tnd_journal_status(tnd_session_status *out, json_object *records);

/* The escalation the session of records waits on: its record's seq, or
 * 0 when it waits on none. An answer names it, so that it is never taken
 * for a later question. */
long tnd_journal_waiting_on(json_object *records);

/* Make every record written so far durable (fdatasync): after a run of
 * tnd_journal_note, one sync where each tnd_journal_append would have
 * made its own. -1 with the error naming the file; the journal then
 * refuses further appends, as after a failed append. */
int tnd_journal_sync(tnd_journal *self);

/* True once an append failed: the journal takes no more records. */
bool tnd_journal_failed(const tnd_journal *self);

/* Rename the journal's file to path (rename(2): path is replaced), and
 * name it so from now on, in its errors too. */
int tnd_journal_move(tnd_journal *self, const char *path);

/* True when the file ended with a torn record at open (it was ignored
 * and will be overwritten by the next append). */
bool tnd_journal_was_torn(const tnd_journal *self);

/* The record's type, or "" when it has none. */
const char *tnd_journal_type(json_object *record);

/* Read a journal without opening it for writing (for `tandem show` and
 * friends). Caller puts *out, a JSON array of the records. A torn last
 * line is skipped. */
int tnd_journal_read(json_object **out, const char *path);

/* As tnd_journal_read, the journal.jsonl of the directory dirfd (a
 * session's, tnd_session_dir_open), through no symbolic link; path
 * names it in messages. */
int tnd_journal_read_at(json_object **out, int dirfd, const char *path);

/* As tnd_journal_read, each record kept in outline: its scalar fields
 * (strings cut at 1 KiB), an empty object for each object field, no
 * arrays. For listings across sessions (sessions, stats, prune, watch):
 * a record's replies cost ~30 times their size parsed, and a journal of
 * large records took gigabytes to list. */
int tnd_journal_read_outline(json_object **out, const char *path);

#endif
