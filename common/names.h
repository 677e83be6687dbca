/* tnd_names - an enum's names: how its values are written in agents.yaml,
 * on the wire, in the journal and in messages, and how they are read back.
 *
 * Text is parsed into the enum once, where it enters (the config loader,
 * a body's decoder, a journal reader, the command line); inside, code
 * compares enums, so a misspelt name cannot compile into a silent bug.
 * A table lists the names in the enum's order: entry i names value i
 * (NULL for a value that has no name, such as a 0 that means "none"). */
#ifndef TND_NAMES_H
#define TND_NAMES_H

typedef struct tnd_names {
    const char *what;         /* what a value is, for messages: "provider" */
    const char *const *names; /* entry i names value i; NULL: none */
    int count;                /* entries in names */
} tnd_names;

/* A table for a static array of names. */
#define TND_NAMES(what, array)                                     \
    {                                                              \
        (what), (array), (int)(sizeof(array) / sizeof((array)[0])) \
    }

/* An enum whose values tnd_names_parse (or a TND_YW_ENUM field) stores
 * through an int must be int-sized; at file scope, after its typedef. */
#define TND_NAMES_INT_SIZED(type)               \
    _Static_assert(sizeof(type) == sizeof(int), \
                   #type " is stored through an int, so it must be int-sized")

/* The name of value v; "?" when v has none. Borrowed from the table. */
const char *tnd_names_name(const tnd_names *t, int v);

/* The value named s into *out (unchanged on failure). An enum is parsed
 * through an int: each enum that is declares so with TND_NAMES_INT_SIZED. -1
 * with "unknown WHAT 'S' (known: A, B, C)" set when no entry is s exactly (the
 * value shown on one line, printable and cut to 60 bytes: it may come from a
 * file or a peer). */
int tnd_names_parse(int *out, const tnd_names *t, const char *s);

/* The names, ", "-separated ("replay, openai, ..."), for messages that
 * list what is allowed. Caller frees. */
char *tnd_names_list(const tnd_names *t);

#endif
