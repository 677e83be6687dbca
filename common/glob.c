/* Path patterns (see glob.h).
 *
 * A pattern and a path are split into components; "**" components are
 * matched by dynamic programming over (pattern component, path
 * component), every other component by the usual single-star
 * backtracking, which is linear per star. So no pattern or path can make
 * matching exponential. */
#include "common/glob.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"

#define GLOB_MAX 1024

/* Length of the class starting at p ('[' ... ']'), or 0 when it never
 * closes. A ']' first (after an optional '!' or '^') is literal. */
static size_t class_len(const char *p, size_t n)
{
    size_t i = 1;

    if (i < n && (p[i] == '!' || p[i] == '^'))
        i++;
    if (i < n && p[i] == ']')
        i++;
    for (; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n)
            i++;
        else if (p[i] == ']')
            return i + 1;
    }
    return 0;
}

static bool class_match(const char *p, size_t len, unsigned char c)
{
    size_t i = 1, end = len - 1;
    bool neg = false, hit = false;

    if (p[i] == '!' || p[i] == '^') {
        neg = true;
        i++;
    }
    for (bool first = true; i < end; first = false) {
        unsigned char lo = (unsigned char)p[i], hi;
        if (lo == '\\' && i + 1 < end)
            lo = (unsigned char)p[++i];
        else if (lo == ']' && !first)
            break;
        i++;
        hi = lo;
        if (i + 1 < end && p[i] == '-') {
            hi = (unsigned char)p[i + 1];
            if (hi == '\\' && i + 2 < end)
                hi = (unsigned char)p[i + 2], i++;
            i += 2;
        }
        if (c >= lo && c <= hi)
            hit = true;
    }
    return hit != neg;
}

/* One component: pattern p[0..pn) against name s[0..sn), neither holding
 * '/'. Backtracks to the last star only, so O(pn * sn) at worst. */
static bool match_component(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;

    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            while (pi < pn && p[pi] == '*')
                pi++;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            size_t adv = 1;
            bool ok;
            if (p[pi] == '?') {
                ok = true;
            } else if (p[pi] == '[' && class_len(p + pi, pn - pi)) {
                adv = class_len(p + pi, pn - pi);
                ok = class_match(p + pi, adv, (unsigned char)s[si]);
            } else if (p[pi] == '\\' && pi + 1 < pn) {
                adv = 2;
                ok = p[pi + 1] == s[si];
            } else {
                ok = p[pi] == s[si];
            }
            if (ok) {
                pi += adv;
                si++;
                continue;
            }
        }
        if (star_p == (size_t)-1)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

bool tnd_glob_match_name(const char *pattern, const char *name)
{
    if (strchr(name, '/'))
        return false;
    return match_component(pattern, strlen(pattern), name, strlen(name));
}

int tnd_glob_check(const char *pattern)
{
    size_t n = strlen(pattern);
    const char *comp = pattern;

    if (n == 0)
        return tnd_error_set("a pattern must not be empty");
    if (n > GLOB_MAX)
        return tnd_error_set("a pattern must be at most %d bytes", GLOB_MAX);
    if (pattern[0] == '/')
        return tnd_error_set("a pattern is relative to the repository root "
                             "and must not start with '/'");
    if (pattern[n - 1] == '/')
        return tnd_error_set("a pattern must not end with '/' (write "
                             "\"dir/**\" for everything under dir)");
    for (size_t i = 0; i <= n; i++) {
        if (i < n && pattern[i] == '\\') {
            if (i + 1 == n)
                return tnd_error_set("a pattern must not end with '\\'");
            i++;
            continue;
        }
        if (i < n && pattern[i] == '[') {
            size_t len = class_len(pattern + i, n - i);
            if (!len || memchr(pattern + i, '/', len))
                return tnd_error_set("'[' has no closing ']' in the same "
                                     "path component");
            i += len - 1;
            continue;
        }
        if (i < n && pattern[i] != '/')
            continue;
        /* a component ends at i */
        {
            size_t len = (size_t)(pattern + i - comp);
            if (len == 0)
                return tnd_error_set("a pattern must not hold an empty path "
                                     "component ('//')");
            if ((len == 1 && comp[0] == '.') ||
                (len == 2 && comp[0] == '.' && comp[1] == '.'))
                return tnd_error_set("a pattern must not hold '.' or '..' "
                                     "components");
            for (size_t j = 0; j + 1 < len; j++) {
                if (comp[j] == '\\') {
                    j++;
                    continue;
                }
                if (comp[j] == '*' && comp[j + 1] == '*' && len != 2)
                    return tnd_error_set("'**' must be a whole path "
                                         "component (like src/**/x.c or "
                                         "docs/**)");
            }
        }
        comp = pattern + i + 1;
    }
    return 0;
}

typedef struct comp {
    const char *p;
    size_t n;
} comp;

/* Split s at '/'; *count gets the number of components. Caller frees. */
static comp *split(const char *s, size_t *count)
{
    size_t n = 1, k = 0;
    comp *c;

    for (const char *p = s; *p; p++)
        n += *p == '/';
    c = tnd_xcalloc(n, sizeof(*c));
    for (const char *p = s;; p++) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        c[k].p = p;
        c[k].n = len;
        k++;
        if (!slash)
            break;
        p = slash;
    }
    *count = k;
    return c;
}

bool tnd_glob_match(const char *pattern, const char *path)
{
    size_t pn, sn;
    comp *pc, *sc;
    bool *row, *next, result;

    if (tnd_glob_check(pattern) < 0 || !*path)
        return false;
    pc = split(pattern, &pn);
    sc = split(path, &sn);
    /* row[j]: pattern components i.. match path components j.. ; computed
     * from the last pattern component backwards */
    row = tnd_xcalloc(sn + 1, sizeof(bool));
    next = tnd_xcalloc(sn + 1, sizeof(bool));
    row[sn] = true;
    for (size_t i = pn; i-- > 0;) {
        bool globstar = pc[i].n == 2 && pc[i].p[0] == '*' && pc[i].p[1] == '*';
        bool *tmp;
        for (size_t j = sn + 1; j-- > 0;) {
            if (globstar)
                next[j] = row[j] || (j < sn && next[j + 1]);
            else
                next[j] = j < sn && row[j + 1] &&
                          match_component(pc[i].p, pc[i].n, sc[j].p, sc[j].n);
        }
        tmp = row;
        row = next;
        next = tmp;
    }
    result = row[0];
    free(row);
    free(next);
    free(pc);
    free(sc);
    return result;
}

bool tnd_glob_match_any(char *const *patterns, const char *path)
{
    for (char *const *p = patterns; p && *p; p++)
        if (tnd_glob_match(*p, path))
            return true;
    return false;
}
