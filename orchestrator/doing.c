/* What an agent is doing, in words (see doing.h). */
#include "orchestrator/doing.h"

#include <stdio.h>
#include <string.h>

#include "proto/json.h"

/* "reviewer.2" is a reviewer: the role without its member number. */
static void set_role(tnd_doing *d, const char *role)
{
    snprintf(d->role, sizeof(d->role), "%.*s", (int)strcspn(role, "."), role);
}

void tnd_doing_start(tnd_doing *d, const char *role)
{
    memset(d, 0, sizeof(*d));
    set_role(d, role);
}

/* The words for a phase an agent names: "skill test" is "test
 * running", "started" is "working"; any other is shown as it is. */
static void phase_words(char *out, size_t size, const char *phase)
{
    if (strncmp(phase, "skill ", 6) == 0)
        snprintf(out, size, "%s running", phase + 6);
    else if (strcmp(phase, "started") == 0)
        snprintf(out, size, "working");
    else
        snprintf(out, size, "%s", phase);
}

bool tnd_doing_update(tnd_doing *d, json_object *progress, int64_t now_ms)
{
    const char *role = tnd_json_str_or(progress, "role", NULL),
               *phase = tnd_json_str_or(progress, "phase", NULL);
    char what[sizeof(d->what)];

    if (phase)
        phase_words(what, sizeof(what), phase);
    else if (json_object_object_get_ex(progress, "delta", NULL))
        snprintf(what, sizeof(what), "writing");
    else
        return false;
    if (role && *role)
        set_role(d, role);
    d->chars = tnd_json_int_or(progress, "chars", 0);
    if (strcmp(what, d->what) != 0) {
        memcpy(d->what, what, sizeof(d->what));
        d->since_ms = now_ms;
    }
    return true;
}

/* n with a comma between each group of three digits: "1,834". */
static void grouped(char *out, size_t size, long n)
{
    char digits[32];
    size_t len = (size_t)snprintf(digits, sizeof(digits), "%ld", n < 0 ? 0 : n),
           o = 0;

    for (size_t i = 0; i < len && o + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
}

void tnd_doing_format(char *out, size_t size, const tnd_doing *d,
                      int64_t now_ms)
{
    double secs = (double)(now_ms - d->since_ms) / 1000.0;
    char chars[32];

    if (!*d->what) {
        if (size > 0)
            *out = '\0';
        return;
    }
    if (secs < 0)
        secs = 0;
    if (strcmp(d->what, "writing") == 0) {
        grouped(chars, sizeof(chars), d->chars);
        snprintf(out, size, "%s: writing (%s character%s, %.1f s)", d->role,
                 chars, d->chars == 1 ? "" : "s", secs);
    } else {
        snprintf(out, size, "%s: %s (%.1f s)", d->role, d->what, secs);
    }
}
