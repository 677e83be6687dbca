/* tnd_trash - trees removed on a thread of their own.
 *
 * Removing a tree costs a system call an entry, and a build can make one
 * 30,000 directories deep in a second: its removal took 10 to 20 s, and
 * `tandem run`'s loop, which resets the workspace between attempts on
 * the thread that keeps the broker's heartbeats, went silent that long,
 * so every agent took the broker for dead and reconnected (and a request
 * out then was sent again, and paid again). A trash is a directory on
 * the same filesystem: what is put in it is renamed there (one system
 * call, whatever its size) and removed by the trash's own thread,
 * started with the first entry.
 *
 * The trash belongs to whoever made it, inside a directory of theirs (a
 * run's runtime directory): a process that dies leaves it where the
 * directory's own cleanup removes it, and nothing else is ever
 * removed. */
#ifndef TND_TRASH_H
#define TND_TRASH_H

typedef struct tnd_trash tnd_trash;

/* A trash at dir (made now, mode 0700: it must not exist; its parent
 * must, on the filesystem of what will be put in it). NULL with the
 * error set. */
tnd_trash *tnd_trash_new(const char *dir);

/* The trash's directory. Borrowed until tnd_trash_destroy. */
const char *tnd_trash_path(const tnd_trash *self);

/* Move name, in the directory open as dirfd, into the trash (a rename:
 * no symlink is followed, nothing is read). It is gone from there when
 * this returns, and removed later on the trash's thread. -1 with the
 * error set when it cannot be moved (another filesystem, no permission):
 * the caller removes it itself. */
int tnd_trash_put_at(tnd_trash *self, int dirfd, const char *name);

/* Wait until everything put in so far is removed (or could not be: the
 * thread logs why and goes on). For tests and a caller that must know. */
void tnd_trash_drain(tnd_trash *self);

/* Stop the thread: a removal under way stops between two entries, and
 * whatever is put in from now on stays in the trash until
 * tnd_trash_destroy. Returns soon, whatever the trash holds: a run stops
 * it while its agents still need the broker's heartbeats, and removes
 * the rest once they are gone. */
void tnd_trash_stop(tnd_trash *self);

/* Stop, remove the trash's directory and what it still holds (on the
 * caller's thread), free. Sets *self_p to NULL; safe on NULL. */
void tnd_trash_destroy(tnd_trash **self_p);

#endif
