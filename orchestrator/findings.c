/* Findings in the formats CI reads (see findings.h).
 *
 * The list is built once, from the attempt the review decided on, and
 * written in one format: SARIF 2.1.0 (OASIS; the subset GitHub code
 * scanning reads is all there: tool.driver.rules, ruleId, level,
 * message.text, a repository-relative artifactLocation.uri,
 * region.startLine, partialFingerprints), reviewdog's rdjsonl
 * (reviewdog.proto's Diagnostic, one per line) and GitHub's workflow
 * commands (escaped as @actions/core escapes them). */
#include "orchestrator/findings.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/json.h"
#include "skills/excerpt.h"

/* Where people read about tandem: SARIF's tool.driver.informationUri.
 * The project has no published home yet; a build for one sets it
 * (make CFLAGS+='-DTND_HOMEPAGE=\"https://...\"'). */
#ifndef TND_HOMEPAGE
#define TND_HOMEPAGE "https://tandem.invalid/"
#endif

#define SARIF_SCHEMA                                                      \
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/" \
    "sarif-schema-2.1.0.json"

/* partialFingerprints' key: a versioned hierarchical string (SARIF
 * 3.27.17); a different way of computing it gets a new version. */
#define FINGERPRINT_KEY "tandemFindingHash/v1"

/* Bytes of a failing skill's output, and of an issue's evidence and
 * suggested fix, in a message. */
#define MAX_OUTPUT   1500
#define MAX_EVIDENCE 600

struct tnd_findings {
    tnd_finding *items; /* their strings are owned here */
    size_t n, alloc;
    char *not_done; /* why the review could not be done, or NULL */
    char *anchor;   /* where a result without a file goes, or NULL */
};

/* The rules of the critique's issue types, the gate, and (built from a
 * skill's name) a skill: SARIF's reportingDescriptors. */
typedef struct rule_info {
    const char *id, *name, *short_text, *full_text, *level;
} rule_info;

static const rule_info issue_rules[] = {
    {"issue/missing", "Missing", "The change leaves out part of the task.",
     "The reviewer found something the task asks for that the change does "
     "not do: a case not handled, a caller not updated, a test not "
     "written.",
     "warning"},
    {"issue/unsupported", "Unsupported",
     "The change relies on something the evidence does not support.",
     "The reviewer found a claim or an assumption in the change that the "
     "code, the tools' output or the task does not bear out.",
     "warning"},
    {"issue/incorrect", "Incorrect", "The change does something wrong.",
     "The reviewer found a bug in the change: a wrong result, a broken "
     "edge case, behaviour that is not what the task asks for.",
     "warning"},
    {"issue/superfluous", "Superfluous",
     "The change does more than the task needs.",
     "The reviewer found changes the task does not call for: unrelated "
     "edits, reformatting, dead code.",
     "warning"},
    {"issue/safety", "Safety",
     "The change risks a crash, a leak, a security hole or broken "
     "behaviour elsewhere.",
     "The reviewer found a risk to the program beyond the task: memory or "
     "resource safety, security, or behaviour other code relies on.",
     "warning"},
    {"issue/style", "Style", "The change is unclear or not idiomatic.",
     "The reviewer found code that works but is harder to read or keep "
     "than it needs to be.",
     "warning"},
};

static const rule_info gate_rule = {
    "gate", "Gate", "tandem's gate did not approve the change as it is.",
    "The change did not pass tandem's audit gate (the patch does not "
    "apply, a required check is missing, the critique could not be had, "
    "the reviewer is not confident enough), or it passed but waits for a "
    "person (it touches gate.risk_paths, or the reviewer is unsure).",
    "error"};

tnd_findings *tnd_findings_new(void)
{
    return tnd_xcalloc(1, sizeof(tnd_findings));
}

static void finding_free(tnd_finding *f)
{
    free((char *)f->rule);
    free((char *)f->title);
    free((char *)f->message);
    free((char *)f->file);
}

void tnd_findings_destroy(tnd_findings **self_p)
{
    tnd_findings *self = self_p ? *self_p : NULL;

    if (!self)
        return;
    for (size_t i = 0; i < self->n; i++)
        finding_free(&self->items[i]);
    free(self->items);
    free(self->not_done);
    free(self->anchor);
    free(self);
    *self_p = NULL;
}

/* A place as the formats name it, relative to the top: its empty and
 * "." segments left out. A model's ".//stats.c" (a file of the
 * workspace) came out as "/stats.c", an absolute path, with only "./"
 * taken off: a URI that leaves %SRCROOT% in SARIF, and a file of no
 * pull request in the GitHub and reviewdog formats. NULL when nothing
 * is left. */
static char *place(const char *file)
{
    tnd_buf b;

    if (!file)
        return NULL;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (const char *p = file; *p;) {
        size_t n = strcspn(p, "/");
        if (n > 0 && !(n == 1 && *p == '.')) {
            if (b.len > 0)
                tnd_buf_puts(&b, "/");
            tnd_buf_append(&b, p, n);
        }
        p += n;
        if (*p == '/')
            p++;
    }
    if (b.len == 0) {
        tnd_buf_free(&b);
        return NULL;
    }
    return tnd_buf_detach(&b, NULL);
}

void tnd_findings_add(tnd_findings *self, const tnd_finding *f)
{
    tnd_finding *to;

    TND_GROW(self->items, self->alloc, self->n + 1);
    to = &self->items[self->n++];
    to->rule = tnd_xstrdup(f->rule);
    to->level = f->level;
    to->title = tnd_xstrdup(f->title);
    to->message = tnd_xstrdup(f->message);
    to->file = place(f->file);
    to->line = to->file && f->line > 0 ? f->line : 0;
    to->col = to->line && f->col > 0 ? f->col : 0;
}

void tnd_findings_not_done(tnd_findings *self, const char *why)
{
    free(self->not_done);
    self->not_done = tnd_xstrdup(why ? why : "the review could not be done");
}

void tnd_findings_anchor(tnd_findings *self, const char *path)
{
    free(self->anchor);
    self->anchor = path ? tnd_xstrdup(path) : NULL;
}

size_t tnd_findings_count(const tnd_findings *self)
{
    return self->n;
}

const tnd_finding *tnd_findings_get(const tnd_findings *self, size_t i)
{
    return i < self->n ? &self->items[i] : NULL;
}

/* ---- from an attempt ----------------------------------------------------- */

/* Length of s cut to at most max bytes without splitting a UTF-8
 * sequence, for "%.*s". */
static int cut(const char *s, size_t max)
{
    return (int)tnd_utf8_whole(s, strnlen(s, max));
}

/* A copy of s with every registered secret redacted, "" for NULL: the
 * document is redacted whole when it is written, but a key a model echoed
 * across a cut made here would leave its head, which that cannot
 * recognise. Caller frees. */
static char *redacted(const char *s)
{
    return tnd_log_redact(tnd_xstrdup(s ? s : ""));
}

static bool required(const tnd_gate_input *in, const tnd_skill_result *s)
{
    if (s->required)
        return true;
    for (const char *const *r = in->required; r && *r; r++)
        if (strcmp(*r, s->name) == 0)
            return true;
    return false;
}

static const char *ended(tnd_skill_status st)
{
    switch (st) {
    case TND_SKILL_TIMEOUT:
        return "timed out";
    case TND_SKILL_ERROR:
        return "could not run";
    default:
        return "failed";
    }
}

/* A failing skill: its command and how it ended (and how it did before
 * the change), then the part of its output worth reading. */
static void add_skill(tnd_findings *self, const tnd_skill_result *s,
                      const tnd_skill_result *before, bool is_required)
{
    tnd_finding f = {0};
    tnd_buf b;
    char *out, *whole;
    size_t len;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, "%s (`%s`): %s", s->name, s->command ? s->command : "",
                   tnd_skill_status_name(s->status));
    if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
        tnd_buf_printf(&b, ", exit %d", s->exit_code);
    if (before && before->status == TND_SKILL_PASS)
        tnd_buf_puts(&b, ": a regression, it passed before the change");
    else if (before)
        tnd_buf_puts(&b, ": not fixed, it failed before the change too");
    whole = redacted(s->output);
    out = tnd_excerpt(whole, before ? before->output : NULL, MAX_OUTPUT, NULL);
    free(whole);
    len = strlen(out);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
        out[--len] = '\0';
    if (*out)
        tnd_buf_printf(&b, "\n%s", out);
    free(out);
    f.rule = tnd_xasprintf("skill/%s", s->name);
    f.level = is_required ? TND_FINDING_ERROR : TND_FINDING_WARNING;
    f.title = tnd_xasprintf("tandem: %s %s", s->name, ended(s->status));
    f.message = tnd_buf_str(&b);
    if (s->nlocations) {
        f.file = s->locations[0].file;
        f.line = s->locations[0].line;
        f.col = s->locations[0].col;
    }
    tnd_findings_add(self, &f);
    free((char *)f.rule);
    free((char *)f.title);
    tnd_buf_free(&b);
}

static tnd_finding_level issue_level(tnd_severity s)
{
    return s == TND_SEVERITY_CRITICAL ? TND_FINDING_ERROR
           : s == TND_SEVERITY_MAJOR  ? TND_FINDING_WARNING
                                      : TND_FINDING_NOTE;
}

static void add_issue(tnd_findings *self, const tnd_issue *is)
{
    tnd_finding f = {0};
    char *evidence = redacted(is->evidence), *fix = redacted(is->suggested_fix);
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, is->description ? is->description : "");
    if (*evidence)
        tnd_buf_printf(&b, "\nEvidence: %.*s", cut(evidence, MAX_EVIDENCE),
                       evidence);
    if (*fix)
        tnd_buf_printf(&b, "\nSuggested fix: %.*s", cut(fix, MAX_EVIDENCE),
                       fix);
    free(evidence);
    free(fix);
    f.rule = tnd_xasprintf("issue/%s", tnd_issue_type_name(is->type));
    f.level = issue_level(is->severity);
    f.title = tnd_xasprintf("tandem: %s (%s)", tnd_issue_type_name(is->type),
                            tnd_severity_name(is->severity));
    f.message = tnd_buf_str(&b);
    f.file = is->file;
    f.line = is->line;
    tnd_findings_add(self, &f);
    free((char *)f.rule);
    free((char *)f.title);
    tnd_buf_free(&b);
}

void tnd_findings_add_attempt(tnd_findings *self, const tnd_gate_input *in,
                              const tnd_gate_decision *decision)
{
    const tnd_audit_reply *a = in->audit;
    size_t from = self->n;
    bool explained = false;

    for (size_t i = 0; a && i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        if (s->status == TND_SKILL_PASS || s->status == TND_SKILL_SKIPPED)
            continue;
        add_skill(self, s, tnd_gate_before(in->baseline, s->name),
                  required(in, s));
    }
    for (size_t i = 0; a && a->critique && i < a->critique->nissues; i++)
        add_issue(self, &a->critique->issues[i]);
    for (size_t i = from; i < self->n; i++)
        explained = explained || self->items[i].level == TND_FINDING_ERROR;
    if (!decision->passed && !explained) {
        tnd_finding f = {.rule = gate_rule.id,
                         .level = TND_FINDING_ERROR,
                         .title = "tandem: not approved",
                         .message = decision->reason};
        tnd_findings_add(self, &f);
    } else if (decision->passed && decision->action == TND_GATE_ESCALATE) {
        tnd_finding f = {.rule = gate_rule.id,
                         .level = TND_FINDING_WARNING,
                         .title = "tandem: needs a person",
                         .message = decision->reason};
        tnd_findings_add(self, &f);
    }
}

/* ---- fingerprints and names ---------------------------------------------- */

uint64_t tnd_finding_fingerprint(const tnd_finding *f)
{
    const char *msg = f->message ? f->message : "";
    const char *file = f->file ? f->file : "";
    char *headline = tnd_xstrndup(msg, strcspn(msg, "\n"));
    char *norm = tnd_gate_normalise(headline);
    uint64_t h = TND_FNV_SEED;

    /* the NULs keep ("ab", "c") apart from ("a", "bc") */
    h = tnd_str_hash(h, f->rule, strlen(f->rule) + 1);
    h = tnd_str_hash(h, file, strlen(file) + 1);
    h = tnd_str_hash(h, norm, strlen(norm));
    free(norm);
    free(headline);
    return h;
}

int tnd_findings_format_parse(tnd_findings_format *out, const char *name)
{
    static const struct {
        const char *name;
        tnd_findings_format format;
    } formats[] = {
        {"sarif", TND_FINDINGS_SARIF},
        {"rdjsonl", TND_FINDINGS_RDJSONL},
        {"github", TND_FINDINGS_GITHUB},
    };

    for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
        if (strcmp(name, formats[i].name) == 0) {
            *out = formats[i].format;
            return 0;
        }
    return tnd_error_set("--format: unknown format \"%s\"; use sarif, "
                         "rdjsonl or github",
                         name);
}

static const char *level_name(tnd_finding_level l)
{
    return l == TND_FINDING_ERROR     ? "error"
           : l == TND_FINDING_WARNING ? "warning"
                                      : "note";
}

/* ---- SARIF 2.1.0 --------------------------------------------------------- */

static json_object *text_object(const char *text)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "text", json_object_new_string(text));
    return o;
}

static json_object *rule_json(const rule_info *r)
{
    json_object *o = json_object_new_object();
    json_object *conf = json_object_new_object();

    json_object_object_add(o, "id", json_object_new_string(r->id));
    json_object_object_add(o, "name", json_object_new_string(r->name));
    json_object_object_add(o, "shortDescription", text_object(r->short_text));
    json_object_object_add(o, "fullDescription", text_object(r->full_text));
    json_object_object_add(o, "help", text_object(r->full_text));
    json_object_object_add(conf, "level", json_object_new_string(r->level));
    json_object_object_add(o, "defaultConfiguration", conf);
    return o;
}

/* The rule's index in rules, adding it (a skill's, or one tandem does
 * not describe) when it is not there yet. */
static size_t rule_index(json_object *rules, const char *id)
{
    size_t n = json_object_array_length(rules);
    rule_info r = {id, id, NULL, NULL, "error"};
    char *short_text = NULL, *full_text = NULL;

    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(rules, i);
        if (strcmp(tnd_json_str_or(o, "id", ""), id) == 0)
            return i;
    }
    if (strncmp(id, "skill/", 6) == 0) {
        r.name = id + 6;
        r.short_text = short_text =
            tnd_xasprintf("The skill %s failed on the change.", id + 6);
        r.full_text = full_text = tnd_xasprintf(
            "A check the reviewer ran on the changed tree (%s, under skills "
            "in agents.yaml) failed, timed out or could not run.",
            id + 6);
    } else {
        r.short_text = r.full_text = id;
    }
    json_object_array_add(rules, rule_json(&r));
    free(short_text);
    free(full_text);
    return n;
}

/* A repository-relative path as a URI reference: bytes other than
 * unreserved characters, '/' and the sub-delimiters percent-encoded
 * (':' too, so a first segment never reads as a scheme). Caller frees. */
static char *uri_path(const char *path)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~/!$&'()*+,;=@", *p))
            tnd_buf_append(&b, p, 1);
        else
            tnd_buf_printf(&b, "%%%02X", *p);
    }
    return tnd_buf_detach(&b, NULL);
}

static json_object *location_json(const tnd_finding *f)
{
    json_object *loc = json_object_new_object();
    json_object *phys = json_object_new_object();
    json_object *art = json_object_new_object();
    json_object *list = json_object_new_array();
    char *uri = uri_path(f->file);

    json_object_object_add(art, "uri", json_object_new_string(uri));
    json_object_object_add(art, "uriBaseId",
                           json_object_new_string("%SRCROOT%"));
    json_object_object_add(phys, "artifactLocation", art);
    if (f->line > 0) {
        json_object *region = json_object_new_object();
        json_object_object_add(region, "startLine",
                               json_object_new_int64(f->line));
        if (f->col > 0)
            json_object_object_add(region, "startColumn",
                                   json_object_new_int64(f->col));
        json_object_object_add(phys, "region", region);
    }
    json_object_object_add(loc, "physicalLocation", phys);
    json_object_array_add(list, loc);
    free(uri);
    return list;
}

static json_object *result_json(const tnd_finding *f, json_object *rules,
                                const char *anchor)
{
    tnd_finding placed = *f;

    json_object *o = json_object_new_object();
    json_object *fp = json_object_new_object();
    size_t index = rule_index(rules, f->rule);
    char hex[32];

    json_object_object_add(o, "ruleId", json_object_new_string(f->rule));
    json_object_object_add(o, "ruleIndex",
                           json_object_new_int64((int64_t)index));
    json_object_object_add(o, "level",
                           json_object_new_string(level_name(f->level)));
    json_object_object_add(o, "message", text_object(f->message));
    if (!f->file && anchor) {
        placed.file = anchor;
        placed.line = 1;
        placed.col = 0;
    }
    if (placed.file)
        json_object_object_add(o, "locations", location_json(&placed));
    snprintf(hex, sizeof(hex), "%016llx",
             (unsigned long long)tnd_finding_fingerprint(f));
    json_object_object_add(fp, FINGERPRINT_KEY, json_object_new_string(hex));
    json_object_object_add(o, "partialFingerprints", fp);
    return o;
}

static json_object *invocation_json(const tnd_findings *self)
{
    json_object *list = json_object_new_array();
    json_object *inv = json_object_new_object();

    json_object_object_add(inv, "executionSuccessful",
                           json_object_new_boolean(!self->not_done));
    if (self->not_done) {
        json_object *notes = json_object_new_array();
        json_object *note = json_object_new_object();
        json_object_object_add(note, "level", json_object_new_string("error"));
        json_object_object_add(note, "message", text_object(self->not_done));
        json_object_array_add(notes, note);
        json_object_object_add(inv, "toolExecutionNotifications", notes);
    }
    json_object_array_add(list, inv);
    return list;
}

static char *sarif(const tnd_findings *self)
{
    json_object *log = json_object_new_object();
    json_object *runs = json_object_new_array();
    json_object *run = json_object_new_object();
    json_object *tool = json_object_new_object();
    json_object *driver = json_object_new_object();
    json_object *rules = json_object_new_array();
    json_object *results = json_object_new_array();
    char *text;

    for (size_t i = 0; i < sizeof(issue_rules) / sizeof(*issue_rules); i++)
        json_object_array_add(rules, rule_json(&issue_rules[i]));
    json_object_array_add(rules, rule_json(&gate_rule));
    for (size_t i = 0; i < self->n; i++)
        json_object_array_add(
            results, result_json(&self->items[i], rules, self->anchor));

    json_object_object_add(log, "$schema",
                           json_object_new_string(SARIF_SCHEMA));
    json_object_object_add(log, "version", json_object_new_string("2.1.0"));
    json_object_object_add(driver, "name", json_object_new_string("tandem"));
    json_object_object_add(driver, "version",
                           json_object_new_string(TND_VERSION));
    json_object_object_add(driver, "informationUri",
                           json_object_new_string(TND_HOMEPAGE));
    json_object_object_add(driver, "rules", rules);
    json_object_object_add(tool, "driver", driver);
    json_object_object_add(run, "tool", tool);
    json_object_object_add(run, "invocations", invocation_json(self));
    json_object_object_add(run, "results", results);
    json_object_array_add(runs, run);
    json_object_object_add(log, "runs", runs);
    text = tnd_json_pretty(log);
    json_object_put(log);
    return text;
}

/* ---- reviewdog rdjsonl --------------------------------------------------- */

static const char *rd_severity(tnd_finding_level l)
{
    return l == TND_FINDING_ERROR     ? "ERROR"
           : l == TND_FINDING_WARNING ? "WARNING"
                                      : "INFO";
}

static char *rdjsonl(const tnd_findings *self)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < self->n; i++) {
        const tnd_finding *f = &self->items[i];
        json_object *o = json_object_new_object();
        json_object *source = json_object_new_object();
        json_object *code = json_object_new_object();
        char *line;

        json_object_object_add(o, "message",
                               json_object_new_string(f->message));
        if (f->file) {
            json_object *loc = json_object_new_object();
            json_object_object_add(loc, "path",
                                   json_object_new_string(f->file));
            if (f->line > 0) {
                json_object *range = json_object_new_object();
                json_object *start = json_object_new_object();
                json_object_object_add(start, "line",
                                       json_object_new_int64(f->line));
                if (f->col > 0)
                    json_object_object_add(start, "column",
                                           json_object_new_int64(f->col));
                json_object_object_add(range, "start", start);
                json_object_object_add(loc, "range", range);
            }
            json_object_object_add(o, "location", loc);
        }
        json_object_object_add(o, "severity",
                               json_object_new_string(rd_severity(f->level)));
        json_object_object_add(source, "name",
                               json_object_new_string("tandem"));
        json_object_object_add(o, "source", source);
        json_object_object_add(code, "value", json_object_new_string(f->rule));
        json_object_object_add(o, "code", code);
        line = tnd_json_dump(o, NULL);
        tnd_buf_printf(&b, "%s\n", line);
        free(line);
        json_object_put(o);
    }
    return tnd_buf_detach(&b, NULL);
}

/* ---- GitHub workflow commands ------------------------------------------- */

/* s escaped as @actions/core escapes a command's message ("%", CR, LF),
 * and with property on, a property's value (also ":" and ","); invalid
 * UTF-8 becomes U+FFFD first. */
static void gh_escaped(tnd_buf *b, const char *s, bool property)
{
    char *clean = tnd_utf8_clean(s, strlen(s), NULL);

    for (const char *p = clean; *p; p++) {
        switch (*p) {
        case '%':
            tnd_buf_puts(b, "%25");
            break;
        case '\r':
            tnd_buf_puts(b, "%0D");
            break;
        case '\n':
            tnd_buf_puts(b, "%0A");
            break;
        case ':':
            tnd_buf_puts(b, property ? "%3A" : ":");
            break;
        case ',':
            tnd_buf_puts(b, property ? "%2C" : ",");
            break;
        default:
            /* a skill's output is in messages: no escape codes or other
             * controls on whatever shows this log (a review found the
             * default format filtered and this one not) */
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                tnd_buf_puts(b, *p == '\t' ? "\t" : "?");
            else
                tnd_buf_append(b, p, 1);
        }
    }
    free(clean);
}

static const char *gh_level(tnd_finding_level l)
{
    return l == TND_FINDING_ERROR     ? "error"
           : l == TND_FINDING_WARNING ? "warning"
                                      : "notice";
}

static void gh_command(tnd_buf *b, const char *level, const tnd_finding *f)
{
    tnd_buf_printf(b, "::%s ", level);
    if (f->file) {
        tnd_buf_puts(b, "file=");
        gh_escaped(b, f->file, true);
        tnd_buf_puts(b, ",");
        if (f->line > 0)
            tnd_buf_printf(b, "line=%ld,", f->line);
        if (f->col > 0)
            tnd_buf_printf(b, "col=%ld,", f->col);
    }
    tnd_buf_puts(b, "title=");
    gh_escaped(b, f->title, true);
    tnd_buf_puts(b, "::");
    gh_escaped(b, f->message, false);
    tnd_buf_puts(b, "\n");
}

static char *github(const tnd_findings *self)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < self->n; i++)
        gh_command(&b, gh_level(self->items[i].level), &self->items[i]);
    if (self->not_done) {
        tnd_finding f = {.title = "tandem: could not review",
                         .message = self->not_done};
        gh_command(&b, "error", &f);
    }
    return tnd_buf_detach(&b, NULL);
}

char *tnd_findings_render(const tnd_findings *self, tnd_findings_format format)
{
    switch (format) {
    case TND_FINDINGS_SARIF:
        return sarif(self);
    case TND_FINDINGS_RDJSONL:
        return rdjsonl(self);
    case TND_FINDINGS_GITHUB:
        return github(self);
    case TND_FINDINGS_NONE:
        break;
    }
    return tnd_xstrdup("");
}
