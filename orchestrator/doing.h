/* tnd_doing - what an agent is doing now, in words for a person.
 *
 * Built from the progress bodies an agent sends (proto/PROTOCOL.md,
 * `progress`): a phase ("skill test", "critique", "started") or streamed
 * characters. Shown as "reviewer: test running (6.1 s)" or "coder:
 * writing (1,834 characters, 2.0 s)", the time counting from when that
 * phase began. The progress line of `tandem run` and `tandem watch` say
 * it the same way. */
#ifndef TND_DOING_H
#define TND_DOING_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tnd_doing {
    char role[32];    /* "coder", "reviewer" */
    char what[96];    /* "test running", "writing", "working"; "" none */
    long chars;       /* characters streamed so far (writing) */
    int64_t since_ms; /* when what began, on the caller's clock */
} tnd_doing;

/* Start over for a request to role ("coder", "reviewer", "reviewer.2":
 * what follows the first '.' is left out): nothing to show yet. */
void tnd_doing_start(tnd_doing *d, const char *role);

/* Take one progress body at now_ms: its role (when it has one), its
 * phase, or its characters. A new phase restarts the time. False when
 * it says nothing to show (a sign of life: chars 0, no delta, no
 * phase). */
bool tnd_doing_update(tnd_doing *d, json_object *progress, int64_t now_ms);

/* The words for d at now_ms into out (cut to size); "" when nothing
 * has been said yet. */
void tnd_doing_format(char *out, size_t size, const tnd_doing *d,
                      int64_t now_ms);

/* prefix and the words for d as one line of at most columns columns
 * (tnd_term_fit), into out: whole when it fits; else short_prefix and
 * the words cut before their time, which stays ("[1/3] coder: writing
 * (1,8... (2.0 s)"), so a narrow terminal still shows the time count.
 * "" when nothing has been said yet. */
void tnd_doing_fit(char *out, size_t size, const tnd_doing *d, int64_t now_ms,
                   const char *prefix, const char *short_prefix, int columns);

#endif
