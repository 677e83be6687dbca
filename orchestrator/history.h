/* tnd_history - what the sessions of a repository say, read back.
 *
 * For `tandem sessions`, `tandem show` and `tandem stats`: each session's
 * state (running, waiting for a person, approved, rejected, escalated,
 * failed, interrupted), its numbers, and figures across all sessions.
 * Everything comes from the files a run leaves (journal.jsonl,
 * report.json); nothing here writes. */
#ifndef TND_HISTORY_H
#define TND_HISTORY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orchestrator/session.h"

typedef struct tnd_summary {
    char *id;
    tnd_session_status state; /* running, queued, waiting, approved,
                                 rejected, escalated, failed,
                                 interrupted, unstarted, unreadable */
    char *task;
    long iterations; /* from report.json, else the journal's decisions */
    long llm_calls;  /* from report.json; -1 when unknown (no report) */
    long tokens;     /* prompt + completion, the same; -1 when unknown */
    int64_t started; /* wall ms; 0 when unknown */
    int64_t last;    /* wall ms of the last journal record; 0 when
                        unknown */
    long elapsed_ms; /* from report.json; 0 when unknown */
    int escalations; /* times it went to a person */
} tnd_summary;

/* Summaries of every session of repo, oldest first. Sessions whose files
 * cannot be read are listed with state "unreadable". Free with
 * tnd_history_free. */
int tnd_history_list(tnd_summary **out, size_t *count, const char *repo);

void tnd_history_free(tnd_summary *list, size_t count);

/* The summary of session id of repo, as tnd_history_list makes it. With
 * held_by_caller the caller holds the session's lock, so the lock does
 * not make it "running". Free with tnd_history_summary_clear. */
void tnd_history_summary(tnd_summary *out, const char *repo, const char *id,
                         bool held_by_caller);

/* Free a summary's strings and zero it. */
void tnd_history_summary_clear(tnd_summary *s);

/* Figures across the sessions of repo as a JSON object (caller puts):
 * sessions (all), runs, reviews {sessions, approved, rejected}, and over
 * the runs alone (a review is no task): by_state, average_iterations,
 * success_rate,
 * escalation_rate, per_approved {tokens, llm_calls}, phases {coding_ms,
 * auditing_ms, waiting_ms: averages per attempt}, and the most common
 * failure patterns {signature, reason, occurrences, sessions}. An
 * average of nothing is JSON null. */
int tnd_history_stats(json_object **out, const char *repo);

/* Milliseconds since the epoch of an ISO 8601 UTC time as the journal
 * writes it ("2026-11-22T01:44:28.123Z"); -1 when it is not one. */
int64_t tnd_history_parse_time(const char *iso);

#endif
