/* tnd_str - small string helpers the standard library lacks. */
#ifndef TND_STR_H
#define TND_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when s begins with prefix. */
bool tnd_str_starts_with(const char *s, const char *prefix);

/* True when s ends with suffix. */
bool tnd_str_ends_with(const char *s, const char *suffix);

/* True when the two strings are equal; NULL equals only NULL. */
bool tnd_str_eq(const char *a, const char *b);

/* Free a NULL-terminated list of strings and the list, and set *list_p
 * to NULL. Safe on a NULL list. Every char ** list tandem builds (file
 * lists, argv, environments, names from the config) is freed here. */
void tnd_str_list_free(char ***list_p);

/* The words of s, split at spaces and tabs, as a NULL-terminated list
 * (free with tnd_str_list_free); an empty list when s has none. No
 * quoting: for text already known to hold plain words. */
char **tnd_str_split_words(const char *s);

/* Overwrite a secret (an API key, a header carrying one) with zeros, free
 * it and set *secret_p to NULL, so the key does not stay in freed memory.
 * The zeroing cannot be optimised away. Safe on NULL. */
void tnd_str_free_secret(char **secret_p);

/* True when the NULL-terminated list (may be NULL) holds s. */
bool tnd_str_list_has(const char *const *list, const char *s);

/* Trim ASCII whitespace at both ends, in place; returns s. */
char *tnd_str_trim(char *s);

/* 64-bit FNV-1a hash of len bytes, continuing from seed (use
 * TND_FNV_SEED to start). */
#define TND_FNV_SEED UINT64_C(14695981039346656037)
uint64_t tnd_str_hash(uint64_t seed, const void *data, size_t len);

/* Count the lines of a text: newline characters, plus one for a last
 * line without a newline. */
size_t tnd_str_count_lines(const char *s, size_t len);

/* Where line (1-based) begins in s[0..len), into *off: the line after
 * the last one is s's end. False when s has fewer lines. */
bool tnd_str_line_start(const char *s, size_t len, long line, size_t *off);

/* True when the first len bytes hold a NUL (how we tell binary files). */
bool tnd_str_is_binary(const char *s, size_t len);

/* Copy of s cut to at most max bytes by leaving out its middle: a third
 * of the room for the head, the rest for the tail (failures are usually
 * reported at the end), cut on UTF-8 boundaries, joined by a line
 * "[... N bytes left out ...]" that counts against max. A copy of s when
 * it fits. Caller frees. */
char *tnd_str_cut_middle(const char *s, size_t max);

/* Copy of s with control characters other than \n and \t replaced by
 * '?' (C1 controls, U+0080 to U+009F, too: each of their two bytes), and
 * invalid UTF-8 by U+FFFD, cut to at most max bytes (on a UTF-8
 * boundary) with "..." appended when cut. For putting text from outside
 * on a terminal or into a one-line message. Caller frees. */
char *tnd_str_printable(const char *s, size_t max);

/* As tnd_str_printable, with \n and \t replaced by '?' too: outside text
 * quoted inside a one-line message. Caller frees. */
char *tnd_str_one_line(const char *s, size_t max);

/* s as one word for a POSIX shell, for a command a person copies: as it
 * is when it holds only [A-Za-z0-9_@%+=:,./-], else in single quotes
 * (a ' as '\''). "tandem resume --repo /my project ID" ran with two
 * words for one. Caller frees. */
char *tnd_str_shell_word(const char *s);

/* A path as git writes it in a diff, s[0..n): one in double quotes is
 * C-unquoted (\\, \", \a \b \f \n \r \t \v and \ooo octal bytes: how git
 * writes names with quotes, backslashes, control or non-ASCII bytes);
 * any other is copied. A quoted name whose escapes are not git's (or
 * that would hold a NUL) is copied as it is. */
char *tnd_str_git_unquote(const char *s, size_t n);

#endif
