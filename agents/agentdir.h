/* tnd_agentdir - an agent's private runtime directory: made at start,
 * removed at exit, and reclaimed by the next agent of its role when its
 * owner died without removing it (SIGKILL, a crash).
 *
 * The directory is $XDG_RUNTIME_DIR/tandem-ROLE-XXXXXX when
 * $XDG_RUNTIME_DIR is a usable directory of the user's, else
 * $TMPDIR/tandem-UID/ROLE-XXXXXX (mode 0700). Its owner holds an
 * exclusive flock on the file "lock" inside for as long as it lives; the
 * kernel drops the lock when the process dies, however it dies. That
 * lock, not a pid (pids are reused), is the proof an owner is gone: a
 * starting agent removes the directories of its role whose lock it can
 * take, and leaves alone every one it cannot judge (no lock file, not a
 * directory of the user's, a symbolic link, a name that is not an
 * agent's). The lock file is made and locked under another name and
 * renamed into place, so no directory is ever seen with a "lock" its
 * owner does not hold yet. */
#ifndef TND_AGENTDIR_H
#define TND_AGENTDIR_H

typedef struct tnd_agentdir tnd_agentdir;

/* Most directories one start reclaims: the rest wait for the next. */
#define TND_AGENTDIR_RECLAIM_MAX 16

/* Reclaim the directories of role's agents that are gone (see above;
 * said in the log), then make this agent's own, locked. role is a short
 * name such as "reviewer". NULL with the error set. */
tnd_agentdir *tnd_agentdir_new(const char *role);

/* Remove the directory and everything in it (the lock last, so a
 * removal cut short is still judged by it), release the lock and free;
 * sets *self_p to NULL; safe on NULL. */
void tnd_agentdir_destroy(tnd_agentdir **self_p);

/* The directory (absolute, symlink-free). Borrowed. */
const char *tnd_agentdir_path(const tnd_agentdir *self);

#endif
