/* fl_script - the steps a fakellm run will serve, loaded and checked.
 *
 * A script is JSON {"steps": [STEP, ...]} (README.md has the fields).
 * Loading checks every field's type and range up front, so a typo in a
 * test's script fails the server at start with the step and field named,
 * not halfway through the test with a puzzling response. Keys that start
 * with "_" are comments and ignored. */
#ifndef FL_SCRIPT_H
#define FL_SCRIPT_H

#include <stddef.h>

#include "tests/fakellm/http.h"

typedef struct fl_step {
    char *content; /* the assistant's answer; "" when not given */
    size_t content_len;
    long long prompt_tokens;     /* -1: request body bytes / 4 */
    long long completion_tokens; /* -1: content bytes / 4, at least 1 */
    int no_usage;
    int hit_max_tokens; /* the answer stops as one cut at max_tokens */
    int filtered;       /* ...as one the content filter stopped */
    int status;         /* 200 unless given */
    fl_header *headers; /* extra response headers, names as written */
    size_t nheaders;
    char *body; /* raw response body; NULL when not given */
    size_t body_len;
    long delay_ms;
    int stall;
    int truncate;
    int hold_open; /* streaming: every event, then the body kept open */
    int garbage;
    long long oversize; /* body bytes; -1 when not given */
    size_t chunk_size;  /* content bytes per stream event */
    long chunk_delay_ms;
    char **expect; /* strings the request body must contain */
    size_t nexpect;
    char **when; /* out of order: taken by a request containing these */
    size_t nwhen;
    long repeat; /* requests this step serves; 0 skips it */
    int close;
} fl_step;

typedef struct fl_script fl_script;

/* Load and check a script file; NULL on failure with tnd_error_last()
 * naming the file, the step and the field. Caller destroys. */
fl_script *fl_script_load(const char *path);

/* Free; sets *self_p to NULL. Safe on NULL. */
void fl_script_destroy(fl_script **self_p);

/* Number of steps. */
size_t fl_script_count(const fl_script *self);

/* Step i (< fl_script_count). Borrowed until fl_script_destroy. */
const fl_step *fl_script_step(const fl_script *self, size_t i);

#endif
