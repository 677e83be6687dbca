/* tnd_run - one task through the gate loop, end to end: `tandem run`,
 * and everything that continues a session: `tandem resume` and the
 * answers to an escalation (`tandem approve|reject|guide|budget`).
 *
 * Copies the repository into a workspace, starts the broker and the local
 * agents, then loops: ask the coder, apply the proposal, ask the reviewer
 * to audit it, let the gate decide. Every step is journaled (fsync'd)
 * before it is acted on; a resumed session replays the journal — the
 * answers recorded there are used again, not asked for again — and goes
 * on from the first step it lacks. Writes the session (journal, views,
 * report.json, attempt-N.diff, final.diff), prints the approved diff on
 * stdout and a one-line summary on stderr, and stops every process it
 * started. */
#ifndef TND_RUN_H
#define TND_RUN_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/config.h"
#include "orchestrator/link.h"

#include "orchestrator/apply.h"
#include "orchestrator/basecache.h"
#include "orchestrator/escalate.h"
#include "orchestrator/findings.h"
#include "orchestrator/session.h"
#include "proto/client.h"

/* Exit codes, the same for every command. */
#define TND_EXIT_OK     0 /* approved / done */
#define TND_EXIT_FAILED 1 /* rejected, failed */
#define TND_EXIT_USAGE  2 /* usage or configuration error */
#define TND_EXIT_HUMAN  3 /* waiting for a human */
/* `tandem review` could not review the change (the model unreachable or
 * refusing the key, an agent that crashed): nothing was judged, unlike
 * exit 1. `tandem run` keeps exit 1 for it (see README, Exit codes). */
#define TND_EXIT_NOT_REVIEWED 4
/* `tandem run --apply` or `--commit`: the change was approved, but the
 * tree was not changed (or not committed) as asked: the patch no longer
 * applies cleanly, or the files it touches hold uncommitted changes of
 * the user's. report.json's "apply" says what was done and why not. */
#define TND_EXIT_NOT_APPLIED 5
/* Interrupted by a signal: 128 + the signal (130 for Ctrl-C), as shells
 * report it; the session is open and `tandem resume` goes on. */
#define TND_EXIT_SIGNAL 128

/* review --on-error: what a review that could not be done exits with. */
typedef enum tnd_on_error {
    TND_ON_ERROR_FAIL = 0, /* exit 4 (TND_EXIT_NOT_REVIEWED): fail closed */
    TND_ON_ERROR_PASS,     /* exit 0 with a warning: fail open */
} tnd_on_error;

typedef struct tnd_run_options {
    const char *repo;       /* the target repository; "." when NULL */
    const char *config;     /* agents.yaml; NULL: REPO/agents.yaml when it
                               exists, else the built-in defaults */
    const char *llm;        /* --llm PROVIDER:MODEL override, or NULL */
    const char *base_url;   /* --base-url override, or NULL */
    const char *from_env;   /* NULL, or which of the two came from the
                               environment ("TANDEM_LLM", ...): named
                               in their errors */
    const char *task;       /* what to do */
    const char *session_id; /* tnd_run_create: the id to make the session
                               under (a client's proposal,
                               tnd_session_new_as); NULL: a new one */
    const char *record;     /* --record FILE: write the models' answers as a
                               cassette, or NULL */
    bool keep_workspace;    /* leave the workspace for inspection */
    tnd_apply_mode apply;   /* run --apply, --commit: put an approved change
                               into the tree (and commit it) */
    bool on_head;           /* the base is HEAD's tree, not the work tree's
                               files: the commit a commit of the change goes
                               onto (--commit sets it too; kept in the task
                               record, so a resume has it) */
    bool review;            /* `tandem review`: audit an existing change,
                               no coder, one attempt */
    const char *diff;       /* review: a patch file ("-": stdin); NULL: the
                               repository's git changes */
    const char *diff_label; /* how messages name diff (a server's: "the
                               submitted diff"); NULL: "--diff FILE" */
    const char *rev;        /* review with diff: the commit whose tree is
                               its base (git's changes a client took
                               itself, as tandem submit does); NULL: the
                               repository's files as they are */
    bool staged;            /* review with git: staged changes only */
    bool allow_empty;       /* review with git: no changes is exit 0 ("nothing
                               to review"), not a usage error */
    tnd_on_error on_error;  /* review: exit 4, or 0 with a warning, when the
                               review could not be done */
    bool insecure;          /* --insecure: as orchestrator.insecure: true */
    bool quiet;             /* no progress lines */
    bool verbose;           /* debug logging */
    bool json;              /* --json: stdout holds the report (report.json's
                               text) and nothing else; no diff, no findings */
    tnd_findings_format format; /* review --format: the findings on stdout
                                   in this format, whatever the outcome */
    const tnd_client_who *by;   /* a served task: who submitted it, as the
                                   server's transport proved it (the task
                                   record's "by"); NULL: not known */
} tnd_run_options;

/* What a server gives a session it runs on a thread of its own (tandem
 * serve): no signal handler is installed, no terminal is asked (an
 * escalation waits for a command), the config is never taken from the
 * repository implicitly, and the log is the server's. */
typedef struct tnd_run_host {
    tnd_link *link;           /* the hub's agents */
    FILE *out, *err;          /* the session's stdout and stderr */
    atomic_int *stop;         /* set to a signal's number: stop as that signal
                                 would (the session stays open, resumable) */
    const char *insecure;     /* the server's tcp:// endpoint open without
                                 CURVE, for the report; or NULL */
    tnd_basecache *baselines; /* the server's baselines, shared by its
                                 sessions (borrowed); NULL: none */
    void *zmq_ctx;            /* the server's ZeroMQ context, for the
                                 session's event socket (borrowed); NULL:
                                 the session makes its own */
    const tnd_config *config; /* the server's, which its agents run with
                                 (borrowed, never changed): a session whose
                                 config file holds other bytes than it was
                                 read from (its digest) is refused, and one
                                 whose file is that one, unchanged, uses it
                                 rather than parsing the file again; NULL:
                                 not checked */
    json_object **report;     /* this session's (NULL: none): the report.json
                                 its run wrote last, as an object (put what
                                 it held), or NULL when that write failed or
                                 its text had a secret redacted, so what
                                 ends the session need not read the file */
    /* tnd_run_create: called once the session's directory is made and
       locked, before its task record is journaled; the server records
       the session as accepted there (fsync'd), so a server killed
       between the two leaves no journaled task that the next one does
       not know. Nonzero (the error set) makes no session. NULL: none */
    int (*made)(void *arg, const char *repo, const char *id);
    void *made_arg;
} tnd_run_host;

/* Run the task (or review the change); returns one of the TND_EXIT_*
 * codes after printing what happened. A review that fails the gate is
 * rejected (exit 1) with the findings on stdout; one the gate passes is
 * approved (exit 0), unless it goes to a person (exit 3); one that could
 * not be done is TND_EXIT_NOT_REVIEWED (or 0 with a warning under
 * TND_ON_ERROR_PASS). With quiet, an approved review prints nothing on
 * stderr (a run still prints its summary). With json or
 * format, stdout holds that instead, once the session has ended (an
 * error before a session exists leaves it empty). */
int tnd_run(const tnd_run_options *opts);

/* Make the session for a task, to be run later with tnd_run_continue:
 * the config checked, the session directory made and its task record
 * journaled (fsync'd), nothing started. 0 with *id and *dir (caller
 * frees), or a TND_EXIT_* code after saying why on host->err (stderr
 * when host is NULL). A review's change is read now and kept in the
 * session (change.diff), so what is reviewed is what there was when it
 * was made; an empty change is a usage error. With lock, the session's
 * lock stays held and *lock is its descriptor (the caller's to close, or
 * to hand to tnd_run_continue), so no prune or resume takes the session
 * before it runs; -1 when no session was made. */
int tnd_run_create(char **id, char **dir, const tnd_run_options *opts,
                   const tnd_run_host *host, int *lock);

/* What continues an existing session. */
typedef struct tnd_continue_options {
    const char *repo;          /* "." when NULL */
    const char *session;       /* id or unique prefix */
    tnd_answer_kind answer;    /* 0 (resume), or approve, reject, guide,
                                  budget */
    const char *text;          /* reject: why; guide: the guidance */
    int iterations;            /* budget: more attempts */
    long tokens;               /* budget: more tokens */
    long calls;                /* budget: more LLM calls */
    const tnd_client_who *who; /* a served answer: who gave it, as the
                                  server's transport proved it (journaled
                                  with it); NULL: this process's user */
    long escalation;           /* an answer: the escalation it answers (the
                                  seq of the one the session waited on when
                                  the person asked, tnd_session_facts); it
                                  is refused when the session waits on
                                  another since. -1: the session did not
                                  wait when the person asked, so it is
                                  refused if it waits now. 0: whichever
                                  waits */
    const char *llm;           /* resume: --llm for this run, or NULL (the
                                  task's own) */
    const char *base_url;      /* resume: --base-url likewise */
    bool quiet;
    bool verbose;
    const tnd_run_host *host; /* a server runs it, or NULL */
    bool fresh;  /* the first run of a session tnd_run_create made: no
                    `resume` record */
    bool locked; /* the caller holds the session's lock through lock_fd
                    (tnd_session_lock_dir, tnd_run_create), which the run
                    takes over and closes, whatever it returns */
    int lock_fd;
    const tnd_run_options *same; /* the run that asked a person at its
                                    terminal, going on in its process: its
                                    keep_workspace, apply, json, format and
                                    on_error hold (a resume's are the
                                    defaults); NULL for a command */
} tnd_continue_options;

/* Resume a session after a crash, or answer its escalation and go on.
 * Returns a TND_EXIT_* code. */
int tnd_run_continue(const tnd_continue_options *opts);

/* Whether the answer opts gives is one the session opts->session of repo
 * can take, as its journal stands and, when gate is not NULL, its gate
 * config: the question it answers (opts->escalation) the one that waits,
 * and the answer whole (reject and guide with text, a budget that grants
 * something, guide and budget not to a review, approve with a proposal).
 * 0; TND_ECONFIG with the error set (what to give instead) when it is
 * not, checked before anything is resumed or journaled; -1 when the
 * session cannot be read. */
int tnd_run_answer_check(const char *repo, const tnd_continue_options *opts,
                         const tnd_gate_config *gate);

/* The question a person's command read, asked (a seq; -1: the session
 * did not wait then; 0: not known), against the one that waits now,
 * waits (0: none): 0 when the answer is for it, else TND_ECONFIG with
 * the error set, naming session id. */
int tnd_run_same_question(const char *id, long asked, long waits);

/* What is known of a session without taking it: enough to send an
 * answer to the server that ran it, and for the server to check it. */
typedef struct tnd_session_facts {
    char *id, *dir;  /* the whole id; the session's directory */
    char *config;    /* the task record's config path, or NULL */
    bool served;     /* tandem serve made it */
    char *owner;     /* the CURVE key that submitted it (the task record's
                        by.key), or NULL */
    long escalation; /* the escalation it waits on (its record's seq), or
                        0 (tnd_journal_waiting_on) */
    tnd_session_status status;
} tnd_session_facts;

/* The facts of session part (an id or a unique part of one) in repo,
 * read from its journal without its lock. -1 with the error set
 * (TND_ECONFIG when no session or several match). */
int tnd_run_facts(tnd_session_facts *out, const char *repo, const char *part);

/* As tnd_run_facts, for session id of repo whose directory dirfd is
 * (tnd_session_dir_open): its journal read from the descriptor, so that
 * what it says is of that directory, whatever its path leads to now. */
int tnd_run_facts_at(tnd_session_facts *out, int dirfd, const char *repo,
                     const char *id);

void tnd_session_facts_clear(tnd_session_facts *facts);

/* The CURVE key that submitted a session, from its task record (may be
 * NULL): by.key when by.via is "curve", else NULL. Caller frees. */
char *tnd_run_task_owner(json_object *task);

#endif
