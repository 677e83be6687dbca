/* CurveZMQ key files and the authorized-keys list (see curve.h). */
#include "proto/curve.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"

#define KEY_FILE_MAX  4096
#define LIST_FILE_MAX (1 << 20)

static const char z85_chars[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}"
                                "@%$#";

static const char *const role_names[] = {"coder", "reviewer", "client",
                                         "person"};
#define NROLES    (sizeof(role_names) / sizeof(role_names[0]))
#define ROLE_LIST "coder, reviewer, client, person"

int tnd_curve_generate(tnd_curve_pair *out)
{
    memset(out, 0, sizeof(*out));
    if (!zmq_has("curve"))
        return tnd_error_set("this libzmq was built without CURVE; install "
                             "Debian's libzmq5, which has it");
    if (zmq_curve_keypair(out->public_key, out->secret_key) < 0)
        return tnd_error_set("cannot make a CURVE key pair: %s",
                             zmq_strerror(zmq_errno()));
    return 0;
}

bool tnd_curve_is_key(const char *text)
{
    unsigned char raw[32];

    if (!text || strlen(text) != TND_CURVE_Z85_LEN ||
        strspn(text, z85_chars) != TND_CURVE_Z85_LEN)
        return false;
    return zmq_z85_decode(raw, text) != NULL;
}

static bool name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > 64 || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
            return false;
    return true;
}

static int write_new(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    size_t len = strlen(text);
    ssize_t n;

    if (fd < 0)
        return errno == EEXIST
                   ? tnd_error_set("%s already exists; remove it or choose "
                                   "another name",
                                   path)
                   : tnd_error_sys("cannot create %s", path);
    n = write(fd, text, len);
    if (n != (ssize_t)len || fsync(fd) < 0) {
        tnd_error_sys("cannot write %s", path);
        close(fd);
        unlink(path);
        return -1;
    }
    if (close(fd) < 0) {
        tnd_error_sys("cannot write %s", path);
        unlink(path);
        return -1;
    }
    return 0;
}

int tnd_curve_write(const char *dir, const char *name,
                    const tnd_curve_pair *pair)
{
    char *key_path, *pub_path, *key_text, *pub_text;
    int error = -1;

    if (!name_ok(name))
        return tnd_error_set("'%s' is not a key name: use letters, digits, "
                             "'-', '_' and '.' (not first)",
                             name);
    key_path = tnd_xasprintf("%s/%s.key", dir, name);
    pub_path = tnd_xasprintf("%s/%s.pub", dir, name);
    key_text = tnd_xasprintf("# tandem CURVE key pair \"%s\": keep this file "
                             "secret\npublic-key = %s\nsecret-key = %s\n",
                             name, pair->public_key, pair->secret_key);
    pub_text = tnd_xasprintf("# tandem CURVE public key \"%s\"\n"
                             "public-key = %s\n",
                             name, pair->public_key);
    if (write_new(pub_path, pub_text, 0644) == 0) {
        if (write_new(key_path, key_text, 0600) == 0)
            error = 0;
        else
            unlink(pub_path);
    }
    tnd_str_free_secret(&key_text);
    free(pub_text);
    free(key_path);
    free(pub_path);
    return error;
}

/* The value of "name = value" in a key file, copied into out (41 bytes);
 * false when the file has no such line. */
static bool find_value(const char *text, const char *name,
                       char out[TND_CURVE_Z85_LEN + 1])
{
    size_t n = strlen(name);

    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, name, n) == 0) {
            p += n;
            p += strspn(p, " \t");
            if (*p == '=') {
                size_t vlen;
                p++;
                p += strspn(p, " \t");
                vlen = (size_t)(line + len - p);
                while (vlen > 0 && strchr(" \t\r", p[vlen - 1]))
                    vlen--;
                if (vlen == TND_CURVE_Z85_LEN) {
                    memcpy(out, p, vlen);
                    out[vlen] = '\0';
                    return true;
                }
                return false;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

int tnd_curve_read_pair(tnd_curve_pair *out, const char *path)
{
    struct stat st;
    char *text = NULL, derived[TND_CURVE_Z85_LEN + 1];
    int error = 0;

    memset(out, 0, sizeof(*out));
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tnd_error_set("%s is not a file: give a NAME.key (tandem "
                             "keys generate writes one)",
                             path);
    /* what it holds first: a NAME.pub given for the NAME.key was told to
     * chmod 600 itself, and then that it was no key pair */
    if (tnd_fs_read(&text, NULL, path, KEY_FILE_MAX) < 0)
        return -1;
    if (!find_value(text, "secret-key", out->secret_key) &&
        find_value(text, "public-key", out->public_key))
        error = tnd_error_set("%s holds a public key only (a NAME.pub): give "
                              "the NAME.key made with it, which holds the "
                              "secret key too",
                              path);
    else if (st.st_mode & 077)
        error = tnd_error_set("%s can be read by others (mode %03o); a "
                              "secret key must be yours alone: chmod 600 %s",
                              path, (unsigned)(st.st_mode & 0777), path);
    else if (!find_value(text, "public-key", out->public_key) ||
             !find_value(text, "secret-key", out->secret_key) ||
             !tnd_curve_is_key(out->public_key) ||
             !tnd_curve_is_key(out->secret_key))
        error = tnd_error_set("%s is not a tandem key pair (lines "
                              "'public-key = KEY' and 'secret-key = KEY'; "
                              "tandem keys generate writes one)",
                              path);
    /* a public key that is not the secret one's fails every handshake
     * without a word: the peer cannot open what the pair sends, and
     * drops the connection */
    else if (zmq_curve_public(derived, out->secret_key) < 0 ||
             strcmp(derived, out->public_key) != 0)
        error = tnd_error_set("%s: its public-key is not the one of its "
                              "secret-key (the file was edited, or holds "
                              "lines of two pairs); tandem keys generate "
                              "writes a new pair",
                              path);
    tnd_str_free_secret(&text);
    if (error < 0)
        memset(out, 0, sizeof(*out));
    return error;
}

int tnd_curve_read_public(char out[TND_CURVE_Z85_LEN + 1], const char *spec)
{
    char *text = NULL;
    int error = 0;

    out[0] = '\0';
    if (tnd_curve_is_key(spec)) {
        memcpy(out, spec, TND_CURVE_Z85_LEN + 1);
        return 0;
    }
    if (tnd_fs_read(&text, NULL, spec, KEY_FILE_MAX) < 0)
        return -1;
    if (!find_value(text, "public-key", out) || !tnd_curve_is_key(out)) {
        out[0] = '\0';
        error = tnd_error_set("%s holds no public key (a line "
                              "'public-key = KEY'; tandem keys generate "
                              "writes NAME.pub)",
                              spec);
    }
    tnd_str_free_secret(&text);
    return error;
}

const char *tnd_curve_fingerprint(const char *public_key)
{
    static _Thread_local char fp[16];

    snprintf(fp, sizeof(fp), "%.12s", public_key ? public_key : "");
    return fp;
}

void tnd_curve_roles_format(char *out, size_t size, unsigned roles)
{
    size_t len = 0;

    if (size == 0)
        return;
    out[0] = '\0';
    for (size_t i = 0; i < NROLES; i++)
        if (roles & (1u << i)) {
            int n = snprintf(out + len, size - len, "%s%s", len ? "," : "",
                             role_names[i]);
            if (n < 0 || (size_t)n >= size - len)
                return;
            len += (size_t)n;
        }
}

unsigned tnd_curve_roles_parse(const char *text)
{
    unsigned roles = 0;
    const char *p = text;

    while (*p) {
        size_t n = strcspn(p, ",");
        size_t i;
        for (i = 0; i < NROLES; i++)
            if (strlen(role_names[i]) == n && strncmp(p, role_names[i], n) == 0)
                break;
        if (i == NROLES) {
            tnd_error_set("'%.*s' is not a role (" ROLE_LIST ")",
                          (int)(n > 40 ? 40 : n), p);
            return 0;
        }
        roles |= 1u << i;
        p += n;
        if (*p == ',')
            p++;
    }
    if (!roles)
        tnd_error_set("no role given (" ROLE_LIST ")");
    return roles;
}

/* Split the next blank-separated word off *p, NUL-terminating it. */
static char *word(char **p)
{
    char *w;

    *p += strspn(*p, " \t");
    if (!**p)
        return NULL;
    w = *p;
    *p += strcspn(*p, " \t");
    if (**p)
        *(*p)++ = '\0';
    return w;
}

/* Whether only its owner (the user, or root) can change the list: a key
 * another user adds is a coder or a reviewer that approves changes. As
 * sshd's StrictModes: the file written by no one else, nor replaced in
 * a directory others may write (unless sticky, as /tmp). -1 with the
 * error naming the file and the fix. */
static int only_ours(const char *path)
{
    struct stat st, dst;
    char *real = tnd_fs_realpath(path), *dir;
    int rc = 0;

    if (!real || stat(real, &st) < 0) {
        tnd_error_clear();
        free(real);
        return 0; /* the read says what is wrong */
    }
    dir = tnd_fs_dirname(real);
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        rc = tnd_error_set("%s belongs to another user (uid %u): only you "
                           "may say which keys are let in; copy it to a "
                           "file of yours",
                           path, (unsigned)st.st_uid);
    } else if (st.st_mode & 022) {
        rc = tnd_error_set("%s can be written by others (mode %03o): a key "
                           "they add would be let in as a coder or a "
                           "reviewer; chmod go-w %s",
                           path, (unsigned)(st.st_mode & 0777), path);
    } else {
        /* the file where it really is (a link from a private directory
         * led past the check), and every directory above it, as sshd
         * walks them: each the user's or root's, and not open to others
         * unless sticky */
        for (;;) {
            char *up;
            if (stat(dir, &dst) == 0 &&
                ((dst.st_uid != geteuid() && dst.st_uid != 0) ||
                 ((dst.st_mode & 022) && !(dst.st_mode & S_ISVTX)))) {
                rc = tnd_error_set(
                    "%s is in %s, which %s (mode %03o): they could put "
                    "another list in its place; keep the list in a "
                    "directory only you can change",
                    path, dir,
                    dst.st_uid != geteuid() && dst.st_uid != 0
                        ? "another user owns"
                        : "others can write",
                    (unsigned)(dst.st_mode & 0777));
                break;
            }
            if (strcmp(dir, "/") == 0)
                break;
            up = tnd_fs_dirname(dir);
            free(dir);
            dir = up;
        }
    }
    free(dir);
    free(real);
    return rc;
}

int tnd_curve_list_load(tnd_curve_list *out, const char *path)
{
    char *text = NULL, *line, *next;
    size_t alloc = 0, lineno = 0;

    memset(out, 0, sizeof(*out));
    if (only_ours(path) < 0 ||
        tnd_fs_read(&text, NULL, path, LIST_FILE_MAX) < 0)
        return -1;
    for (line = text; line; line = next) {
        char *roles_text, *key, *name, *next_word;
        tnd_curve_entry *e;
        unsigned roles;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        /* '#' begins a comment as the first word or after the key (a
         * Z85 key may hold '#' itself) */
        line[strcspn(line, "\r")] = '\0';
        if (!(roles_text = word(&line)) || roles_text[0] == '#')
            continue;
        key = word(&line);
        name = word(&line);
        if (name && name[0] == '#') {
            name = NULL;
            line += strlen(line);
        }
        if (!(roles = tnd_curve_roles_parse(roles_text))) {
            tnd_error_prefix("%s:%zu", path, lineno);
            goto fail;
        }
        if (!key || !tnd_curve_is_key(key)) {
            tnd_error_set("%s:%zu: expected ROLES PUBLIC-KEY [NAME], with "
                          "a 40-character Z85 public key (a NAME.pub file "
                          "holds one)",
                          path, lineno);
            goto fail;
        }
        if ((next_word = word(&line)) && next_word[0] != '#') {
            tnd_error_set("%s:%zu: more than ROLES PUBLIC-KEY NAME on the "
                          "line",
                          path, lineno);
            goto fail;
        }
        if (out->n >= TND_CURVE_LIST_MAX) {
            tnd_error_set("%s: more than %d keys", path, TND_CURVE_LIST_MAX);
            goto fail;
        }
        TND_GROW(out->entries, alloc, out->n + 1);
        e = &out->entries[out->n++];
        memset(e, 0, sizeof(*e));
        memcpy(e->public_key, key, TND_CURVE_Z85_LEN + 1);
        e->roles = roles;
        snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
    }
    free(text);
    return 0;
fail:
    free(text);
    tnd_curve_list_clear(out);
    return -1;
}

unsigned tnd_curve_list_roles(const tnd_curve_list *list,
                              const unsigned char key[32], const char **name)
{
    char z85[TND_CURVE_Z85_LEN + 1];
    unsigned roles = 0;

    if (name)
        *name = "";
    if (!zmq_z85_encode(z85, key, 32))
        return 0;
    /* every line's roles: the orchestrator's own key, added for its local
     * agents after the file's lines, was only what a line of the file
     * gave it (`client`, to submit with it), and its agents were refused
     * for ever */
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->entries[i].public_key, z85) == 0) {
            if (name && !roles)
                *name = list->entries[i].name;
            roles |= list->entries[i].roles;
        }
    return roles;
}

void tnd_curve_list_clear(tnd_curve_list *list)
{
    free(list->entries);
    memset(list, 0, sizeof(*list));
}
