/* Critique extraction from a model's answer (see critique.h).
 *
 * The answer is searched whole, not up to the first critique that
 * parses: a model that drafts "approve" and then settles on "revise" has
 * given two answers, and taking the first (or the last) is a guess the
 * gate would then act on. So every place a critique could be is read,
 * within caps, and the answer holds a critique only when exactly one
 * thing in it claims to be one, or all that do are the same critique. */
#include "agents/critique.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "proto/json.h"

/* Caps on the work one answer can cause: candidates parsed as JSON, and
 * '{' in the prose matched to their '}'. Each is linear in the answer. */
#define MAX_CANDIDATES 16
#define MAX_SCANNED    64

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Where a scan of JSON-like text is: inside a string (and just after a
 * backslash in it), or outside. */
typedef struct lexer {
    bool in_string, escaped;
} lexer;

/* Feed the next character; true when it belongs to a string (its quotes
 * included), which a scan for structure passes over. */
static bool in_string(lexer *lx, char c)
{
    if (lx->in_string) {
        if (lx->escaped)
            lx->escaped = false;
        else if (c == '\\')
            lx->escaped = true;
        else if (c == '"')
            lx->in_string = false;
        return true;
    }
    if (c == '"')
        lx->in_string = true;
    return lx->in_string;
}

/* Copy of text[0..len) with commas that directly precede '}' or ']'
 * (whitespace between) removed, leaving string contents alone. */
static char *drop_trailing_commas(const char *text, size_t len)
{
    char *out = tnd_xmalloc(len + 1);
    size_t o = 0;
    lexer lx = {false, false};

    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!in_string(&lx, c) && c == ',') {
            size_t j = i + 1;
            while (j < len && is_space(text[j]))
                j++;
            if (j < len && (text[j] == '}' || text[j] == ']'))
                continue;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* End (exclusive) of the balanced {...} starting at text[start], or 0. */
static size_t balanced_end(const char *text, size_t start)
{
    int depth = 0;
    lexer lx = {false, false};

    for (size_t i = start; text[i]; i++) {
        char c = text[i];
        if (in_string(&lx, c))
            continue;
        if (c == '{')
            depth++;
        else if (c == '}' && --depth == 0)
            return i + 1;
        if (depth > TND_JSON_MAX_DEPTH)
            return 0;
    }
    return 0;
}

/* A JSON object that could be or hold a critique opens at text[at]
 * ('{'): the next thing is a key. Code in prose ("int f(void) { return
 * 0; }") is passed over without spending a candidate, and so is an empty
 * object ("const opts = {};"), which holds nothing: 16 of them in the
 * code a critique quoted used up the candidates, and the critique after
 * them, or before them, was refused. */
static bool could_open_object(const char *text, size_t at)
{
    for (at++; is_space(text[at]); at++)
        ;
    return text[at] == '"';
}

/* Or an object a model wrote as JavaScript: {'verdict': or {verdict:. */
static bool could_be_broken(const char *text, size_t at)
{
    for (at++; is_space(text[at]); at++)
        ;
    return text[at] == '\'' || strncmp(text + at, "verdict", 7) == 0;
}

/* Whether text[0..len) names a verdict as a key: "verdict", 'verdict' or
 * verdict, then a colon. */
static bool mentions_verdict(const char *text, size_t len)
{
    static const char word[] = "verdict";
    const size_t n = sizeof(word) - 1;

    for (size_t i = 0; i + n <= len; i++) {
        size_t j = i + n, k = i;
        bool quoted;
        if (memcmp(text + i, word, n) != 0 ||
            (i > 0 && (text[i - 1] == '_' ||
                       (text[i - 1] >= 'a' && text[i - 1] <= 'z') ||
                       (text[i - 1] >= 'A' && text[i - 1] <= 'Z'))))
            continue;
        quoted = i > 0 && (text[i - 1] == '"' || text[i - 1] == '\'');
        if (!quoted) {
            /* bare, a key only after '{' or ',': "my verdict: approve"
             * in prose is no key */
            while (k > 0 && is_space(text[k - 1]))
                k--;
            if (k == 0 || (text[k - 1] != '{' && text[k - 1] != ','))
                continue;
        }
        if (j < len && (text[j] == '"' || text[j] == '\''))
            j++;
        while (j < len && is_space(text[j]))
            j++;
        if (j < len && text[j] == ':')
            return true;
    }
    return false;
}

/* An object in the answer that claims to be the critique: a JSON object
 * with a top-level "verdict". */
typedef struct claim {
    size_t start, end;      /* where it is in the answer */
    tnd_critique *critique; /* NULL when it is not a valid critique */
    const char *kind;       /* what is wrong with it: "the critique is
                               ambiguous", "... does not match the schema" */
    char *error;            /* the detail ("key 'verdict' appears twice");
                               NULL for a valid critique */
} claim;

/* Text that names a verdict but is not JSON: a claim the model broke
 * (an unescaped quote, a comment, single quotes, a brace left open). */
typedef struct broken {
    size_t start, end;
    char *error;
} broken;

typedef struct search {
    const char *answer;
    claim claims[MAX_CANDIDATES]; /* in the order they were found */
    size_t nclaims;
    broken broken[MAX_CANDIDATES + MAX_SCANNED];
    size_t nbroken;
    char *other_error; /* schema error of a JSON object with no verdict */
    bool saw_json;
    bool cut_short; /* a cap left part of the answer unread */
    int tries;
} search;

/* The claim whose text holds offset at, or NULL. What lies inside a claim
 * is part of it (its issues, a quoted object), never another candidate. */
static const claim *claim_at(const search *s, size_t at)
{
    for (size_t i = 0; i < s->nclaims; i++)
        if (at >= s->claims[i].start && at < s->claims[i].end)
            return &s->claims[i];
    return NULL;
}

/* Beyond the schema, what we ask of a model: every issue shows its
 * proof (a tool excerpt or code as evidence, or a file and line). An
 * issue without it is an opinion, and the re-ask says so. */
static int check_evidence(const tnd_critique *c)
{
    for (size_t i = 0; i < c->nissues; i++) {
        const tnd_issue *is = &c->issues[i];
        if ((!is->evidence || !*is->evidence) && !(is->file && is->line > 0))
            return tnd_error_set("issues[%zu] cites no evidence: give "
                                 "'evidence' (a tool excerpt or the code) or "
                                 "'file' and 'line'",
                                 i);
    }
    return 0;
}

/* Read a claim: a repeated key first (json-c has already dropped one of
 * its values, so the schema would check a guess), then the schema and
 * the evidence. */
static void read_claim(claim *c, json_object *obj, const char *text)
{
    if (tnd_json_check_unique_keys(text, strlen(text)) < 0) {
        c->kind = "the critique is ambiguous";
        c->error = tnd_xstrdup(tnd_error_last());
        return;
    }
    if (tnd_critique_from_json(&c->critique, obj) < 0 ||
        check_evidence(c->critique) < 0) {
        tnd_critique_destroy(&c->critique);
        c->kind = "the critique does not match the schema";
        c->error = tnd_xstrdup(tnd_error_last());
    }
}

static void note_broken(search *s, size_t start, size_t end)
{
    broken *b;

    if (s->nbroken == sizeof(s->broken) / sizeof(s->broken[0]))
        return;
    b = &s->broken[s->nbroken++];
    b->start = start;
    b->end = end;
    b->error = tnd_xstrdup(tnd_error_last());
}

/* Try answer[start..end) as a candidate. */
static void consider(search *s, size_t start, size_t end)
{
    json_object *obj = NULL;
    size_t first = start;
    char *clean;

    while (first < end && is_space(s->answer[first]))
        first++;
    /* only an object or a list can be or hold the critique */
    if (first == end || (s->answer[first] != '{' && s->answer[first] != '['))
        return;
    if (claim_at(s, start))
        return;
    if (s->tries == MAX_CANDIDATES) {
        s->cut_short = true;
        return;
    }
    s->tries++;
    clean = drop_trailing_commas(s->answer + start, end - start);
    if (tnd_json_parse(&obj, clean, strlen(clean)) < 0) {
        if (mentions_verdict(clean, strlen(clean)))
            note_broken(s, start, end);
    } else {
        s->saw_json = true;
        if (json_object_is_type(obj, json_type_object) &&
            json_object_object_get_ex(obj, "verdict", NULL)) {
            claim *c = &s->claims[s->nclaims++];
            c->start = start;
            c->end = end;
            read_claim(c, obj, clean);
        } else if (json_object_is_type(obj, json_type_object) &&
                   !s->other_error) {
            tnd_critique *none = NULL;
            if (tnd_critique_from_json(&none, obj) < 0)
                s->other_error = tnd_xstrdup(tnd_error_last());
            tnd_critique_destroy(&none);
        }
    }
    json_object_put(obj);
    free(clean);
}

static void find_candidates(search *s)
{
    const char *answer = s->answer, *p;
    size_t len = strlen(answer);
    bool unclosed = false;
    int scanned = 0;

    consider(s, 0, strlen(answer));
    /* fenced blocks: ``` or ```json ... ``` */
    for (p = strstr(answer, "```"); p;) {
        const char *body = strchr(p + 3, '\n');
        const char *end;
        if (!body)
            break;
        body++;
        end = strstr(body, "```");
        if (!end)
            break;
        consider(s, (size_t)(body - answer), (size_t)(end - answer));
        p = strstr(end + 3, "```");
    }
    /* balanced objects in the prose; each match is linear, the cap keeps
     * the whole so */
    for (p = strchr(answer, '{'); p; p = strchr(p + 1, '{')) {
        size_t at = (size_t)(p - answer), end;
        const claim *c = claim_at(s, at);
        if (c) {
            p = answer + c->end - 1; /* past the claim */
            continue;
        }
        if (!could_open_object(answer, at) && !could_be_broken(answer, at))
            continue;
        if (scanned++ == MAX_SCANNED) {
            s->cut_short = true;
            break;
        }
        if ((end = balanced_end(answer, at)) != 0) {
            consider(s, at, end);
        } else if (!unclosed) {
            /* never closed: the rest of the answer, once (every later
             * '{' lies inside it) */
            unclosed = true;
            if (mentions_verdict(answer + at, len - at)) {
                tnd_error_set("a '{' is never closed");
                note_broken(s, at, len);
            }
        }
    }
}

/* Broken claims that hold no valid claim become invalid claims: the
 * model may have meant one (a draft "approve" then a final "revise"
 * that does not parse must not leave the draft standing). One that holds
 * a claim is the text around it (the whole answer: JSON and prose). */
/* Whether answer[start..end) names a verdict outside the claims in it:
 * JSON with prose around it names one only inside its claim, while a
 * broken object or a brace left open before a valid claim names its own
 * (all the text to the end was taken as holding the claim, and a broken
 * final "revise" after a draft was dropped: a review found it). */
static bool verdict_outside_claims(const search *s, size_t start, size_t end)
{
    size_t at = start;

    while (at < end) {
        size_t next = end, skip = end;
        for (size_t k = 0; k < s->nclaims; k++)
            if (s->claims[k].start >= at && s->claims[k].start < next) {
                next = s->claims[k].start;
                skip = s->claims[k].end;
            }
        if (mentions_verdict(s->answer + at, next - at))
            return true;
        at = skip;
    }
    return false;
}

static void add_broken(search *s)
{
    size_t nvalid = s->nclaims; /* the claims found; broken ones follow */

    /* text left unread may hold more claims: that is the error then */
    if (s->cut_short)
        return;
    for (size_t i = 0; i < s->nbroken && s->nclaims < MAX_CANDIDATES; i++) {
        broken *b = &s->broken[i];
        size_t had = s->nclaims;
        bool own, again = false;
        s->nclaims = nvalid; /* outside the claims found, not the broken */
        own = verdict_outside_claims(s, b->start, b->end);
        s->nclaims = had;
        /* the same text again (the whole answer, then its first brace) */
        for (size_t k = nvalid; k < s->nclaims && !again; k++)
            again =
                b->start >= s->claims[k].start && b->start < s->claims[k].end;
        if (own && !again) {
            claim *c = &s->claims[s->nclaims++];
            memset(c, 0, sizeof(*c));
            c->start = b->start;
            c->end = b->end;
            c->kind = "the critique is not valid JSON";
            c->error = b->error;
            b->error = NULL;
        }
    }
}

static int by_position(const void *a, const void *b)
{
    const claim *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* issues[i] of two critiques: as differ() below. */
static bool issue_differs(tnd_buf *b, size_t i, const tnd_issue *u,
                          const tnd_issue *v)
{
    const char *field = NULL;

    if (u->type != v->type) {
        tnd_buf_printf(b, "issues[%zu].type '%s' then '%s'", i,
                       tnd_issue_type_name(u->type),
                       tnd_issue_type_name(v->type));
        return true;
    }
    if (u->severity != v->severity) {
        tnd_buf_printf(b, "issues[%zu].severity '%s' then '%s'", i,
                       tnd_severity_name(u->severity),
                       tnd_severity_name(v->severity));
        return true;
    }
    if (u->line != v->line) {
        tnd_buf_printf(b, "issues[%zu].line %ld then %ld", i, u->line, v->line);
        return true;
    }
    if (!same_text(u->file, v->file))
        field = "file";
    else if (!same_text(u->description, v->description))
        field = "description";
    else if (!same_text(u->evidence, v->evidence))
        field = "evidence";
    else if (!same_text(u->suggested_fix, v->suggested_fix))
        field = "suggested_fix";
    if (field)
        tnd_buf_printf(b, "issues[%zu].%s differs", i, field);
    return field != NULL;
}

/* Describe the first way y differs from x into b, in terms a model can
 * act on ("issues[0].severity 'major' then 'minor'"); false when they
 * are the same critique. */
static bool differ(tnd_buf *b, const tnd_critique *x, const tnd_critique *y)
{
    if (x->verdict != y->verdict) {
        tnd_buf_printf(b, "'%s' then '%s'", tnd_verdict_name(x->verdict),
                       tnd_verdict_name(y->verdict));
        return true;
    }
    if (x->confidence != y->confidence) {
        tnd_buf_printf(b, "confidence %g then %g", x->confidence,
                       y->confidence);
        return true;
    }
    if (x->nissues != y->nissues) {
        tnd_buf_printf(b, "%zu issue%s then %zu issue%s", x->nissues,
                       x->nissues == 1 ? "" : "s", y->nissues,
                       y->nissues == 1 ? "" : "s");
        return true;
    }
    for (size_t i = 0; i < x->nissues; i++)
        if (issue_differs(b, i, &x->issues[i], &y->issues[i]))
            return true;
    for (int k = 0; k < TND_CRITERIA; k++) {
        const tnd_criterion *u = &x->criteria[k], *v = &y->criteria[k];
        if (u->present != v->present ||
            (u->present &&
             (u->score != v->score || !same_text(u->reason, v->reason)))) {
            tnd_buf_printf(b, "criteria.%s differs",
                           tnd_criterion_name((tnd_criterion_kind)k));
            return true;
        }
    }
    if (!same_text(x->summary, y->summary)) {
        tnd_buf_puts(b, "the summary differs");
        return true;
    }
    return false;
}

/* The one critique the claims make, or -1 saying why there is none. */
static int one_critique(tnd_critique **out, search *s)
{
    claim *c = s->claims;
    size_t n = s->nclaims;
    /* a cap left text unread: the count is what was read */
    const char *at_least = s->cut_short ? "at least " : "";
    tnd_buf why;

    if (n > 1) /* qsort wants a pointer even for none */
        qsort(c, n, sizeof(*c), by_position);
    if (n == 1 && c[0].error)
        return tnd_error_set("%s: %s", c[0].kind, c[0].error);
    /* A valid critique beside one that is not is no better than two that
     * disagree: the broken one may be what the model meant. */
    for (size_t i = 0; i < n; i++)
        if (c[i].error)
            return tnd_error_set("the answer holds %s%zu critiques and "
                                 "critique %zu is not valid: %s; answer with "
                                 "exactly one JSON object",
                                 at_least, n, i + 1, c[i].error);
    /* Identical copies (a model that quotes its answer again) are one
     * critique: nothing is chosen by taking the first. Any difference,
     * even in the summary, is refused: all of the critique reaches the
     * coder as feedback and a quorum's merge, not only what the gate
     * weighs, and a model that changed its mind should say which mind. */
    tnd_buf_init(&why, TND_BUF_NOCAP);
    for (size_t i = 1; i < n; i++) {
        if (differ(&why, c[0].critique, c[i].critique)) {
            tnd_error_set("the answer holds %s%zu critiques that disagree: "
                          "%s; answer with exactly one JSON object",
                          at_least, n, tnd_buf_str(&why));
            tnd_buf_free(&why);
            return -1;
        }
    }
    tnd_buf_free(&why);
    /* A cap left text unread: a different critique may be there. */
    if (s->cut_short)
        return tnd_error_set("the answer holds too many JSON candidates to "
                             "tell whether its critique is the only one; "
                             "answer with exactly one JSON object");
    *out = c[0].critique;
    c[0].critique = NULL;
    return 0;
}

int tnd_critique_parse(tnd_critique **out, const char *answer)
{
    search s;
    int error = -1;

    *out = NULL;
    memset(&s, 0, sizeof(s));
    s.answer = answer;
    find_candidates(&s);
    add_broken(&s);
    if (s.nclaims)
        error = one_critique(out, &s);
    else if (s.cut_short)
        tnd_error_set("the answer holds too many JSON candidates to find its "
                      "critique among them; answer with exactly one JSON "
                      "object");
    else if (s.other_error)
        tnd_error_set("the critique does not match the schema: %s",
                      s.other_error);
    else if (s.saw_json)
        tnd_error_set("the answer holds JSON but no critique object");
    else
        tnd_error_set("no JSON critique found in the answer (expected an "
                      "object with verdict, confidence, issues, summary)");
    for (size_t i = 0; i < s.nclaims; i++) {
        tnd_critique_destroy(&s.claims[i].critique);
        free(s.claims[i].error);
    }
    for (size_t i = 0; i < s.nbroken; i++)
        free(s.broken[i].error);
    free(s.other_error);
    return error;
}
