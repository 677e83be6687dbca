/* tnd_trust - whether anyone but this process's user, and root, can
 * change what a path names.
 *
 * A process that acts in a directory somebody else named (tandem serve,
 * in a repository a client sent) and then reads and writes below it by
 * path is safe only when no other local user can move a directory on
 * the way or put a link where it writes: else they lead its writes into
 * a place of their choosing. These checks say whether that holds, one
 * directory at a time, each opened from the one above it through no
 * link:
 *
 *   - every directory on the way belongs to root or to this user;
 *   - none of them may be written in by others: a directory others may
 *     write in is allowed above the last one only when it is sticky
 *     (as /tmp: others can add names there, not move this user's);
 *   - a group may write in one only when the group is this user's own
 *     (its effective group, named as the user is, with no other member
 *     listed) and no access list (POSIX ACL) may grant more: Debian's
 *     user private groups with a umask of 002. A shared primary group
 *     ("users") is not: the group database does not list who has it.
 *
 * Left out: another account whose primary group is this user's private
 * group (not how user private groups are made), and what root does. */
#ifndef TND_TRUST_H
#define TND_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>

/* Whom a directory may belong to. */
typedef struct tnd_trust_who {
    unsigned uid;       /* the user acting: its directories are trusted */
    unsigned gid;       /* its group */
    bool private_group; /* gid is named as uid's account and lists no
                           other member */
} tnd_trust_who;

/* This process's: effective uid and gid, and whether the group is its
 * own (thread-safe). */
void tnd_trust_who_self(tnd_trust_who *who);

/* Whether st, the status of the directory path, is one only who and
 * root can change. last: the directory acted in itself, which nobody
 * else may write in even when sticky. acl: whether path has an access
 * list beyond its mode. 0, or -1 with the error naming path, what is
 * wrong and how to mend it. */
int tnd_trust_dir(const char *path, const struct stat *st, bool last, bool acl,
                  const tnd_trust_who *who);

/* Whether path (absolute) and every directory above it pass
 * tnd_trust_dir for this process, each opened through no symbolic link.
 * 0, or -1 with the error set (a link on the way is named, with its
 * real path to use instead). */
int tnd_trust_path(const char *path);

#endif
