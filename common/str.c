/* String helpers (see str.h). */
#include "common/str.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/xalloc.h"

void tnd_str_list_free(char ***list_p)
{
    char **list = *list_p;

    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
    *list_p = NULL;
}

char **tnd_str_split_words(const char *s)
{
    char **words = tnd_xcalloc(strlen(s) / 2 + 2, sizeof(char *));
    size_t n = 0, len;

    for (;;) {
        s += strspn(s, " \t");
        if (!*s)
            break;
        len = strcspn(s, " \t");
        words[n++] = tnd_xstrndup(s, len);
        s += len;
    }
    words[n] = NULL;
    return words;
}

void tnd_str_free_secret(char **secret_p)
{
    if (*secret_p)
        explicit_bzero(*secret_p, strlen(*secret_p));
    free(*secret_p);
    *secret_p = NULL;
}

bool tnd_str_list_has(const char *const *list, const char *s)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

bool tnd_str_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool tnd_str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool tnd_str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

char *tnd_str_trim(char *s)
{
    size_t n = strlen(s), start = 0;

    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    while (start < n && isspace((unsigned char)s[start]))
        start++;
    memmove(s, s + start, n - start);
    s[n - start] = '\0';
    return s;
}

uint64_t tnd_str_hash(uint64_t seed, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = seed;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

size_t tnd_str_count_lines(const char *s, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++)
        if (s[i] == '\n')
            n++;
    if (len > 0 && s[len - 1] != '\n')
        n++;
    return n;
}

bool tnd_str_is_binary(const char *s, size_t len)
{
    return memchr(s, '\0', len) != NULL;
}

char *tnd_str_cut_middle(const char *text, size_t max)
{
    size_t n = strlen(text), head, tail, marker;

    if (n <= max)
        return tnd_xstrdup(text);
    /* the marker counts against max; n bounds the number it will show */
    marker = (size_t)snprintf(NULL, 0, "\n[... %zu bytes left out ...]\n", n);
    max = max > marker ? max - marker : 0;
    head = max / 3;
    tail = max - head;
    while (head > 0 && ((unsigned char)text[head] & 0xC0) == 0x80)
        head--;
    while (tail > 0 && ((unsigned char)text[n - tail] & 0xC0) == 0x80)
        tail--;
    return tnd_xasprintf("%.*s\n[... %zu bytes left out ...]\n%s", (int)head,
                         text, n - head - tail, text + n - tail);
}

char *tnd_str_printable(const char *s, size_t max)
{
    /* valid UTF-8 first: a stray byte 0x9B is CSI to a terminal in an
     * 8-bit locale */
    size_t given = strlen(s), plain = 0;
    char *clean, *out;
    size_t n, cut;

    /* printable ASCII as it is, whole: one copy (the views pass every
     * step's whole text here) */
    while (plain < given &&
           ((unsigned char)s[plain] >= 0x20 || s[plain] == '\n' ||
            s[plain] == '\t') &&
           (unsigned char)s[plain] < 0x7f)
        plain++;
    if (plain == given && given <= max)
        return tnd_xstrndup(s, given);
    clean = tnd_utf8_clean(s, given, NULL);
    n = strlen(clean);
    cut = n;

    s = clean;
    /* max is the given text's: a caller's "all of it" (its length + 1)
     * stays all of it, though each stray byte became three (a diff with
     * a Latin-1 line lost its end, the changed lines with it) */
    if (given > max && n > max) {
        cut = max;
        /* back up to the start of a UTF-8 sequence */
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
    }
    out = tnd_xmalloc(cut + 4);
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] =
            (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : (char)c;
        /* C1 controls, U+0080 to U+009F: xterm takes U+009B as CSI */
        if (c == 0xC2 && i + 1 < cut && (unsigned char)s[i + 1] >= 0x80 &&
            (unsigned char)s[i + 1] <= 0x9F) {
            out[i] = out[i + 1] = '?';
            i++;
        }
    }
    if (cut < n)
        memcpy(out + cut, "...", 4);
    else
        out[cut] = '\0';
    free(clean);
    return out;
}

char *tnd_str_one_line(const char *s, size_t max)
{
    char *out = tnd_str_printable(s, max);

    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = '?';
    return out;
}

char *tnd_str_git_unquote(const char *s, size_t n)
{
    static const char from[] = "abfnrtv\\\"", to[] = "\a\b\f\n\r\t\v\\\"";
    char *out, *o;

    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return tnd_xstrndup(s, n);
    o = out = tnd_xmalloc(n);
    for (size_t i = 1; i < n - 1; i++) {
        const char *k;
        if (s[i] != '\\') {
            *o++ = s[i];
        } else if (i + 1 < n - 1 && (k = memchr(from, s[i + 1], 9)) != NULL) {
            *o++ = to[k - from];
            i++;
        } else if (i + 3 < n - 1 && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                   s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' &&
                   s[i + 3] <= '7' && memcmp(s + i + 1, "000", 3) != 0) {
            *o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
                          (s[i + 3] - '0'));
            i += 3;
        } else {
            free(out);
            return tnd_xstrndup(s, n);
        }
    }
    *o = '\0';
    return out;
}

bool tnd_str_line_start(const char *s, size_t len, long line, size_t *off)
{
    size_t at = 0;

    for (long l = 1; l < line; l++) {
        const char *nl = at < len ? memchr(s + at, '\n', len - at) : NULL;
        if (!nl)
            return false;
        at = (size_t)(nl - s) + 1;
    }
    *off = at;
    return true;
}

char *tnd_str_shell_word(const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                               "TUVWXYZ0123456789_@%+=:,./-";
    size_t quotes = 0, n = 0;
    char *out;

    if (*s && s[strspn(s, safe)] == '\0')
        return tnd_xstrdup(s);
    for (const char *p = s; *p; p++)
        quotes += *p == '\'';
    out = tnd_xmalloc(strlen(s) + 3 * quotes + 3);
    out[n++] = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *p;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
    return out;
}
