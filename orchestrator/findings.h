/* tnd_findings - what a review found, in the formats CI reads.
 *
 * A finding is one thing a person should look at in the change:
 *   - a skill that failed, timed out or could not run (rule
 *     "skill/NAME"), at the first place its output names;
 *   - an issue the critique raised (rule "issue/TYPE": missing,
 *     unsupported, incorrect, superfluous, safety, style), at its file
 *     and line;
 *   - the gate's reason (rule "gate") when the change did not pass and
 *     no finding of level error says why (a patch that does not apply,
 *     no valid critique, too little confidence), or when it passed but
 *     waits for a person (gate.risk_paths, low confidence).
 * Levels: a required skill is an error, an advisory one a warning; an
 * issue's severity gives its level (critical: error, major: warning,
 * minor: note). The exit code, not the levels, says whether the change
 * passed.
 *
 * The writers: SARIF 2.1.0 (one document), reviewdog's rdjsonl (a JSON
 * object per line) and GitHub workflow commands (a line per finding:
 * `::error file=F,line=N,title=T::message`). Each finding's
 * fingerprint hashes its rule, its file and its headline (the message's
 * first line) with numbers, hex addresses, temporary paths and runs of
 * white space folded (tnd_gate_normalise), never its line, so the same
 * finding keeps its identity when lines move. */
#ifndef TND_FINDINGS_H
#define TND_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "orchestrator/gate.h"

/* What `tandem review --format` writes. */
typedef enum tnd_findings_format {
    TND_FINDINGS_NONE = 0, /* no --format: the text findings of feedback.c */
    TND_FINDINGS_SARIF,
    TND_FINDINGS_RDJSONL,
    TND_FINDINGS_GITHUB,
} tnd_findings_format;

typedef enum tnd_finding_level {
    TND_FINDING_NOTE = 0,
    TND_FINDING_WARNING,
    TND_FINDING_ERROR,
} tnd_finding_level;

typedef struct tnd_finding {
    const char *rule; /* "skill/test", "issue/incorrect", "gate" */
    tnd_finding_level level;
    const char *title;   /* one line: "tandem: test failed" */
    const char *message; /* for people; the first line is the
                            headline, more lines may follow */
    const char *file;    /* relative to the repository, or NULL */
    long line;           /* 1..; 0 when unknown */
    long col;            /* 1..; 0 when unknown */
} tnd_finding;

typedef struct tnd_findings tnd_findings;

/* An empty list. */
tnd_findings *tnd_findings_new(void);

/* Free; sets *self_p to NULL; safe on NULL. */
void tnd_findings_destroy(tnd_findings **self_p);

/* Add one finding (its strings are copied; a leading "./" of file is
 * dropped). */
void tnd_findings_add(tnd_findings *self, const tnd_finding *f);

/* Add what one attempt found: its failing skills and the critique's
 * issues (from in->audit, which may be NULL), and the gate's reason
 * when the decision needs it (see above). in->baseline, when set, says
 * which failures are regressions. */
void tnd_findings_add_attempt(tnd_findings *self, const tnd_gate_input *in,
                              const tnd_gate_decision *decision);

/* The review could not be done (an agent failed, it was interrupted):
 * SARIF's invocation says so with why, GitHub gets an error annotation
 * without a file; rdjsonl holds diagnostics of the code only, and
 * writes nothing for it. why is copied. */
void tnd_findings_not_done(tnd_findings *self, const char *why);

/* The file a SARIF result without one is placed at (line 1): the first
 * the change touches. GitHub's code scanning refuses a whole SARIF file
 * in which one result has no location (the gate's "needs a person", an
 * issue naming no file), so a CI job's upload lost every finding. path
 * is copied; NULL leaves such results without a location. */
void tnd_findings_anchor(tnd_findings *self, const char *path);

/* How many findings there are, and one of them (borrowed until the
 * list is destroyed). */
size_t tnd_findings_count(const tnd_findings *self);
const tnd_finding *tnd_findings_get(const tnd_findings *self, size_t i);

/* A finding's fingerprint (see above). */
uint64_t tnd_finding_fingerprint(const tnd_finding *f);

/* "sarif", "rdjsonl" or "github" into *out; -1 with the error naming
 * the three otherwise. */
int tnd_findings_format_parse(tnd_findings_format *out, const char *name);

/* The findings written in format (not TND_FINDINGS_NONE), valid UTF-8
 * (invalid bytes become U+FFFD), ending in a newline unless empty
 * (rdjsonl and github with nothing to say). Caller frees. */
char *tnd_findings_render(const tnd_findings *self, tnd_findings_format format);

#endif
