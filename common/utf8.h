/* tnd_utf8 - text that is valid UTF-8, whatever bytes came in.
 *
 * Models' APIs take JSON, and JSON is UTF-8: one byte of Latin-1 in a
 * source file or a test's output, pasted into a prompt, makes the whole
 * request invalid (an API refuses it, a `command` program may choke).
 * Everything tandem sends or writes as text passes through here: invalid
 * bytes become U+FFFD and are counted, so the text stays readable and the
 * count says what was lost. Validity follows RFC 3629 (no overlong forms,
 * no surrogates, nothing above U+10FFFF). */
#ifndef TND_UTF8_H
#define TND_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The replacement character U+FFFD as UTF-8. */
#define TND_UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Length of the longest prefix of s[0..len) that is valid UTF-8 and holds
 * no NUL byte; len when all of it is. */
size_t tnd_utf8_valid_len(const char *s, size_t len);

/* True when s[0..len) is valid UTF-8 without a NUL byte. */
bool tnd_utf8_valid(const char *s, size_t len);

/* A NUL-terminated copy of s[0..len) in which every invalid sequence
 * (and every NUL byte) is replaced by one U+FFFD, following Unicode's
 * "maximal subpart" practice: a truncated sequence is one replacement, a
 * stray byte is one. *replaced (may be NULL) is set to the number of
 * input bytes replaced. Caller frees. */
char *tnd_utf8_clean(const char *s, size_t len, size_t *replaced);

/* In place for a NUL-terminated heap string: *s is replaced by a clean
 * copy when it holds anything invalid (and freed); the number of bytes
 * replaced is returned. NULL and *s NULL are left alone (0). */
size_t tnd_utf8_clean_inplace(char **s);

/* n, or less so that s[0..n) does not end inside a UTF-8 sequence: a
 * lead byte near the end whose sequence would need bytes past n is left
 * out with what follows it. Looks at the last three bytes only. */
size_t tnd_utf8_whole(const char *s, size_t n);

/* True when s[0..len) looks like data rather than text: it holds a NUL
 * byte, or more than one byte in ten is not valid UTF-8 or is a control
 * character other than tab, newline, carriage return, form feed and
 * escape (terminal colours). A text with a few stray bytes (a Latin-1
 * comment) is text; an image, an archive or an object file is not. */
bool tnd_utf8_is_binary(const char *s, size_t len);

#endif
