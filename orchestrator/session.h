/* tnd_session - the record of one task in the target repository:
 * .tandem/sessions/<id>/ with report.json, attempt-N.diff, final.diff
 * and the agents' logs.
 *
 * Files are written atomically (temporary file, fsync, rename), so a
 * reader or a crash never sees half a report. .tandem/ gets a .gitignore
 * of "*" so the user's git does not pick sessions up. */
#ifndef TND_SESSION_H
#define TND_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "common/names.h"

typedef struct tnd_session tnd_session;

/* Where a session stands. A run ends with an outcome, APPROVED to
 * INTERRUPTED, which report.json's "status" and the journal's finish
 * record name; read back (tandem sessions, prune), a session may also be
 * RUNNING, QUEUED, WAITING for a person, UNSTARTED or UNREADABLE. */
typedef enum tnd_session_status {
    TND_SESSION_OPEN = 0,    /* not ended: the loop goes on (no name) */
    TND_SESSION_APPROVED,    /* a change was approved */
    TND_SESSION_REJECTED,    /* by the gate (a review) or by a person */
    TND_SESSION_ESCALATED,   /* a person must decide */
    TND_SESSION_FAILED,      /* an error stopped it; it can be resumed */
    TND_SESSION_INTERRUPTED, /* a signal stopped it; it can be resumed */
    TND_SESSION_RUNNING,     /* read back: a tandem holds its lock */
    TND_SESSION_WAITING,     /* read back: escalated, waiting for an answer */
    TND_SESSION_UNREADABLE,  /* read back: its files cannot be read */
    TND_SESSION_QUEUED,      /* read back: tandem serve holds its lock
                                while it waits for a slot */
    TND_SESSION_UNSTARTED,   /* read back: its directory was made and its
                                task never recorded (a run or server
                                killed as it made it): nothing to resume */
} tnd_session_status;

TND_NAMES_INT_SIZED(tnd_session_status);

/* "approved", ..., "unreadable"; "?" for OPEN. */
const char *tnd_session_status_name(tnd_session_status s);

/* The outcome called name, as report.json and a finish record write it,
 * into *out; -1 with "unknown session status 'NAME' (known: approved,
 * rejected, escalated, failed, interrupted)" when it is none. */
int tnd_session_status_parse(tnd_session_status *out, const char *name);

/* Whether repo/.tandem and repo/.tandem/sessions, where they exist, are
 * directories of their own, not symbolic links: a repository can carry
 * links there (a clone holds what was committed), and prune would remove
 * what they lead to. 0, or -1 with an error naming the link. */
int tnd_session_check_home(const char *repo);

/* Whether repo/.tandem and repo/.tandem/sessions, where they exist, are
 * as tnd_session_dir_open wants them: directories of this process's
 * effective user that nobody else may write in, neither a link, so that
 * nobody else can lead what tandem writes there elsewhere. 0, or -1 with
 * the error naming the path and why. */
int tnd_session_check_own_home(const char *repo);

/* The directory of session id (tnd_session_id_valid) in repo, opened
 * for a reader that must not be led elsewhere (tandem serve, for a
 * client that named the repository): repo/.tandem, its sessions and the
 * session's directory each opened from the one before, through no
 * symbolic link, and each a directory of this process's effective user
 * that nobody else may write in (as tandem makes them), so that nobody
 * can swap one under the reader; its files are then read from the
 * descriptor (tnd_fs_read_at). The descriptor (O_DIRECTORY, close-on-
 * exec; caller closes), or -1 with the error naming the path and why;
 * TND_ENOTFOUND when the repository or a directory is not there. */
int tnd_session_dir_open(const char *repo, const char *id);

/* Create a new session directory under repo/.tandem/sessions/. NULL with
 * the error set. */
tnd_session *tnd_session_new(const char *repo);

/* A new session id (YYYYMMDD-HHMMSS-HEX, the UTC time and random
 * hexadecimal digits) into out, of size at least 32. */
void tnd_session_make_id(char *out, size_t size);

/* As tnd_session_new, under id (tnd_session_id_valid), which a client
 * proposed. A directory of that id there already is taken only when its
 * journal is missing or empty (a server killed while it made the
 * session, before its task was journaled), and only when it is this
 * user's and nobody else may write in it: else NULL with the error
 * set, naming it. */
tnd_session *tnd_session_new_as(const char *repo, const char *id);

/* Random bytes in a session id (written as hex after the UTC time). */
#define TND_SESSION_ID_RANDOM_BYTES 4

/* Open an existing session of repo by its id, or by a part of it that
 * only one id has: a prefix, else a suffix (the random part people copy
 * from a message), else any substring; the first of these kinds that any
 * id matches decides. NULL with an error that says what matched: none
 * ("no session matches 'x' in REPO") or several (listing them) — both
 * TND_ECONFIG-worthy. */
tnd_session *tnd_session_open(const char *repo, const char *part);

/* The session ids of repo, oldest first, NULL-terminated; free with
 * tnd_str_list_free. An empty list when there are none, or when
 * tnd_session_check_home refuses (warned). Only directories count, not
 * links to them. */
char **tnd_session_list(const char *repo);

/* How long tnd_session_lock waits for a lock this process let go of
 * that a child forked meanwhile still holds (until its exec). */
#define TND_SESSION_OWN_LOCK_WAIT_MS 10000

/* Take the session's lock for as long as it is open: only one tandem
 * works on a session at a time. -1 with an error naming the holder's pid
 * when another process has it. */
int tnd_session_lock(tnd_session *self);

/* The lock of the session in dir, taken as tnd_session_lock takes it,
 * by a caller that holds a session before it opens it (tandem serve, for
 * a session it has queued: unlocked, a queued session read as
 * interrupted, and a prune removed it before it ran). Its descriptor,
 * or -1 with the error set. */
int tnd_session_lock_dir(const char *dir);

/* The session's lock taken out of it: the descriptor that holds it (the
 * caller's to close), or -1 when the session is not locked. */
int tnd_session_take_lock(tnd_session *self);

/* The session holds its lock through fd, a descriptor of its lock file
 * that holds it (tnd_session_lock_dir, tnd_session_take_lock), and
 * closes it with the session. */
void tnd_session_adopt_lock(tnd_session *self, int fd);

/* Say in the lock file held through fd (tnd_session_lock_dir) whether
 * its holder has queued the session (tandem serve, until a slot is free)
 * or runs it: what `tandem sessions` tells apart (tnd_session_queued). */
void tnd_session_lock_queued(int fd, bool queued);

/* True when some live process holds the lock of the session in dir and
 * says it has queued it (tnd_session_lock_queued). */
bool tnd_session_queued(const char *dir);

/* True when some live process holds the lock of the session in dir.
 * Neither this nor tnd_session_lock follows a symbolic link or opens
 * anything but a regular file (a FIFO there hung every reader). */
bool tnd_session_locked(const char *dir);

/* Free (the files stay; the lock is released). Sets *self_p to NULL;
 * safe on NULL. */
void tnd_session_destroy(tnd_session **self_p);

/* "20261122-014455-3fa2": time of creation plus randomness. Borrowed. */
const char *tnd_session_id(const tnd_session *self);

/* Absolute path of the session directory. Borrowed. */
const char *tnd_session_dir(const tnd_session *self);

/* How well id matches part, what a person typed of it: 0 not at all, 1
 * a part of it (the start, the random end, anything inside), 2 the whole
 * id. The best kind any id matches decides; two ids of the same kind are
 * ambiguous. */
int tnd_session_match(const char *id, const char *part);

/* Whether name is a session id as tandem makes them: YYYYMMDD-HHMMSS-
 * and 8 lowercase hex digits (4 from older tandems). A directory of any
 * other name under .tandem/sessions is no session: prune removed one
 * (a user's notes) as an unreadable session. */
bool tnd_session_id_valid(const char *name);

/* The directory session id has, or would have, in repo:
 * REPO/.tandem/sessions/ID. Caller frees. */
char *tnd_session_dir_of(const char *repo, const char *id);

/* The path of a file in the session directory. Caller frees. */
char *tnd_session_path(const tnd_session *self, const char *name);

/* The path of a session file relative to the repository root
 * (".tandem/sessions/ID/NAME"), for reports. Caller frees. */
char *tnd_session_relpath(const tnd_session *self, const char *name);

/* Write a file of the session atomically and durably (fsync'd). */
int tnd_session_write(tnd_session *self, const char *name, const char *data,
                      size_t len);

/* Write a view of the session: atomically, not fsync'd (a view is
 * rebuilt from the journal; see tnd_fs_write_replace). */
int tnd_session_write_view(tnd_session *self, const char *name,
                           const char *data, size_t len);

/* As tnd_session_write_view, for a view whose every write differs from
 * the last (now.json): not compared with the file first
 * (tnd_fs_write_swap). */
int tnd_session_write_fresh(tnd_session *self, const char *name,
                            const char *data, size_t len);

#endif
