/* Whether anyone but this user can change what a path names (see
 * trust.h). */
#include "common/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/error.h"
#include "common/xalloc.h"

/* The largest buffer getpwuid_r and getgrgid_r are given: a group of
 * more members than this is not this user's own. */
#define ENTRY_MAX (1024 * 1024)

/* The account name of uid, or NULL when it has none. Caller frees. */
static char *account_of(uid_t uid)
{
    struct passwd pw, *found = NULL;
    char *name = NULL;
    size_t size = 4096;
    char *buf = tnd_xmalloc(size);
    int rc;

    while ((rc = getpwuid_r(uid, &pw, buf, size, &found)) == ERANGE &&
           size < ENTRY_MAX) {
        size *= 4;
        buf = tnd_xrealloc(buf, size, 1);
    }
    if (rc == 0 && found)
        name = tnd_xstrdup(pw.pw_name);
    free(buf);
    return name;
}

/* Whether the group gid is name's private group: named name, as a user
 * private group is, and listing no member but name. A group the system
 * does not know, or cannot read, is nobody's own; so is a shared primary
 * group ("users"), whose members the group database does not list. */
static bool private_to(gid_t gid, const char *name)
{
    struct group gr, *found = NULL;
    size_t size = 4096;
    char *buf = tnd_xmalloc(size);
    bool own;
    int rc;

    while ((rc = getgrgid_r(gid, &gr, buf, size, &found)) == ERANGE &&
           size < ENTRY_MAX) {
        size *= 4;
        buf = tnd_xrealloc(buf, size, 1);
    }
    own = rc == 0 && found && name && strcmp(gr.gr_name, name) == 0;
    for (char **m = own ? gr.gr_mem : NULL; m && *m; m++)
        if (strcmp(*m, name) != 0)
            own = false;
    free(buf);
    return own;
}

/* Whether this process's group is its own (a look at the password and
 * group databases, which may be remote: made only when it matters). */
static bool group_is_own(void)
{
    char *name = account_of(geteuid());
    bool own = private_to(getegid(), name);

    free(name);
    return own;
}

void tnd_trust_who_self(tnd_trust_who *who)
{
    who->uid = (unsigned)geteuid();
    who->gid = (unsigned)getegid();
    who->private_group = group_is_own();
}

int tnd_trust_dir(const char *path, const struct stat *st, bool last, bool acl,
                  const tnd_trust_who *who)
{
    unsigned mode = (unsigned)(st->st_mode & 07777);
    /* above the last directory, a sticky one keeps others from moving
     * what is this user's in it */
    bool shared = !last && (st->st_mode & S_ISVTX);

    if (S_ISLNK(st->st_mode))
        return tnd_error_set("%s is a symbolic link: name the directory by "
                             "its real path",
                             path);
    if (!S_ISDIR(st->st_mode))
        return tnd_error_set("%s is not a directory", path);
    if (st->st_uid != 0 && st->st_uid != who->uid)
        return tnd_error_set("%s belongs to uid %u, not to uid %u or root, "
                             "and its owner can move what is in it",
                             path, (unsigned)st->st_uid, who->uid);
    if (shared)
        return 0;
    if (st->st_mode & S_IWOTH)
        return tnd_error_set("others may write in %s (mode %04o): chmod "
                             "o-w it",
                             path, mode);
    if ((st->st_mode & S_IWGRP) &&
        (st->st_gid != who->gid || !who->private_group))
        return tnd_error_set("group %u may write in %s (mode %04o), and it "
                             "is not uid %u's own group: chmod g-w it",
                             (unsigned)st->st_gid, path, mode, who->uid);
    if ((st->st_mode & S_IWGRP) && acl)
        return tnd_error_set("an access list (ACL) on %s may let others "
                             "write in it (getfacl %s): chmod g-w it",
                             path, path);
    return 0;
}

/* Whether path has an access list beyond its mode. */
static bool has_acl(const char *path)
{
    return lgetxattr(path, "system.posix_acl_access", NULL, 0) > 0;
}

/* One directory of the walk: name in at, path its whole path so far.
 * Its descriptor, or -1 with the error set. */
static int step(int at, const char *name, const char *path, bool last,
                tnd_trust_who *who, bool *looked)
{
    struct stat st;
    int fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return tnd_error_sys("cannot open %s", path);
    if (fstat(fd, &st) < 0) {
        close(fd);
        return tnd_error_sys("cannot read %s", path);
    }
    if ((st.st_mode & S_IWGRP) && st.st_gid == who->gid && !*looked) {
        who->private_group = group_is_own();
        *looked = true;
    }
    if (tnd_trust_dir(path, &st, last, (st.st_mode & S_IWGRP) && has_acl(path),
                      who) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int tnd_trust_path(const char *path)
{
    tnd_trust_who who;
    bool looked = false;
    size_t len = strlen(path);
    char *so_far = tnd_xmalloc(len + 2);
    const char *p = path;
    int fd, rc = 0;

    if (path[0] != '/') {
        free(so_far);
        return tnd_error_set("%s is not an absolute path", path);
    }
    /* the group looked up only for a directory it may write in */
    who.uid = (unsigned)geteuid();
    who.gid = (unsigned)getegid();
    who.private_group = false;
    while (*p == '/')
        p++;
    strcpy(so_far, "/");
    if ((fd = step(AT_FDCWD, "/", so_far, !*p, &who, &looked)) < 0) {
        free(so_far);
        return -1;
    }
    while (*p) {
        size_t n = strcspn(p, "/");
        char *name = tnd_xstrndup(p, n);
        int next;

        if (so_far[1])
            strcat(so_far, "/");
        strncat(so_far, p, n);
        p += n;
        while (*p == '/')
            p++;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            next = tnd_error_set("%s: a path with '.' or '..' in it is not "
                                 "taken; name the directory by its real path",
                                 path);
        else
            next = step(fd, name, so_far, !*p, &who, &looked);
        free(name);
        close(fd);
        if ((fd = next) < 0) {
            rc = -1;
            break;
        }
    }
    if (fd >= 0)
        close(fd);
    free(so_far);
    return rc;
}
