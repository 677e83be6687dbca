/* What lessons.c and lessons_match.c share: matching lessons to a task,
 * and mistakes to each other.
 * Not for anyone else (lessons.h is the interface). */
#ifndef TND_LESSONS_INT_H
#define TND_LESSONS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest word compared, with its NUL. */
#define TND_LESSONS_WORD_MAX 32

/* The next word of s (letters and digits, lowercased, cut to fit) into
 * w; where to go on from, or NULL at the end. */
const char *tnd_lessons_next_word(char w[TND_LESSONS_WORD_MAX], const char *s);

/* The static name for a task type, NULL when name is none. */
const char *tnd_lessons_type_name(const char *name);

/* paths (NULL-terminated, may be NULL) sorted with repeats left out,
 * borrowed; *n_out of them. Caller frees the array. */
const char **tnd_lessons_path_set(const char *const *paths, size_t *n_out);

/* The hash of a sorted, distinct set of n paths. */
uint64_t tnd_lessons_hash_set(const char *const *set, size_t n);

/* |a ∩ b| / |a ∪ b| of two sorted, distinct sets; 0 when both are
 * empty. */
double tnd_lessons_jaccard(const char *const *a, size_t na,
                           const char *const *b, size_t nb);

/* Whether two mistakes are one: their distinct words (numbers folded
 * to "#", so "line 12" and "line 40" match) overlap by half or more. */
bool tnd_lessons_similar(const char *a, const char *b);

#endif
