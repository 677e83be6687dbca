/* tnd_glob - path patterns for agents.yaml (skills.*.paths, forbid,
 * public, docs) and the workspace's .gitignore.
 *
 * Patterns match repository-relative paths with '/' separators:
 *   *      any run of characters within one path component
 *   ?      one character, not '/'
 *   [a-z]  one character of a class; [!a-z] or [^a-z] negates
 *   **     as a whole component: any number of components, zero
 *          included. (Examples are in agents.yaml: a C comment cannot
 *          hold them.)
 *   \c     the character c itself
 * So "*.h" matches top-level headers only; headers at any depth need a
 * "**" component in front. Matching is polynomial in the lengths of the
 * pattern and the path, whatever either holds. */
#ifndef TND_GLOB_H
#define TND_GLOB_H

#include <stdbool.h>

/* 0 when pattern is well formed; -1 with the error set (one phrase, for
 * a config message: "'[' has no closing ']'"). */
int tnd_glob_check(const char *pattern);

/* True when path matches the whole of pattern. A malformed pattern
 * matches nothing. */
bool tnd_glob_match(const char *pattern, const char *path);

/* True when path matches one of the NULL-terminated patterns; NULL or
 * an empty list matches nothing. */
bool tnd_glob_match_any(char *const *patterns, const char *path);

/* Component matching without '/' rules: pattern against one name. For
 * .gitignore patterns without a slash, which match any component. */
bool tnd_glob_match_name(const char *pattern, const char *name);

#endif
