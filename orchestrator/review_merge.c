/* A quorum's critiques merged into one (see review_merge.h). */
#include "orchestrator/review_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "common/xalloc.h"

/* Bytes of each member's summary in the merged one: 16 members fit the
 * protocol's 16 KiB for a summary. */
#define MEMBER_TEXT 900

static char *dup_or_null(const char *s)
{
    return s ? tnd_xstrdup(s) : NULL;
}

static bool same_place(const tnd_issue *a, const tnd_issue *b)
{
    if (a->type != b->type || a->line != b->line)
        return false;
    if (!a->file || !b->file)
        return !a->file && !b->file;
    return strcmp(a->file, b->file) == 0;
}

/* Add member's issue to c, or fold it into the same one another member
 * raised; votes[i] counts the members that raised c's issue i. */
static void add_issue(tnd_critique *c, size_t *cap, size_t **votes,
                      size_t *vcap, const tnd_issue *is, bool *seen)
{
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *have = &c->issues[i];
        if (!same_place(have, is))
            continue;
        if (!seen[i]) {
            seen[i] = true;
            (*votes)[i]++;
        }
        if (is->severity > have->severity) {
            /* the graver reading wins, with its own words */
            free(have->description);
            free(have->evidence);
            free(have->suggested_fix);
            have->severity = is->severity;
            have->description = tnd_xstrdup(is->description);
            have->evidence = dup_or_null(is->evidence);
            have->suggested_fix = dup_or_null(is->suggested_fix);
        }
        return;
    }
    TND_GROW(c->issues, *cap, c->nissues + 1);
    TND_GROW(*votes, *vcap, c->nissues + 1);
    (*votes)[c->nissues] = 1;
    seen[c->nissues] = true;
    c->issues[c->nissues++] = (tnd_issue){
        .type = is->type,
        .severity = is->severity,
        .file = dup_or_null(is->file),
        .line = is->line,
        .description = tnd_xstrdup(is->description),
        .evidence = dup_or_null(is->evidence),
        .suggested_fix = dup_or_null(is->suggested_fix),
    };
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The middle value (the lower middle for an even count). */
static double median(double *v, size_t n)
{
    if (n > 1) /* qsort wants a pointer even for none */
        qsort(v, n, sizeof(*v), by_value);
    return v[(n - 1) / 2];
}

/* Under a majority quorum, an issue raised by no more than half of the
 * members is the minority's opinion: it stays as evidence, but minor. */
static void outvoted(tnd_critique *c, const size_t *votes, size_t n)
{
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *is = &c->issues[i];
        char *d;
        char note[96];
        size_t keep;
        if (votes[i] * 2 > n || is->severity == TND_SEVERITY_MINOR)
            continue;
        snprintf(note, sizeof(note),
                 " (%s, raised by %zu of %zu reviewers: outvoted)",
                 tnd_severity_name(is->severity), votes[i], n);
        /* the merged audit is journaled and read back by a resume under
         * the protocol's limits: a description at the limit has room made
         * for the note, at a character's boundary */
        keep = strlen(is->description);
        if (keep + strlen(note) > TND_BODY_MAX_NOTE)
            keep = tnd_utf8_whole(is->description,
                                  TND_BODY_MAX_NOTE - strlen(note));
        d = tnd_xasprintf("%.*s%s", (int)keep, is->description, note);
        free(is->description);
        is->description = d;
        is->severity = TND_SEVERITY_MINOR;
    }
}

/* Keep at most TND_BODY_MAX_ISSUES of c's issues, in their order: the
 * gravest first, so whatever blocks the change stays (the members' lists
 * add up to more than the protocol carries, and the journaled audit must
 * read back). Returns how many were left out. */
static size_t fit_issues(tnd_critique *c)
{
    size_t count[TND_SEVERITY_CRITICAL + 1] = {0}, kept = 0, room, dropped;
    int floor = TND_SEVERITY_CRITICAL;

    if (c->nissues <= TND_BODY_MAX_ISSUES)
        return 0;
    for (size_t i = 0; i < c->nissues; i++)
        count[c->issues[i].severity]++;
    /* the mildest severity kept whole, and the room left for the next */
    room = TND_BODY_MAX_ISSUES;
    while (floor > 0 && count[floor] <= room)
        room -= count[floor--];
    for (size_t i = 0; i < c->nissues; i++) {
        tnd_issue *is = &c->issues[i];
        bool keep = (int)is->severity > floor;
        if (!keep && (int)is->severity == floor && room > 0) {
            keep = true;
            room--;
        }
        if (keep) {
            c->issues[kept++] = *is;
            continue;
        }
        free(is->file);
        free(is->description);
        free(is->evidence);
        free(is->suggested_fix);
    }
    dropped = c->nissues - kept;
    c->nissues = kept;
    return dropped;
}

void tnd_review_merge(tnd_audit_reply *out, const tnd_audit_reply *members,
                      size_t n, bool majority)
{
    tnd_critique *c = tnd_xcalloc(1, sizeof(*c));
    double *conf = tnd_xcalloc(n + 1, sizeof(*conf));
    size_t approvals = 0, valid = 0, cap = 0, vcap = 0, total = 0, dropped;
    size_t *votes = NULL;
    bool *seen;
    tnd_buf summary;

    tnd_critique_destroy(&out->critique);
    free(out->critique_error);
    out->critique_error = NULL;
    memset(&out->usage, 0, sizeof(out->usage));
    for (size_t i = 0; i < n; i++)
        total += members[i].critique ? members[i].critique->nissues : 0;
    seen = tnd_xcalloc(total + 1, sizeof(*seen));
    tnd_buf_init(&summary, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++) {
        const tnd_critique *m = members[i].critique;
        tnd_usage_add(&out->usage, &members[i].usage);
        if (!m) {
            tnd_buf_printf(&summary, "%sreviewer %zu: no valid critique (%.*s)",
                           i ? "; " : "", i + 1, MEMBER_TEXT,
                           members[i].critique_error ? members[i].critique_error
                                                     : "none was given");
            continue;
        }
        conf[valid++] = m->confidence;
        if (m->verdict == TND_VERDICT_APPROVE)
            approvals++;
        memset(seen, 0, (total + 1) * sizeof(*seen));
        for (size_t k = 0; k < m->nissues; k++)
            add_issue(c, &cap, &votes, &vcap, &m->issues[k], seen);
        for (int k = 0; k < TND_CRITERIA; k++) {
            const tnd_criterion *mc = &m->criteria[k];
            tnd_criterion *cc = &c->criteria[k];
            if (!mc->present || (cc->present && cc->score <= mc->score))
                continue;
            free(cc->reason);
            cc->present = true;
            cc->score = mc->score;
            cc->reason = dup_or_null(mc->reason);
        }
        tnd_buf_printf(&summary, "%sreviewer %zu: %s %.2f: %.*s", i ? "; " : "",
                       i + 1, tnd_verdict_name(m->verdict), m->confidence,
                       MEMBER_TEXT, m->summary ? m->summary : "");
    }
    if (majority)
        outvoted(c, votes, n);
    if ((dropped = fit_issues(c)) > 0)
        tnd_buf_printf(&summary,
                       "; %zu issues left out (the %d gravest are kept)",
                       dropped, TND_BODY_MAX_ISSUES);
    if (valid == 0) {
        out->critique_error = tnd_xasprintf(
            "no reviewer gave a valid critique: %s", tnd_buf_str(&summary));
        tnd_critique_destroy(&c);
    } else {
        bool approve = majority ? approvals * 2 > n : approvals == n;
        double lowest = conf[0];
        for (size_t i = 1; i < valid; i++)
            if (conf[i] < lowest)
                lowest = conf[i];
        c->verdict = approve ? TND_VERDICT_APPROVE : TND_VERDICT_REVISE;
        c->confidence = majority ? median(conf, valid) : lowest;
        c->summary = tnd_xasprintf("%zu of %zu reviewers approve (quorum: "
                                   "%s): %s",
                                   approvals, n, majority ? "majority" : "all",
                                   tnd_buf_str(&summary));
        out->critique = c;
    }
    tnd_buf_free(&summary);
    free(conf);
    free(votes);
    free(seen);
}
