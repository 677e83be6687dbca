/* How lessons are matched (see lessons_int.h): the type of a task, from
 * its words, and sets of repository paths, their hash and overlap; and
 * the lessons a task gets, ranked by them (tnd_lessons_relevant); and
 * whether two mistakes are one (tnd_lessons_similar). */
#include "orchestrator/lessons.h"
#include "orchestrator/lessons_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"

#define MAX_QUERY_PATHS 10000
#define SIMILAR         0.5 /* word overlap that makes two mistakes one */
#define MAX_WORDS       256 /* words compared per mistake */

#define W_TYPE   0.5 /* relevance weights */
#define W_PATHS  0.3
#define W_EFFECT 0.2

/* ---- task types --------------------------------------------------------- */

static const char *const types[] = {"fix",      "test", "feature",
                                    "refactor", "docs", "other"};

/* Each type's words, space-separated with a space at both ends. */
static const struct {
    const char *type;
    const char *words;
} keywords[] = {
    {"fix", " fix fixes fixed fixing bug bugs buggy fail fails failed failing "
            "failure failures error errors crash crashes crashed crashing "
            "broken "},
    {"test", " test tests tested testing coverage "},
    {"feature", " add adds added adding implement implements implemented "
                "implementing implementation support supports supported "
                "supporting create creates created creating "},
    {"refactor", " refactor refactors refactored refactoring rename renames "
                 "renamed renaming clean cleans cleaned cleaning cleanup "
                 "simplify simplifies simplified simplifying "},
    {"docs", " doc docs document documents documented documenting "
             "documentation readme comment comments commented commenting "},
};

/* The next word of s (letters and digits, lowercased, cut to
 * TND_LESSONS_WORD_MAX - 1) into w; returns where scanning continues, NULL at
 * the end. */
const char *tnd_lessons_next_word(char w[TND_LESSONS_WORD_MAX], const char *s)
{
    size_t n = 0;

    while (*s && !isalnum((unsigned char)*s))
        s++;
    if (!*s)
        return NULL;
    for (; isalnum((unsigned char)*s); s++)
        if (n < TND_LESSONS_WORD_MAX - 1)
            w[n++] = (char)tolower((unsigned char)*s);
    w[n] = '\0';
    return s;
}

static const char *keyword_type(const char *w)
{
    char spaced[TND_LESSONS_WORD_MAX + 2];

    snprintf(spaced, sizeof(spaced), " %s ", w);
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        if (strstr(keywords[i].words, spaced))
            return keywords[i].type;
    return NULL;
}

const char *tnd_lessons_task_type(const char *task)
{
    const char *first = NULL, *t;
    char w[TND_LESSONS_WORD_MAX];

    while (task && (task = tnd_lessons_next_word(w, task))) {
        if (!(t = keyword_type(w)))
            continue;
        if (!first)
            first = t;
        else if (strcmp(first, "feature") == 0 &&
                 (strcmp(t, "test") == 0 || strcmp(t, "docs") == 0))
            return t;
        if (strcmp(first, "feature") != 0)
            break;
    }
    return first ? first : "other";
}

/* The static name for a type, NULL when name is none. */
const char *tnd_lessons_type_name(const char *name)
{
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (name && strcmp(name, types[i]) == 0)
            return types[i];
    return NULL;
}

bool tnd_lessons_task_type_valid(const char *name)
{
    return tnd_lessons_type_name(name) != NULL;
}

/* ---- path sets ---------------------------------------------------------- */

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* paths sorted with repeats left out, borrowed; *n_out of them. */
const char **tnd_lessons_path_set(const char *const *paths, size_t *n_out)
{
    size_t n = 0, k = 0;
    const char **set;

    while (paths && paths[n] && n < MAX_QUERY_PATHS)
        n++;
    set = tnd_xcalloc(n + 1, sizeof(*set));
    if (n)
        memcpy(set, paths, n * sizeof(*set));
    if (n > 1) /* qsort wants a pointer even for none */
        qsort(set, n, sizeof(*set), by_str);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp(set[k - 1], set[i]) != 0)
            set[k++] = set[i];
    set[k] = NULL;
    *n_out = k;
    return set;
}

uint64_t tnd_lessons_hash_set(const char *const *set, size_t n)
{
    uint64_t h = TND_FNV_SEED;

    for (size_t i = 0; i < n; i++)
        h = tnd_str_hash(h, set[i], strlen(set[i]) + 1); /* with the NUL */
    return h;
}

uint64_t tnd_lessons_context_hash(const char *const *paths)
{
    size_t n;
    const char **set = tnd_lessons_path_set(paths, &n);
    uint64_t h = tnd_lessons_hash_set(set, n);

    free(set);
    return h;
}

/* |a ∩ b| / |a ∪ b| of two sorted, distinct sets; 0 when both are empty. */
double tnd_lessons_jaccard(const char *const *a, size_t na,
                           const char *const *b, size_t nb)
{
    size_t i = 0, j = 0, both = 0;

    while (i < na && j < nb) {
        int c = strcmp(a[i], b[j]);
        both += c == 0;
        i += c <= 0;
        j += c >= 0;
    }
    return na + nb == both ? 0.0 : (double)both / (double)(na + nb - both);
}

/* ---- ranking ------------------------------------------------------------ */

typedef struct scored {
    const tnd_lesson *l;
    double score;
} scored;

static int by_score(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    int c;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->l->effectiveness != y->l->effectiveness)
        return x->l->effectiveness > y->l->effectiveness ? -1 : 1;
    if ((c = strcmp(x->l->created, y->l->created)) != 0)
        return -c; /* newer first */
    return strcmp(x->l->id, y->l->id);
}

int tnd_lessons_relevant(const tnd_lesson ***out, size_t *n,
                         const tnd_lessons *self, const char *task_type,
                         const char *const *paths, size_t k)
{
    size_t nq, ns = 0;
    const char **query = tnd_lessons_path_set(paths, &nq);
    scored *s = tnd_xcalloc(tnd_lessons_count(self) + 1, sizeof(*s));

    if (k == 0)
        k = TND_LESSONS_DEFAULT_K;
    for (size_t i = 0; i < tnd_lessons_count(self); i++) {
        const tnd_lesson *l = tnd_lessons_at(self, i);
        bool same = task_type && strcmp(l->task_type, task_type) == 0;
        double overlap = tnd_lessons_jaccard((const char *const *)l->paths,
                                             l->npaths, query, nq);
        if (!same && overlap == 0.0)
            continue;
        s[ns].l = l;
        s[ns].score = (same ? W_TYPE : 0.0) + W_PATHS * overlap +
                      W_EFFECT * l->effectiveness;
        ns++;
    }
    if (ns > 1) /* qsort wants a pointer even for none */
        qsort(s, ns, sizeof(*s), by_score);
    if (ns > k)
        ns = k;
    *out = tnd_xcalloc(ns + 1, sizeof(**out));
    for (size_t i = 0; i < ns; i++)
        (*out)[i] = s[i].l;
    *n = ns;
    free(s);
    free(query);
    return 0;
}

/* ---- mistakes ----------------------------------------------------------- */

typedef struct words {
    char w[MAX_WORDS][TND_LESSONS_WORD_MAX];
    size_t n;
} words;

/* The distinct words of s, with every number folded to "#", so "line 12"
 * and "line 40" are the same mistake. */
static void words_of(words *out, const char *s)
{
    char w[TND_LESSONS_WORD_MAX];

    out->n = 0;
    while (out->n < MAX_WORDS && (s = tnd_lessons_next_word(w, s))) {
        size_t i;
        if (isdigit((unsigned char)w[0]))
            strcpy(w, "#");
        for (i = 0; i < out->n && strcmp(out->w[i], w) != 0; i++)
            ;
        if (i == out->n)
            strcpy(out->w[out->n++], w);
    }
}

bool tnd_lessons_similar(const char *a, const char *b)
{
    words *x = tnd_xmalloc(sizeof(*x)), *y = tnd_xmalloc(sizeof(*y));
    size_t both = 0;
    bool yes;

    words_of(x, a);
    words_of(y, b);
    for (size_t i = 0; i < x->n; i++)
        for (size_t j = 0; j < y->n; j++)
            if (strcmp(x->w[i], y->w[j]) == 0) {
                both++;
                break;
            }
    yes = x->n + y->n == 0 ||
          (double)both / (double)(x->n + y->n - both) >= SIMILAR;
    free(x);
    free(y);
    return yes;
}
