/* Who is at the keyboard (see user.h). */
#include "common/user.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/xalloc.h"

char *tnd_user_pick(const char *account, const char *env_user, unsigned uid)
{
    if (account && *account)
        return tnd_xstrdup(account);
    if (env_user && *env_user)
        return tnd_xstrdup(env_user);
    return tnd_xasprintf("%u", uid);
}

char *tnd_user_name(void)
{
    uid_t uid = geteuid();
    const struct passwd *pw = getpwuid(uid);

    return tnd_user_pick(pw ? pw->pw_name : NULL, getenv("USER"),
                         (unsigned)uid);
}

char *tnd_user_of_uid(unsigned uid)
{
    const struct passwd *pw = getpwuid((uid_t)uid);

    /* not $USER: that is this process's, not the other one's */
    return tnd_user_pick(pw ? pw->pw_name : NULL, NULL, uid);
}
