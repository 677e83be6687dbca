/* tnd_user - who is at the keyboard, as the system knows them.
 *
 * A person's answer to an escalation is journaled with who gave it: the
 * account name of the effective user, else $USER, else the uid as a
 * number (a container's uid with no passwd entry still names someone). */
#ifndef TND_USER_H
#define TND_USER_H

/* The name to record for account: account (from the password database,
 * may be NULL), else env_user when set and not empty, else uid in
 * decimal. Caller frees. */
char *tnd_user_pick(const char *account, const char *env_user, unsigned uid);

/* The effective user's name (tnd_user_pick of getpwuid(geteuid()),
 * $USER and the uid). Caller frees. */
char *tnd_user_name(void);

/* The account name of uid (another process's, as the kernel reported
 * it), else uid in decimal. Caller frees. */
char *tnd_user_of_uid(unsigned uid);

#endif
