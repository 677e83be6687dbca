/* tnd_curve - CurveZMQ keys for tcp:// endpoints, and who may do what.
 *
 * A key pair is two Z85 texts of 40 characters (ZeroMQ RFC 32). tandem
 * keeps a pair in NAME.key (both keys; mode 0600, and a file others can
 * read is refused) and the public half in NAME.pub:
 *
 *     # tandem CURVE key pair "NAME": keep this file secret
 *     public-key = rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7
 *     secret-key = JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6
 *
 * The orchestrator admits a peer only if its public key is listed in an
 * authorized-keys file, one key a line with the roles it holds:
 *
 *     # ROLES  PUBLIC-KEY  [NAME]
 *     coder,reviewer  rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7  build-host
 *     client          Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID  ci
 *
 * '#' begins a comment as a line's first word or after the key (a Z85
 * key may itself hold '#'). Roles: `coder` and `reviewer` may register as
 * those services (a reviewer also as reviewer.N), `client` may submit
 * tasks, `person` may answer a session that waits for a person (approve
 * it past the gate, among others); either may follow sessions and ask
 * the server's status. */
#ifndef TND_CURVE_H
#define TND_CURVE_H

#include <stdbool.h>
#include <stddef.h>

#define TND_CURVE_Z85_LEN 40

typedef struct tnd_curve_pair {
    char public_key[TND_CURVE_Z85_LEN + 1];
    char secret_key[TND_CURVE_Z85_LEN + 1];
} tnd_curve_pair;

typedef enum tnd_curve_role {
    TND_CURVE_CODER = 1 << 0,
    TND_CURVE_REVIEWER = 1 << 1,
    TND_CURVE_CLIENT = 1 << 2,
    TND_CURVE_PERSON = 1 << 3,
} tnd_curve_role;

/* A fresh key pair. -1 with the error set when libzmq has no CURVE. */
int tnd_curve_generate(tnd_curve_pair *out);

/* Write dir/NAME.key (mode 0600, made with O_EXCL: an existing file is
 * an error naming it) and dir/NAME.pub (0644). name is letters, digits,
 * '-', '_' and '.', not starting with '.'. */
int tnd_curve_write(const char *dir, const char *name,
                    const tnd_curve_pair *pair);

/* Read a NAME.key file: both keys. A file group or others can read is
 * refused ("chmod 600 PATH"), as are a NAME.pub (said so), something
 * that is not a file, and a public key that is not the secret key's. */
int tnd_curve_read_pair(tnd_curve_pair *out, const char *path);

/* Read a public key from a NAME.pub or NAME.key file, or given as the
 * 40-character Z85 text itself. */
int tnd_curve_read_public(char out[TND_CURVE_Z85_LEN + 1], const char *spec);

/* Whether text is a Z85 key (40 characters of the Z85 alphabet that
 * decode to 32 bytes). */
bool tnd_curve_is_key(const char *text);

/* A short fingerprint of a public key for messages ("rq:rM>}U?@Ln"),
 * never the secret. Borrowed from a static buffer per thread. */
const char *tnd_curve_fingerprint(const char *public_key);

/* "coder,reviewer" from the bits, and back (0 with the error set for an
 * unknown or empty role list). The text form travels as the ZAP user id. */
void tnd_curve_roles_format(char *out, size_t size, unsigned roles);
unsigned tnd_curve_roles_parse(const char *text);

/* The authorized keys: who may connect, and in which roles. */
typedef struct tnd_curve_entry {
    char public_key[TND_CURVE_Z85_LEN + 1];
    unsigned roles;
    char name[64]; /* "" when the line gave none */
} tnd_curve_entry;

typedef struct tnd_curve_list {
    tnd_curve_entry *entries;
    size_t n;
} tnd_curve_list;

/* The most lines an authorized-keys file may hold. */
#define TND_CURVE_LIST_MAX 4096

/* Read an authorized-keys file (at most 1 MiB). Every error names the
 * file and line ("FILE:3: 'coders' is not a role (coder, reviewer,
 * client, person)"). A file another user owns or can write, or one in a
 * directory others can write (not sticky), is refused, naming the fix. */
int tnd_curve_list_load(tnd_curve_list *out, const char *path);

/* The roles of a binary (32-byte) public key, those of every line that
 * lists it (the name the first gives): 0 when it is not listed. */
unsigned tnd_curve_list_roles(const tnd_curve_list *list,
                              const unsigned char key[32], const char **name);

void tnd_curve_list_clear(tnd_curve_list *list);

#endif
