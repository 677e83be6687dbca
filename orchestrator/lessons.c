/* The reflection bank (see lessons.h): lessons in memory, their file
 * (saved as a merge of this process's changes into what it holds then),
 * and matching a new lesson against old ones. */
#include "orchestrator/lessons.h"
#include "orchestrator/lessons_int.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/code.h"
#include "proto/json.h"

#define VERSION  1
#define EMA_KEEP 0.7 /* effectiveness = KEEP * e + (1-KEEP) * hit */

_Static_assert(TND_LESSON_RENDER_MAX <= TND_CODE_MAX_LESSON,
               "a rendered lesson must fit the coder request's limit");

/* A change this process made, replayed on the file as it is at save:
 * two runs, or a run and `tandem lessons forget`, each saving what it
 * loaded at its start undid the other's (a forgotten lesson came back
 * when a run ended). */
typedef struct change {
    enum { LEARNED, APPLIED, FORGOT } kind;
    const char *task_type;            /* LEARNED */
    char *mistake, *correction;       /* LEARNED */
    char **paths;                     /* LEARNED; APPLIED: the ids */
    char made[TND_LESSON_ID_MAX + 1]; /* LEARNED: the new lesson's id */
    char created[32];                 /* and time; "" when it was merged */
    bool success;                     /* APPLIED */
    char *id;                         /* FORGOT */
} change;

struct tnd_lessons {
    char *path;
    tnd_lesson **items; /* oldest first; each allocated on its own, so
                           borrowed pointers survive appends */
    size_t n, alloc;
    size_t max;
    change *changes; /* since the last save, in order */
    size_t nchanges, achanges;
    bool replaying; /* the changes are being made again: not logged */
};

/* Give l its paths: checked, sorted, distinct, at most
 * TND_LESSON_PATHS_MAX; and their hash. */
static int set_paths(tnd_lesson *l, const char *const *paths)
{
    size_t n;
    const char **set = tnd_lessons_path_set(paths, &n);

    for (size_t i = 0; i < n; i++)
        if (tnd_edit_path_check(set[i]) < 0) {
            free(set);
            return -1;
        }
    if (n > TND_LESSON_PATHS_MAX)
        n = TND_LESSON_PATHS_MAX;
    l->paths = tnd_xcalloc(n + 1, sizeof(*l->paths));
    for (size_t i = 0; i < n; i++)
        l->paths[i] = tnd_xstrdup(set[i]);
    l->npaths = n;
    l->context_hash = tnd_lessons_hash_set((const char *const *)l->paths, n);
    free(set);
    return 0;
}

/* ---- lessons ------------------------------------------------------------ */

static void lesson_free(tnd_lesson *l)
{
    if (!l)
        return;
    free(l->mistake);
    free(l->correction);
    for (size_t i = 0; i < l->npaths; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l);
}

/* A copy of s cut to at most max bytes on a UTF-8 boundary. */
static char *text_copy(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    return tnd_xstrndup(s, n);
}

static ssize_t index_of(const tnd_lessons *b, const char *id)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->items[i]->id, id) == 0)
            return (ssize_t)i;
    return -1;
}

/* 8 hex digits from the lesson's content and time, unique in the bank. */
static void make_id(tnd_lessons *b, tnd_lesson *l)
{
    uint64_t h = tnd_str_hash(TND_FNV_SEED, l->task_type, strlen(l->task_type));

    h = tnd_str_hash(h, &l->context_hash, sizeof(l->context_hash));
    h = tnd_str_hash(h, l->mistake, strlen(l->mistake));
    h = tnd_str_hash(h, l->created, strlen(l->created));
    do {
        snprintf(l->id, sizeof(l->id), "%08x", (unsigned)(h ^ (h >> 32)));
        h = tnd_str_hash(h, "+", 1);
    } while (index_of(b, l->id) >= 0);
}

static char **list_copy(const char *const *list)
{
    size_t n = 0;
    char **out;

    while (list && list[n])
        n++;
    out = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        out[i] = tnd_xstrdup(list[i]);
    return out;
}

static change *log_change(tnd_lessons *b, int kind)
{
    change *c;

    if (b->replaying)
        return NULL;
    TND_GROW(b->changes, b->achanges, b->nchanges + 1);
    c = &b->changes[b->nchanges++];
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    return c;
}

static void forget_changes(tnd_lessons *b)
{
    for (size_t i = 0; i < b->nchanges; i++) {
        free(b->changes[i].mistake);
        free(b->changes[i].correction);
        tnd_str_list_free(&b->changes[i].paths);
        free(b->changes[i].id);
    }
    b->nchanges = 0;
}

static void remove_at(tnd_lessons *b, size_t i)
{
    lesson_free(b->items[i]);
    memmove(&b->items[i], &b->items[i + 1], (b->n - i - 1) * sizeof(*b->items));
    b->n--;
}

/* Drop the least effective lesson, the oldest of equals. */
static void evict_one(tnd_lessons *b)
{
    size_t worst = 0;

    for (size_t i = 1; i < b->n; i++) {
        const tnd_lesson *l = b->items[i], *w = b->items[worst];
        if (l->effectiveness < w->effectiveness ||
            (l->effectiveness == w->effectiveness &&
             strcmp(l->created, w->created) < 0))
            worst = i;
    }
    remove_at(b, worst);
}

/* ---- the file ----------------------------------------------------------- */

static bool is_hex(const char *s, size_t min, size_t max)
{
    size_t n = strspn(s, "0123456789abcdef");

    return s[n] == '\0' && n >= min && n <= max;
}

static bool is_id(const char *s)
{
    return is_hex(s, 4, TND_LESSON_ID_MAX);
}

static bool is_hash(const char *s)
{
    return is_hex(s, 16, 16);
}

/* "YYYY-MM-DDTHH:MM:SS", optionally ".fraction", then "Z". */
static bool is_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t i;

    for (i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    if (s[i] == '.')
        i += 1 + strspn(s + i + 1, "0123456789");
    return s[i] == 'Z' && s[i + 1] == '\0';
}

/* Read j[key], a short string that ok() accepts, into dst (size bytes);
 * "what" says what it must be. */
static int get_short(char *dst, size_t size, json_object *j, const char *key,
                     bool (*ok)(const char *), const char *what, int flags)
{
    char *s = NULL;
    int error = tnd_json_get_str(&s, j, key, 64, flags);

    if (error == 0 && s && (strlen(s) >= size || !ok(s)))
        error = tnd_error_set("field '%s' must be %s", key, what);
    else if (error == 0 && s)
        strcpy(dst, s);
    free(s);
    return error;
}

static int read_lesson(tnd_lesson **out, const tnd_lessons *b, json_object *j)
{
    tnd_lesson *l = tnd_xcalloc(1, sizeof(*l));
    char type[16], hash[17];
    const char **paths = NULL;
    json_object *arr = NULL;
    size_t np;
    int error = -1;

    *out = NULL;
    l->effectiveness = 0.5;
    if (!json_object_is_type(j, json_type_object)) {
        tnd_error_set("must be an object");
        goto out;
    }
    if (get_short(l->id, sizeof(l->id), j, "id", is_id,
                  "4..16 lowercase hex digits", TND_JSON_REQUIRED) < 0 ||
        get_short(type, sizeof(type), j, "task_type",
                  tnd_lessons_task_type_valid,
                  "fix, test, feature, refactor, docs or other",
                  TND_JSON_REQUIRED) < 0 ||
        get_short(hash, sizeof(hash), j, "context_hash", is_hash,
                  "16 lowercase hex digits", TND_JSON_OPTIONAL) < 0 ||
        get_short(l->created, sizeof(l->created), j, "created", is_time,
                  "a UTC time like 2026-11-22T01:44:28.123Z",
                  TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&l->mistake, j, "mistake", TND_LESSON_TEXT_MAX,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&l->correction, j, "correction", TND_LESSON_TEXT_MAX,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&l->times_applied, j, "times_applied", 0, 1000000000L,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_double(&l->effectiveness, j, "effectiveness", 0.0, 1.0,
                            TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_array(&arr, j, "paths", TND_LESSON_PATHS_MAX,
                           TND_JSON_OPTIONAL) < 0)
        goto out;
    l->task_type = tnd_lessons_type_name(type);
    if (index_of(b, l->id) >= 0) {
        tnd_error_set("field 'id': another lesson has id %s", l->id);
        goto out;
    }
    if (!*l->mistake || !*l->correction) {
        tnd_error_set("field '%s' is empty",
                      *l->mistake ? "correction" : "mistake");
        goto out;
    }
    np = arr ? json_object_array_length(arr) : 0;
    paths = tnd_xcalloc(np + 1, sizeof(*paths));
    for (size_t i = 0; i < np; i++) {
        json_object *p = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(p, json_type_string)) {
            tnd_error_set("field 'paths': item %zu must be a string", i);
            goto out;
        }
        paths[i] = json_object_get_string(p);
    }
    /* context_hash is checked but recomputed: the paths decide */
    if (set_paths(l, paths) < 0) {
        tnd_error_prefix("field 'paths'");
        goto out;
    }
    *out = l;
    l = NULL;
    error = 0;
out:
    free(paths);
    lesson_free(l);
    return error;
}

static int read_bank(tnd_lessons *b, const char *text, size_t len)
{
    json_object *top = NULL, *arr = NULL;
    long version = 0;
    int error = -1;

    if (tnd_json_parse(&top, text, len) < 0)
        goto out;
    if (!json_object_is_type(top, json_type_object)) {
        tnd_error_set("must hold a JSON object");
        goto out;
    }
    if (tnd_json_get_int(&version, top, "tandem_lessons", 0, 1000000,
                         TND_JSON_REQUIRED) < 0)
        goto out;
    if (version != VERSION) {
        tnd_error_set("field 'tandem_lessons' is version %ld; this tandem "
                      "reads version %d",
                      version, VERSION);
        goto out;
    }
    if (tnd_json_get_array(&arr, top, "lessons", TND_LESSONS_READ_MAX,
                           TND_JSON_REQUIRED) < 0)
        goto out;
    b->items =
        tnd_xcalloc(json_object_array_length(arr) + 1, sizeof(*b->items));
    b->alloc = json_object_array_length(arr) + 1;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        tnd_lesson *l;
        if (read_lesson(&l, b, json_object_array_get_idx(arr, i)) < 0) {
            tnd_error_prefix("lessons[%zu]", i);
            goto out;
        }
        b->items[b->n++] = l;
    }
    /* kept whole, past max too (a bank merged or edited by hand): read
     * and forget touch only what they are asked; a new lesson makes
     * room (add_lesson). Trimmed here, every load dropped the least
     * effective ones, and a save wrote the trimmed bank back */
    error = 0;
out:
    json_object_put(top);
    return error;
}

tnd_lessons *tnd_lessons_load(const char *path)
{
    tnd_lessons *b = tnd_xcalloc(1, sizeof(*b));
    char *text = NULL;
    size_t len = 0;
    int rc = tnd_fs_read(&text, &len, path, TND_LESSONS_FILE_MAX);

    b->path = tnd_xstrdup(path);
    b->max = TND_LESSONS_DEFAULT_MAX;
    if (rc == TND_ENOTFOUND) {
        tnd_error_clear();
        return b;
    }
    if (rc < 0 || read_bank(b, text, len) < 0) {
        if (rc == 0)
            tnd_error_prefix("%s", path);
        tnd_error_prefix("lessons bank");
        tnd_lessons_close(&b);
    }
    free(text);
    return b;
}

tnd_lessons *tnd_lessons_open(const char *repo)
{
    char *path = tnd_fs_join(repo, ".tandem/" TND_LESSONS_FILE);
    tnd_lessons *b = tnd_lessons_load(path);

    free(path);
    return b;
}

void tnd_lessons_close(tnd_lessons **self_p)
{
    tnd_lessons *b = self_p ? *self_p : NULL;

    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        lesson_free(b->items[i]);
    free(b->items);
    forget_changes(b);
    free(b->changes);
    free(b->path);
    free(b);
    *self_p = NULL;
}

/* A number with at most 4 decimals, written as such ("0.65", not
 * "0.65000000000000002"). */
static json_object *short_double(double d)
{
    char s[32];

    snprintf(s, sizeof(s), "%.4f", d);
    for (size_t n = strlen(s); n > 3 && s[n - 1] == '0'; n--)
        s[n - 1] = '\0';
    return json_object_new_double_s(strtod(s, NULL), s);
}

static json_object *lesson_json(const tnd_lesson *l)
{
    json_object *o = json_object_new_object(), *p = json_object_new_array();
    char hash[17];

    snprintf(hash, sizeof(hash), "%016llx",
             (unsigned long long)l->context_hash);
    for (size_t i = 0; i < l->npaths; i++)
        json_object_array_add(p, json_object_new_string(l->paths[i]));
    json_object_object_add(o, "id", json_object_new_string(l->id));
    json_object_object_add(o, "task_type",
                           json_object_new_string(l->task_type));
    json_object_object_add(o, "mistake", json_object_new_string(l->mistake));
    json_object_object_add(o, "correction",
                           json_object_new_string(l->correction));
    json_object_object_add(o, "context_hash", json_object_new_string(hash));
    json_object_object_add(o, "paths", p);
    json_object_object_add(o, "created", json_object_new_string(l->created));
    json_object_object_add(o, "times_applied",
                           json_object_new_int64(l->times_applied));
    json_object_object_add(o, "effectiveness", short_double(l->effectiveness));
    return o;
}

static int write_bank(tnd_lessons *self)
{
    json_object *top = json_object_new_object(), *arr = json_object_new_array();
    char *dir = tnd_fs_dirname(self->path), *ignore = NULL, *text = NULL;
    int error = -1;

    json_object_object_add(top, "tandem_lessons", json_object_new_int(VERSION));
    for (size_t i = 0; i < self->n; i++)
        json_object_array_add(arr, lesson_json(self->items[i]));
    json_object_object_add(top, "lessons", arr);
    text = tnd_log_redact_json(tnd_json_pretty(top));
    if (tnd_fs_mkdirs(dir, 0755) < 0)
        goto out;
    /* .tandem/ is tandem's own: keep it out of the user's git */
    ignore = tnd_fs_join(dir, ".gitignore");
    if (tnd_str_ends_with(dir, ".tandem") && !tnd_fs_exists(ignore) &&
        tnd_fs_write(ignore, "# tandem's sessions and state\n*\n", 32) < 0)
        goto out;
    error = tnd_fs_write_atomic(self->path, text, strlen(text));
out:
    json_object_put(top);
    free(text);
    free(ignore);
    free(dir);
    return error;
}

static int add_lesson(const tnd_lesson **out, tnd_lessons *self,
                      const char *task_type, const char *mistake,
                      const char *correction, const char *const *paths,
                      const change *was);

/* The bank as the file holds it now, with this process's changes made
 * again on it. */
static tnd_lessons *merged(const tnd_lessons *self)
{
    tnd_lessons *now = tnd_lessons_load(self->path);

    if (!now)
        return NULL;
    now->max = self->max;
    now->replaying = true;
    for (size_t i = 0; i < self->nchanges; i++) {
        const change *c = &self->changes[i];
        if (c->kind == LEARNED)
            add_lesson(NULL, now, c->task_type, c->mistake, c->correction,
                       (const char *const *)c->paths, c);
        else if (c->kind == APPLIED)
            tnd_lessons_applied(now, (const char *const *)c->paths, c->success);
        else if (index_of(now, c->id) >= 0)
            remove_at(now, (size_t)index_of(now, c->id));
    }
    now->replaying = false;
    return now;
}

int tnd_lessons_save(tnd_lessons *self)
{
    char *lock_path = tnd_xasprintf("%s.lock", self->path);
    char *dir = tnd_fs_dirname(self->path);
    tnd_lessons *now = NULL;
    int lock = -1, error = -1;

    /* one save at a time: each reads the file, changes, writes it */
    if (tnd_fs_mkdirs(dir, 0755) < 0 ||
        (lock = open(lock_path,
                     O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                     0644)) < 0 ||
        flock(lock, LOCK_EX) < 0) {
        tnd_error_sys("cannot lock %s", lock_path);
        goto out;
    }
    if (!(now = merged(self)) || write_bank(now) < 0)
        goto out;
    /* what is in the file is what this bank holds from now on */
    for (size_t i = 0; i < self->n; i++)
        lesson_free(self->items[i]);
    free(self->items);
    self->items = now->items;
    self->n = now->n;
    self->alloc = now->alloc;
    now->items = NULL;
    now->n = now->alloc = 0;
    forget_changes(self);
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("cannot save the lessons bank");
    tnd_lessons_close(&now);
    if (lock >= 0)
        close(lock);
    free(dir);
    free(lock_path);
    return error;
}

const char *tnd_lessons_path(const tnd_lessons *self)
{
    return self->path;
}

void tnd_lessons_set_max(tnd_lessons *self, size_t max)
{
    self->max = max < 1                      ? 1
                : max > TND_LESSONS_READ_MAX ? TND_LESSONS_READ_MAX
                                             : max;
    while (self->n > self->max)
        evict_one(self);
}

size_t tnd_lessons_count(const tnd_lessons *self)
{
    return self->n;
}

const tnd_lesson *tnd_lessons_at(const tnd_lessons *self, size_t i)
{
    return i < self->n ? self->items[i] : NULL;
}

/* ---- learning and using ------------------------------------------------- */

/* tnd_lessons_add; was: the change it makes again at a save, else
 * NULL. */
static int add_lesson(const tnd_lesson **out, tnd_lessons *self,
                      const char *task_type, const char *mistake,
                      const char *correction, const char *const *paths,
                      const change *was)
{
    tnd_lesson *l;
    change *c;

    if (out)
        *out = NULL;
    if (!tnd_lessons_type_name(task_type))
        return tnd_error_set("unknown task type '%s'",
                             task_type ? task_type : "(null)");
    if (!mistake || !*mistake || !correction || !*correction)
        return tnd_error_set("a lesson needs a mistake and a correction");
    l = tnd_xcalloc(1, sizeof(*l));
    if (set_paths(l, paths) < 0) {
        lesson_free(l);
        return -1;
    }
    if ((c = log_change(self, LEARNED))) {
        c->task_type = tnd_lessons_type_name(task_type);
        c->mistake = tnd_xstrdup(mistake);
        c->correction = tnd_xstrdup(correction);
        c->paths = list_copy(paths);
    }
    l->task_type = tnd_lessons_type_name(task_type);
    l->mistake = text_copy(mistake, TND_LESSON_TEXT_MAX);
    l->correction = text_copy(correction, TND_LESSON_TEXT_MAX);
    for (size_t i = 0; i < self->n; i++) {
        tnd_lesson *old = self->items[i];
        if (old->task_type == l->task_type &&
            old->context_hash == l->context_hash &&
            tnd_lessons_similar(old->mistake, l->mistake)) {
            free(old->mistake);
            free(old->correction);
            old->mistake = l->mistake;
            old->correction = l->correction;
            l->mistake = l->correction = NULL;
            lesson_free(l);
            if (out)
                *out = old;
            return 0;
        }
    }
    if (was && *was->created) {
        /* the lesson as it was made before the save: the same id and
         * time, so the uses logged since refer to it */
        snprintf(l->created, sizeof(l->created), "%s", was->created);
        if (index_of(self, was->made) < 0)
            snprintf(l->id, sizeof(l->id), "%s", was->made);
        else
            make_id(self, l);
    } else {
        tnd_clock_iso8601(l->created, sizeof(l->created), tnd_wall_ms());
        make_id(self, l);
    }
    l->effectiveness = 0.5;
    if (c) {
        snprintf(c->made, sizeof(c->made), "%s", l->id);
        snprintf(c->created, sizeof(c->created), "%s", l->created);
    }
    while (self->n >= self->max)
        evict_one(self);
    TND_GROW(self->items, self->alloc, self->n + 1);
    self->items[self->n++] = l;
    if (out)
        *out = l;
    return 0;
}

int tnd_lessons_add(const tnd_lesson **out, tnd_lessons *self,
                    const char *task_type, const char *mistake,
                    const char *correction, const char *const *paths)
{
    return add_lesson(out, self, task_type, mistake, correction, paths, NULL);
}

int tnd_lessons_learn(tnd_lessons *self, const char *task, const char *mistake,
                      const char *correction, const char *const *paths)
{
    return tnd_lessons_add(NULL, self, tnd_lessons_task_type(task), mistake,
                           correction, paths);
}

void tnd_lessons_applied(tnd_lessons *self, const char *const *ids,
                         bool success)
{
    change *c = log_change(self, APPLIED);

    if (c) {
        c->paths = list_copy(ids);
        c->success = success;
    }
    for (size_t i = 0; ids && ids[i]; i++) {
        ssize_t at = index_of(self, ids[i]);
        tnd_lesson *l;
        if (at < 0)
            continue;
        l = self->items[at];
        if (l->times_applied < 1000000000L)
            l->times_applied++;
        l->effectiveness = EMA_KEEP * l->effectiveness +
                           (1.0 - EMA_KEEP) * (success ? 1.0 : 0.0);
    }
}

static ssize_t find_index(const tnd_lessons *self, const char *prefix)
{
    char want[TND_LESSON_ID_MAX + 1];
    size_t len = prefix ? strlen(prefix) : 0, matches = 0;
    ssize_t found = TND_ENOTFOUND;
    char *shown;

    if (len == 0)
        return tnd_error_set("give a lesson id (or the start of one)");
    for (size_t i = 0; i < len && i < TND_LESSON_ID_MAX; i++)
        want[i] = (char)tolower((unsigned char)prefix[i]);
    want[len < TND_LESSON_ID_MAX ? len : TND_LESSON_ID_MAX] = '\0';
    for (size_t i = 0; len <= TND_LESSON_ID_MAX && i < self->n; i++) {
        if (strcmp(self->items[i]->id, want) == 0)
            return (ssize_t)i; /* an exact id beats longer ones it starts */
        if (strncmp(self->items[i]->id, want, len) == 0 && matches++ == 0)
            found = (ssize_t)i;
    }
    shown = tnd_str_printable(prefix, 40);
    if (matches > 1)
        found = tnd_error_set("'%s' is the start of %zu lesson ids; give "
                              "more of it (see 'tandem lessons list')",
                              shown, matches);
    else if (matches == 0)
        tnd_error_set("no lesson has an id starting with '%s' (see "
                      "'tandem lessons list')",
                      shown);
    free(shown);
    return found;
}

int tnd_lessons_find(const tnd_lesson **out, const tnd_lessons *self,
                     const char *id_or_prefix)
{
    ssize_t i = find_index(self, id_or_prefix);

    *out = i >= 0 ? self->items[i] : NULL;
    return i >= 0 ? 0 : (int)i;
}

int tnd_lessons_forget(tnd_lessons *self, const char *id_or_prefix)
{
    ssize_t i = find_index(self, id_or_prefix);
    change *c;

    if (i < 0)
        return (int)i;
    if ((c = log_change(self, FORGOT)))
        c->id = tnd_xstrdup(self->items[i]->id);
    remove_at(self, (size_t)i);
    return 0;
}

/* ---- text --------------------------------------------------------------- */

/* Append s with each run of whitespace folded to one space. */
static void folded(tnd_buf *b, const char *s)
{
    bool space = false;

    while (isspace((unsigned char)*s))
        s++;
    for (; *s; s++) {
        if (isspace((unsigned char)*s) || (unsigned char)*s < 0x20 ||
            *s == 0x7f) {
            space = true;
            continue;
        }
        if (space)
            tnd_buf_puts(b, " ");
        space = false;
        tnd_buf_append(b, s, 1);
    }
}

char *tnd_lessons_render(const tnd_lesson *l)
{
    tnd_buf b;
    char *all, *out;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "Mistake: ");
    folded(&b, l->mistake);
    tnd_buf_puts(&b, " Correction: ");
    folded(&b, l->correction);
    all = tnd_buf_detach(&b, NULL);
    if (strlen(all) <= TND_LESSON_RENDER_MAX)
        return all;
    out = text_copy(all, TND_LESSON_RENDER_MAX - 3);
    free(all);
    all = tnd_xasprintf("%s...", out);
    free(out);
    return all;
}
