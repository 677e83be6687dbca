/* What an agent is doing, in words (see doing.h). */
#include "orchestrator/doing.h"

#include <stdio.h>
#include <string.h>

#include "common/term.h"
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

void tnd_doing_fit(char *out, size_t size, const tnd_doing *d, int64_t now_ms,
                   const char *prefix, const char *short_prefix, int columns)
{
    char what[256], whole[512], cut[512], timer[32], chars[32];
    double secs = (double)(now_ms - d->since_ms) / 1000.0;
    int room;

    tnd_doing_format(what, sizeof(what), d, now_ms);
    if (!*what) {
        if (size > 0)
            *out = '\0';
        return;
    }
    /* fitted to its own length and to columns: the same when it fits */
    snprintf(whole, sizeof(whole), "%s%s", prefix, what);
    tnd_term_fit(whole, (int)sizeof(whole));
    snprintf(cut, sizeof(cut), "%s", whole);
    tnd_term_fit(cut, columns);
    if (strcmp(cut, whole) == 0) {
        snprintf(out, size, "%s", whole);
        return;
    }
    snprintf(timer, sizeof(timer), "(%.1f s)", secs < 0 ? 0 : secs);
    room = columns - (int)strlen(timer) - 1;
    if (room < 8) { /* the time alone, as much of it as there is room */
        tnd_term_fit(timer, columns);
        snprintf(out, size, "%s", timer);
        return;
    }
    if (strcmp(d->what, "writing") == 0) {
        grouped(chars, sizeof(chars), d->chars);
        snprintf(cut, sizeof(cut), "%s%s: writing (%s character%s)",
                 short_prefix, d->role, chars, d->chars == 1 ? "" : "s");
    } else {
        snprintf(cut, sizeof(cut), "%s%s: %s", short_prefix, d->role, d->what);
    }
    tnd_term_fit(cut, room);
    snprintf(out, size, "%s %s", cut, timer);
}
