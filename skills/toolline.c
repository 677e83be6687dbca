/* What one line of a tool's output says (see toolline.h).
 *
 * Each reader is a small hand-written scanner over (line, len) rather
 * than a regular expression: the lines come from any tool, in floods,
 * and may hold any bytes. The failure test reads the line in three
 * steps: its shape (a diagnostic, make's "***", TAP's "not ok", a
 * passing test), fixed phrases ("segmentation fault"), then word by
 * word, where a failure word next to a count ("0 failed", "Failed: 3")
 * lets the count decide. */
#include "skills/toolline.h"

#include <stdint.h>
#include <string.h>

/* ---- characters and words ----------------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static size_t strip_cr(const char *s, size_t len)
{
    return len && s[len - 1] == '\r' ? len - 1 : len;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && !memcmp(s, prefix, n);
}

/* Does s[0..len) hold needle (lower case), ignoring ASCII case? The
 * needles are short, so this stays linear in len. */
static bool has_ci(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++) {
        size_t k = 0;

        while (k < n && lower(s[i + k]) == needle[k])
            k++;
        if (k == n)
            return true;
    }
    return false;
}

static bool word_eq(const char *w, size_t n, const char *word)
{
    return strlen(word) == n && !memcmp(w, word, n);
}

static bool word_eq_ci(const char *w, size_t n, const char *word)
{
    if (strlen(word) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(w[i]) != word[i])
            return false;
    return true;
}

static bool all_digits(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit(w[i]))
            return false;
    return n > 0;
}

/* The value of n digits, saturated: only "zero or not" matters. */
static size_t number(const char *w, size_t n)
{
    size_t v = 0;

    for (size_t i = 0; i < n && v < 1000000000; i++)
        v = v * 10 + (size_t)(w[i] - '0');
    return v;
}

/* ---- compiler diagnostics and what goes with them ----------------------- */

tnd_toolline_severity tnd_toolline_diagnostic(const char *s, size_t len)
{
    static const struct {
        const char *word;
        tnd_toolline_severity sev;
    } words[] = {{"warning:", TND_TOOLLINE_WARNING},
                 {"error:", TND_TOOLLINE_ERROR},
                 {"fatal error:", TND_TOOLLINE_ERROR},
                 {"note:", TND_TOOLLINE_NOTE}};
    size_t i = 0, j;
    bool place = false;

    while (i < len && s[i] != ':' && !blank(s[i]))
        i++;
    if (i == 0 || i >= len || s[i] != ':')
        return TND_TOOLLINE_NONE;
    i++;
    for (int part = 0; part < 2 && i < len && is_digit(s[i]); part++) {
        for (j = i; j < len && is_digit(s[j]); j++)
            ;
        if (j >= len || s[j] != ':')
            return TND_TOOLLINE_NONE;
        i = j + 1;
        place = true;
    }
    if (i >= len || s[i] != ' ')
        return TND_TOOLLINE_NONE;
    i++;
    for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++)
        if (starts(s + i, len - i, words[k].word))
            return words[k].sev;
    return place && i < len && s[i] == ' ' ? TND_TOOLLINE_PLACE
                                           : TND_TOOLLINE_NONE;
}

bool tnd_toolline_is_header(const char *s, size_t len)
{
    size_t i = 0;

    if (starts(s, len, "In file included from "))
        return true;
    if (!len || (s[len - 1] != ':' && s[len - 1] != ','))
        return false;
    while (i < len && blank(s[i]))
        i++;
    if (i > 0)
        return starts(s + i, len - i, "from ");
    while (i < len && s[i] != ':' && !blank(s[i]))
        i++;
    return i > 0 && s[len - 1] == ':' &&
           (starts(s + i, len - i, ": In ") || starts(s + i, len - i, ": At "));
}

bool tnd_toolline_is_excerpt(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && s[i] == ' ')
        i++;
    while (i < len && (is_digit(s[i]) || s[i] == '+'))
        i++;
    while (i < len && s[i] == ' ')
        i++;
    return i > 0 && i < len && s[i] == '|';
}

bool tnd_toolline_is_caret(const char *s, size_t len)
{
    bool mark = false;

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '^' || s[i] == '~')
            mark = true;
        else if (!blank(s[i]))
            return false;
    }
    return mark;
}

/* ---- failures ----------------------------------------------------------- */

/* "ok 3 - ...", "[ OK ] ...", "PASS: ...": a passing test's line, whatever
 * words its name holds ("ok 3 - handles failed reads"). */
static bool is_passing(const char *s, size_t len)
{
    size_t i = 0, j;

    while (i < len && blank(s[i]))
        i++;
    s += i;
    len -= i;
    if (word_eq(s, len, "ok") || starts(s, len, "ok ") ||
        starts(s, len, "PASS") || starts(s, len, "--- PASS"))
        return true;
    if (!len || s[0] != '[')
        return false;
    for (i = 1; i < len && s[i] == ' '; i++)
        ;
    for (j = i; j < len && is_word(s[j]); j++)
        ;
    if (!word_eq_ci(s + i, j - i, "ok") && !word_eq(s + i, j - i, "PASSED"))
        return false;
    while (j < len && s[j] == ' ')
        j++;
    return j < len && s[j] == ']';
}

/* make's "make: *** [x] Error 1", "make[2]: *** ...", "gmake: ***". */
static bool is_make_failure(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && (is_word(s[i]) || s[i] == '-' || s[i] == '.'))
        i++;
    if (i == 0)
        return false;
    if (i < len && s[i] == '[') {
        for (i++; i < len && is_digit(s[i]); i++)
            ;
        if (i >= len || s[i] != ']')
            return false;
        i++;
    }
    return starts(s + i, len - i, ": ***");
}

/* TAP: "not ok 3 - ...", unless it is a TODO or a SKIP. */
static bool is_tap_failure(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && blank(s[i]))
        i++;
    if (!starts(s + i, len - i, "not ok") || (len - i > 6 && !blank(s[i + 6])))
        return false;
    return !has_ci(s, len, "# todo") && !has_ci(s, len, "# skip");
}

typedef struct span {
    size_t s, e; /* a word at [s, e); s == e: none */
} span;

/* Only blanks between a and b? */
static bool adjacent(const char *line, size_t a, size_t b)
{
    for (size_t i = a; i < b; i++)
        if (!blank(line[i]))
            return false;
    return true;
}

/* A count just before the word at w: "0 failed", "1 tests failed".
 * SIZE_MAX when there is none. */
static size_t count_before(const char *line, const span *prev, size_t w)
{
    if (prev[0].e == prev[0].s || !adjacent(line, prev[0].e, w))
        return SIZE_MAX;
    if (all_digits(line + prev[0].s, prev[0].e - prev[0].s))
        return number(line + prev[0].s, prev[0].e - prev[0].s);
    if (prev[1].e > prev[1].s && adjacent(line, prev[1].e, prev[0].s) &&
        all_digits(line + prev[1].s, prev[1].e - prev[1].s))
        return number(line + prev[1].s, prev[1].e - prev[1].s);
    return SIZE_MAX;
}

/* A count just after position e: "Failed: 0", "failed=2", "FAIL:  0".
 * strict: the number must end the line or be followed by ",;)" (so that
 * "FAIL: 0 != 1" is not read as a count of zero); else a blank after it
 * will do too ("failed=0  skipped=0"). SIZE_MAX when there is none. */
static size_t count_after(const char *line, size_t len, size_t e, bool strict)
{
    size_t i = e, j;

    while (i < len && blank(line[i]))
        i++;
    if (i < len && (line[i] == ':' || line[i] == '='))
        i++;
    while (i < len && blank(line[i]))
        i++;
    for (j = i; j < len && is_digit(line[j]); j++)
        ;
    if (j == i)
        return SIZE_MAX;
    if (j == len || strchr(",;)", line[j]) || (!strict && blank(line[j])))
        return number(line + i, j - i);
    return SIZE_MAX;
}

/* The exit status after "exited": "exited with code 2", "exited with
 * status 1"; SIZE_MAX when there is none. */
static size_t exit_after(const char *line, size_t len, size_t e)
{
    static const char *const filler[] = {"with", "code", "status", "exit",
                                         "value"};
    size_t i = e, j;

    for (int words = 0; words < 4; words++) {
        bool skipped = false;

        while (i < len && (blank(line[i]) || line[i] == ':' || line[i] == '='))
            i++;
        if (i < len && line[i] == '-')
            i++;
        for (j = i; j < len && is_word(line[j]); j++)
            ;
        if (all_digits(line + i, j - i))
            return number(line + i, j - i);
        for (size_t k = 0; k < sizeof(filler) / sizeof(*filler); k++)
            if (word_eq_ci(line + i, j - i, filler[k]))
                skipped = true;
        if (!skipped)
            return SIZE_MAX;
        i = j;
    }
    return SIZE_MAX;
}

enum { NEUTRAL, FAILURE };

/* What the word line[s..e) says, given the two words before it. */
static int judge_word(const char *line, size_t len, size_t s, size_t e,
                      const span *prev)
{
    static const char *const upper[] = {
        "FAIL", "FAILED", "FAILURE", "FAILURES", "ERROR", "ERRORS", "FATAL"};
    static const char *const counted[] = {"fail",    "failed",  "fails",
                                          "failing", "failure", "failures",
                                          "error",   "errors"};
    const char *w = line + s;
    size_t n = e - s, count;
    char after = e < len ? line[e] : '\0';
    bool up = false, ci = false;

    if (word_eq(w, n, "Aborted") || word_eq(w, n, "Traceback") ||
        starts(w, n, "Assertion") || (word_eq(w, n, "panic") && after == ':'))
        return FAILURE;
    /* ValueError:, java.lang.NullPointerException */
    if ((after == ':' || after == '\0') &&
        ((n > 5 && !memcmp(w + n - 5, "Error", 5)) ||
         (n > 9 && !memcmp(w + n - 9, "Exception", 9))))
        return FAILURE;
    if ((word_eq_ci(w, n, "status") || word_eq_ci(w, n, "code")) &&
        prev[0].e > prev[0].s &&
        word_eq_ci(line + prev[0].s, prev[0].e - prev[0].s, "exit")) {
        /* ld's "returned 1 exit status" */
        count = SIZE_MAX;
        if (prev[1].e > prev[1].s && adjacent(line, prev[1].e, prev[0].s) &&
            all_digits(line + prev[1].s, prev[1].e - prev[1].s))
            count = number(line + prev[1].s, prev[1].e - prev[1].s);
        if (count == SIZE_MAX)
            count = exit_after(line, len, e);
        return count != SIZE_MAX && count > 0 ? FAILURE : NEUTRAL;
    }
    if (word_eq_ci(w, n, "exited")) {
        count = exit_after(line, len, e);
        return count != SIZE_MAX && count > 0 ? FAILURE : NEUTRAL;
    }
    for (size_t k = 0; k < sizeof(upper) / sizeof(*upper); k++)
        up = up || word_eq(w, n, upper[k]);
    for (size_t k = 0; k < sizeof(counted) / sizeof(*counted); k++)
        ci = ci || word_eq_ci(w, n, counted[k]);
    if (!up && !ci)
        return NEUTRAL;
    /* valgrind's "ERROR SUMMARY: 0 errors": the count decides */
    if (up && starts(line + e, len - e, " SUMMARY"))
        return NEUTRAL;
    count = count_before(line, prev, s);
    /* "error:" and "Failure:" label a failure; "Errors: 0" counts */
    if (count == SIZE_MAX && !up && after == ':' &&
        (word_eq_ci(w, n, "error") || word_eq_ci(w, n, "failure") ||
         word_eq_ci(w, n, "fail")))
        return FAILURE;
    if (count == SIZE_MAX)
        count = count_after(line, len, e, up);
    if (count != SIZE_MAX)
        return count > 0 ? FAILURE : NEUTRAL;
    if (up || word_eq_ci(w, n, "failed") || word_eq_ci(w, n, "fails") ||
        after == ':')
        return FAILURE;
    return NEUTRAL;
}

bool tnd_toolline_is_failure(const char *line, size_t len)
{
    static const char *const phrases[] = {
        "segmentation fault",   "core dumped",
        "undefined reference",  "fatal error",
        "panicked at",          "warnings being treated as errors",
        "errors while running", "stack smashing detected",
        "non-zero exit",        "non-zero status",
        "nonzero exit",
    };
    span prev[2] = {{0, 0}, {0, 0}};
    size_t i = 0;

    len = strip_cr(line, len);
    if (len < 4) /* shorter than "FAIL": quick, for floods of tiny lines */
        return false;
    switch (tnd_toolline_diagnostic(line, len)) {
    case TND_TOOLLINE_ERROR:
        return true;
    case TND_TOOLLINE_WARNING:
    case TND_TOOLLINE_NOTE:
        return false;
    default:
        break;
    }
    if (starts(line, len, "[tandem: ") || is_make_failure(line, len) ||
        is_tap_failure(line, len))
        return true;
    if (is_passing(line, len))
        return false;
    for (size_t k = 0; k < sizeof(phrases) / sizeof(*phrases); k++)
        if (has_ci(line, len, phrases[k]))
            return true;
    while (i < len) {
        size_t s;

        if (!is_word(line[i])) {
            i++;
            continue;
        }
        for (s = i; i < len && is_word(line[i]); i++)
            ;
        if (judge_word(line, len, s, i, prev) == FAILURE)
            return true;
        prev[1] = prev[0];
        prev[0] = (span){s, i};
    }
    return false;
}
