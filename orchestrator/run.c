/* `tandem run`: the gate loop across real processes (see run.h).
 *
 * Everything one run owns hangs off struct run and is released in
 * run_close(), whatever path the run took: the broker, the agent
 * processes, the workspace, the runtime directory with the ipc socket.
 * The loop itself reads top to bottom: propose, apply, audit, decide. */
#include "orchestrator/run.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/broker.h"
#include "orchestrator/context.h"
#include "orchestrator/feedback.h"
#include "orchestrator/gate.h"
#include "orchestrator/session.h"
#include "orchestrator/supervisor.h"
#include "orchestrator/workspace.h"
#include "proto/audit.h"
#include "proto/code.h"
#include "proto/json.h"

#define POLL_MS       200
#define STOP_GRACE_MS 5000
#define IPC_PATH_MAX  100 /* sun_path is 108 bytes; keep a margin */

typedef struct run {
    const tnd_run_options *opts;
    tnd_config *cfg;
    char *repo;
    char *runtime;
    char *endpoint;
    char *programs[2]; /* coder, reviewer */
    tnd_session *session;
    tnd_workspace *ws;
    tnd_broker *broker;
    tnd_supervisor *sup;
    int64_t started;
    int64_t started_wall;
    tnd_usage usage[2]; /* coder, reviewer */
    json_object *attempts;
    int iterations;
    const char *status;
    char *reason;
    char *final_rel; /* final.diff relative to the repo */
    char *last_diff_rel;
    char **history; /* one line per attempt */
    size_t nhistory, ahistory;
    uint64_t *hashes; /* diff hash per attempt */
    size_t nhashes, ahashes;
    char **required; /* required skill names, NULL-terminated */
    char *hidden[4]; /* repo files the coder is not shown: tandem's own
                        config and cassettes; NULL-terminated */
    bool waiting_said[2];
} run;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static const char *const roles[2] = {"coder", "reviewer"};

static void say(const run *r, const char *fmt, ...) TND_PRINTF(2, 3);

static void say(const run *r, const char *fmt, ...)
{
    va_list ap;

    if (r->opts->quiet)
        return;
    va_start(ap, fmt);
    fputs("tandem: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- set-up ------------------------------------------------------------- */

static int check_llm(const tnd_config *cfg)
{
    const tnd_llm_config *llm[2] = {&cfg->coder.llm, &cfg->reviewer.llm};

    for (int i = 0; i < 2; i++) {
        if (strcmp(llm[i]->provider, "replay") == 0 && !*llm[i]->cassette)
            return tnd_error_config("agents.%s.llm: provider replay needs a "
                                    "cassette (set llm.cassette in "
                                    "agents.yaml)",
                                    roles[i]);
        if (strcmp(llm[i]->provider, "replay") == 0 &&
            !tnd_fs_exists(llm[i]->cassette))
            return tnd_error_config("agents.%s.llm.cassette: %s does not exist",
                                    roles[i], llm[i]->cassette);
    }
    return 0;
}

static int load_config(run *r)
{
    const tnd_run_options *o = r->opts;
    char *implicit = tnd_fs_join(r->repo, "agents.yaml");
    const char *path = o->config;
    int error = 0;

    if (!path && tnd_fs_exists(implicit))
        path = implicit;
    if (path)
        error = tnd_config_load(&r->cfg, path);
    else
        r->cfg = tnd_config_defaults();
    free(implicit);
    if (error < 0)
        return error == TND_ECONFIG ? TND_ECONFIG : -1;
    if ((o->llm || o->base_url) &&
        tnd_config_override_llm(r->cfg, o->llm, o->base_url) < 0)
        return TND_ECONFIG;
    if (check_llm(r->cfg) < 0)
        return TND_ECONFIG;
    for (int i = 0; i < 2; i++) {
        const tnd_agent_config *a = i ? &r->cfg->reviewer : &r->cfg->coder;
        if (a->count == 0 && !*r->cfg->orchestrator.endpoint)
            return tnd_error_config(
                "agents.%s.count is 0, so %s agents must connect by "
                "themselves; set orchestrator.endpoint to an address they "
                "can reach (e.g. tcp://0.0.0.0:5555)",
                roles[i], roles[i]);
    }
    return 0;
}

/* The agent program for role: the config's, or the one installed next to
 * this tandem. */
static int find_program(run *r, int role)
{
    const tnd_agent_config *a = role ? &r->cfg->reviewer : &r->cfg->coder;
    char *self = NULL, *prog;

    if (a->count == 0)
        return 0;
    if (a->program.argv) {
        const char *p = a->program.argv[0];
        prog = p[0] == '/' || !strchr(p, '/') ? tnd_xstrdup(p)
                                              : tnd_fs_join(r->cfg->dir, p);
    } else {
        self = tnd_fs_self_dir();
        prog = tnd_xasprintf("%s/tandem-%s", self ? self : ".", roles[role]);
        free(self);
    }
    if (strchr(prog, '/') && access(prog, X_OK) < 0) {
        tnd_error_sys("agent program %s cannot be run (build it with 'make', "
                      "or set agents.%s.command in agents.yaml)",
                      prog, roles[role]);
        free(prog);
        return TND_ECONFIG;
    }
    r->programs[role] = prog;
    return 0;
}

/* A private directory for the ipc socket and the workspace: only this user
 * may enter it, so no other user can connect to our broker. */
static int make_runtime(run *r)
{
    const char *tmp = getenv("TMPDIR");
    char *base;
    struct stat st;

    if (!tmp || !*tmp || tmp[0] != '/')
        tmp = "/tmp";
    base = tnd_xasprintf("%s/tandem-%ld", tmp, (long)getuid());
    if (mkdir(base, 0700) < 0 && errno != EEXIST) {
        tnd_error_sys("cannot create %s", base);
        free(base);
        return -1;
    }
    if (lstat(base, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077)) {
        tnd_error_set("%s must be a directory owned by you with mode 0700 "
                      "(it is not; remove it or set TMPDIR)",
                      base);
        free(base);
        return -1;
    }
    r->runtime = tnd_fs_join(base, tnd_session_id(r->session));
    free(base);
    if (mkdir(r->runtime, 0700) < 0) {
        tnd_error_sys("cannot create %s", r->runtime);
        free(r->runtime);
        r->runtime = NULL;
        return -1;
    }
    if (*r->cfg->orchestrator.endpoint) {
        r->endpoint = tnd_xstrdup(r->cfg->orchestrator.endpoint);
    } else {
        r->endpoint = tnd_xasprintf("ipc://%s/broker.sock", r->runtime);
        if (strlen(r->endpoint) - 6 > IPC_PATH_MAX)
            return tnd_error_set("the socket path %s is too long for ipc://; "
                                 "set TMPDIR to a shorter directory",
                                 r->endpoint + 6);
    }
    return 0;
}

static int start_agents(run *r)
{
    char *logs = tnd_session_path(r->session, "logs");
    char hb[32], lv[32];
    int error = 0;

    if (tnd_fs_mkdirs(logs, 0755) < 0) {
        free(logs);
        return -1;
    }
    snprintf(hb, sizeof(hb), "%d", r->cfg->orchestrator.heartbeat_ms);
    snprintf(lv, sizeof(lv), "%d", r->cfg->orchestrator.liveness);
    r->sup = tnd_supervisor_new();
    for (int role = 0; role < 2 && error == 0; role++) {
        const tnd_agent_config *a = role ? &r->cfg->reviewer : &r->cfg->coder;
        for (int i = 1; i <= a->count && error == 0; i++) {
            const char *argv[32];
            size_t n = 0;
            char *name = tnd_xasprintf("%s-%d", roles[role], i);
            char *file = tnd_xasprintf("%s.log", name);
            char *log = tnd_fs_join(logs, file);
            tnd_agent_spec spec;
            if (a->program.argv)
                for (char **p = a->program.argv; *p && n < 16; p++)
                    n++;
            argv[0] = r->programs[role];
            for (size_t k = 1; k < n; k++)
                argv[k] = a->program.argv[k];
            if (n == 0)
                n = 1;
            argv[n++] = "--connect";
            argv[n++] = r->endpoint;
            argv[n++] = "--id";
            argv[n++] = name;
            argv[n++] = "--heartbeat";
            argv[n++] = hb;
            argv[n++] = "--liveness";
            argv[n++] = lv;
            if (r->cfg->path) {
                argv[n++] = "--config";
                argv[n++] = r->cfg->path;
            }
            if (r->opts->llm) {
                argv[n++] = "--llm";
                argv[n++] = r->opts->llm;
            }
            if (r->opts->base_url) {
                argv[n++] = "--base-url";
                argv[n++] = r->opts->base_url;
            }
            if (r->opts->verbose)
                argv[n++] = "--verbose";
            argv[n] = NULL;
            spec.name = name;
            spec.service = roles[role];
            spec.argv = argv;
            spec.log_path = log;
            if (tnd_supervisor_add(r->sup, &spec) < 0)
                error = TND_ECONFIG;
            free(name);
            free(file);
            free(log);
        }
    }
    free(logs);
    return error;
}

/* tandem's own files inside the repository are not the coder's business
 * (and a cassette would show it the answers). */
static void hide_own_files(run *r)
{
    const char *own[3] = {r->cfg->path, r->cfg->coder.llm.cassette,
                          r->cfg->reviewer.llm.cassette};
    size_t n = 0, len = strlen(r->repo);

    for (int i = 0; i < 3; i++) {
        char *real;
        if (!own[i] || !*own[i] || !(real = realpath(own[i], NULL)))
            continue;
        if (strncmp(real, r->repo, len) == 0 && real[len] == '/') {
            bool dup = false;
            for (size_t k = 0; k < n; k++)
                dup = dup || strcmp(r->hidden[k], real + len + 1) == 0;
            if (!dup)
                r->hidden[n++] = tnd_xstrdup(real + len + 1);
        }
        free(real);
    }
    tnd_error_clear();
}

static void collect_required(run *r)
{
    size_t n = 0;

    for (char **p = r->cfg->reviewer.skills; p && *p; p++)
        n++;
    r->required = tnd_xcalloc(n + 1, sizeof(char *));
    n = 0;
    for (char **p = r->cfg->reviewer.skills; p && *p; p++) {
        const tnd_skill_config *s = tnd_config_skill(r->cfg, *p);
        if (s && s->required)
            r->required[n++] = tnd_xstrdup(*p);
    }
}

/* ---- talking to agents -------------------------------------------------- */

static void agent_gone(const char *name, void *payload)
{
    tnd_broker_worker_gone(payload, name);
}

/* Send body to service and wait for the reply, keeping the agents alive
 * meanwhile. Returns 0 with *reply (caller frees), TND_ECANCELLED when
 * interrupted, -1 with the error set. */
static int call(run *r, int role, const char *key, const char *body, size_t len,
                char **reply, size_t *reply_len)
{
    const char *service = roles[role];
    int64_t deadline =
        tnd_now_ms() + (int64_t)r->cfg->orchestrator.request_timeout_s * 1000;
    int64_t asked = tnd_now_ms();

    *reply = NULL;
    if (tnd_broker_submit(r->broker, service, key, body, len) < 0)
        return -1;
    for (;;) {
        tnd_broker_event ev;
        int rc;

        if (interrupted) {
            tnd_broker_cancel(r->broker, key);
            tnd_error_set("interrupted by signal %d", (int)interrupted);
            return TND_ECANCELLED;
        }
        rc = tnd_broker_poll(r->broker, &ev, POLL_MS);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            bool ours = strcmp(ev.key, key) == 0;
            if (ours && ev.kind == TND_BROKER_FINAL) {
                *reply = ev.body;
                *reply_len = ev.body_len;
                ev.body = NULL;
                tnd_broker_event_clear(&ev);
                return 0;
            }
            if (ours && ev.kind == TND_BROKER_FAILED) {
                tnd_error_set("%s", ev.error);
                tnd_broker_event_clear(&ev);
                return -1;
            }
            tnd_broker_event_clear(&ev);
        }
        if (tnd_supervisor_tick(r->sup, agent_gone, r->broker) < 0) {
            tnd_broker_cancel(r->broker, key);
            return -1;
        }
        if (!r->waiting_said[role] &&
            tnd_broker_workers(r->broker, service) == 0 &&
            tnd_now_ms() - asked > 3000) {
            say(r, "waiting for a %s agent to connect to %s", service,
                r->endpoint);
            r->waiting_said[role] = true;
        }
        if (tnd_now_ms() > deadline) {
            tnd_broker_cancel(r->broker, key);
            return tnd_error_set("no reply from the %s within %d s "
                                 "(orchestrator.request_timeout_s)",
                                 service,
                                 r->cfg->orchestrator.request_timeout_s);
        }
    }
}

/* ---- the loop ----------------------------------------------------------- */

static json_object *skills_json(const tnd_audit_reply *a)
{
    json_object *list = json_object_new_array();

    for (size_t i = 0; a && i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        json_object *j = json_object_new_object();
        json_object_object_add(j, "name", json_object_new_string(s->name));
        json_object_object_add(
            j, "status",
            json_object_new_string(tnd_skill_status_name(s->status)));
        json_object_object_add(j, "required",
                               json_object_new_boolean(s->required));
        json_object_object_add(j, "exit_code",
                               json_object_new_int(s->exit_code));
        json_object_object_add(j, "duration_ms",
                               json_object_new_int64(s->duration_ms));
        json_object_array_add(list, j);
    }
    return list;
}

static void record_attempt(run *r, int attempt, const tnd_code_reply *cr,
                           const tnd_gate_input *in, const tnd_gate_decision *d,
                           const char *diff_rel, uint64_t signature)
{
    json_object *j = json_object_new_object();
    char sig[32];

    json_object_object_add(j, "attempt", json_object_new_int(attempt));
    json_object_object_add(
        j, "decision", json_object_new_string(tnd_gate_action_name(d->action)));
    json_object_object_add(j, "reason", json_object_new_string(d->reason));
    json_object_object_add(j, "diff", tnd_json_str_or_null(diff_rel));
    json_object_object_add(j, "edits",
                           json_object_new_int(cr ? (int)cr->nedits : 0));
    json_object_object_add(j, "rationale",
                           tnd_json_str_or_null(cr ? cr->rationale : NULL));
    json_object_object_add(j, "skills", skills_json(in->audit));
    json_object_object_add(j, "critique",
                           in->audit && in->audit->critique
                               ? tnd_critique_to_json(in->audit->critique)
                               : NULL);
    json_object_object_add(
        j, "critique_error",
        tnd_json_str_or_null(in->audit ? in->audit->critique_error : NULL));
    snprintf(sig, sizeof(sig), "%016llx", (unsigned long long)signature);
    json_object_object_add(j, "failure_signature",
                           signature ? json_object_new_string(sig) : NULL);
    json_object_array_add(r->attempts, j);
}

static void history_add(run *r, const char *fmt, ...) TND_PRINTF(2, 3);

static void history_add(run *r, const char *fmt, ...)
{
    va_list ap;

    TND_GROW(r->history, r->ahistory, r->nhistory + 2);
    va_start(ap, fmt);
    r->history[r->nhistory++] = tnd_xvasprintf(fmt, ap);
    va_end(ap);
    r->history[r->nhistory] = NULL;
}

/* Text of the failing skills, to steer context toward the files named. */
static char *failure_hints(const tnd_audit_reply *a)
{
    tnd_buf b;

    tnd_buf_init(&b, 64 * 1024);
    for (size_t i = 0; a && i < a->nskills; i++)
        if (a->skills[i].status != TND_SKILL_PASS)
            tnd_buf_puts(&b, a->skills[i].output);
    for (size_t i = 0; a && a->critique && i < a->critique->nissues; i++)
        if (a->critique->issues[i].file) {
            tnd_buf_puts(&b, a->critique->issues[i].file);
            tnd_buf_puts(&b, "\n");
        }
    return tnd_buf_detach(&b, NULL);
}

static void describe_audit(const run *r, int attempt, const tnd_audit_reply *a)
{
    tnd_buf b;

    tnd_buf_init(&b, 4096);
    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        tnd_buf_printf(&b, "%s%s %s", i ? ", " : "", s->name,
                       s->status == TND_SKILL_PASS ? "pass" : "FAIL");
        if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
            tnd_buf_printf(&b, " (exit %d)", s->exit_code);
        else if (s->status != TND_SKILL_PASS)
            tnd_buf_printf(&b, " (%s)", tnd_skill_status_name(s->status));
    }
    if (a->critique)
        tnd_buf_printf(&b, "%scritique: %s, confidence %.2f, %zu issue%s",
                       a->nskills ? "; " : "",
                       tnd_verdict_name(a->critique->verdict),
                       a->critique->confidence, a->critique->nissues,
                       a->critique->nissues == 1 ? "" : "s");
    else
        tnd_buf_printf(&b, "%sno valid critique", a->nskills ? "; " : "");
    say(r, "[%d/%d] reviewer: %s", attempt, r->cfg->gate.max_iterations,
        tnd_buf_str(&b));
    tnd_buf_free(&b);
}

static int loop(run *r)
{
    const char *task_id = tnd_session_id(r->session);
    char *feedback = tnd_xstrdup(""), *hints = NULL;
    uint64_t last_sig = 0;
    int streak = 0, error = 0;

    for (int attempt = 1;; attempt++) {
        tnd_code_request req;
        tnd_code_reply cr;
        tnd_audit_reply audit;
        tnd_gate_input in;
        tnd_gate_decision d;
        char key[TND_BROKER_MAX_KEY + 1], name[64];
        char *body = NULL, *reply = NULL, *diff = NULL, *diff_rel = NULL;
        char *apply_error = NULL;
        size_t len = 0, reply_len = 0;
        uint64_t sig;
        bool audited = false;

        memset(&req, 0, sizeof(req));
        memset(&cr, 0, sizeof(cr));
        memset(&audit, 0, sizeof(audit));
        memset(&in, 0, sizeof(in));
        r->iterations = attempt;

        /* propose */
        req.task_id = (char *)task_id;
        req.attempt = attempt;
        req.task = (char *)r->opts->task;
        req.feedback = feedback;
        if (tnd_context_build(&req, tnd_workspace_path(r->ws), r->opts->task,
                              hints, (const char *const *)r->hidden,
                              r->cfg->coder.context_max_bytes) < 0) {
            error = -1;
            goto next;
        }
        say(r, "[%d/%d] coder: proposing a change (%zu file%s in context)",
            attempt, r->cfg->gate.max_iterations, req.nfiles,
            req.nfiles == 1 ? "" : "s");
        body = tnd_code_request_encode(&req, &len);
        snprintf(key, sizeof(key), "%s/%d/coder", task_id, attempt);
        if ((error = call(r, 0, key, body, len, &reply, &reply_len)) < 0)
            goto next;
        if ((error = tnd_code_reply_decode(&cr, reply, reply_len)) < 0)
            goto next;
        tnd_usage_add(&r->usage[0], &cr.usage);

        /* apply */
        in.attempt = attempt;
        in.required = (const char *const *)r->required;
        if (cr.format_error) {
            in.format_error = cr.format_error;
        } else if (tnd_workspace_apply(r->ws, cr.edits, cr.nedits) < 0) {
            apply_error = tnd_xstrdup(tnd_error_last());
            in.apply_error = apply_error;
        } else if (!(diff = tnd_workspace_diff(r->ws))) {
            apply_error = tnd_xstrdup(tnd_error_last());
            in.apply_error = apply_error;
        } else if (!*diff) {
            in.empty = true;
        }
        if (in.format_error || in.apply_error)
            say(r, "[%d/%d] coder: %s", attempt, r->cfg->gate.max_iterations,
                in.format_error ? "no usable edits" : "the edits do not apply");
        else
            say(r, "[%d/%d] coder: %zu edit%s (%ld+%ld tokens)", attempt,
                r->cfg->gate.max_iterations, cr.nedits,
                cr.nedits == 1 ? "" : "s", cr.usage.prompt_tokens,
                cr.usage.completion_tokens);
        if (diff && *diff) {
            uint64_t h = tnd_str_hash(TND_FNV_SEED, diff, strlen(diff));
            for (size_t i = 0; i < r->nhashes; i++)
                if (r->hashes[i] == h)
                    in.repeats = (int)i + 1;
            TND_GROW(r->hashes, r->ahashes, r->nhashes + 1);
            r->hashes[r->nhashes++] = h;
        } else {
            TND_GROW(r->hashes, r->ahashes, r->nhashes + 1);
            r->hashes[r->nhashes++] = 0;
        }
        snprintf(name, sizeof(name), "attempt-%d.diff", attempt);
        if (tnd_session_write(r->session, name, diff ? diff : "",
                              diff ? strlen(diff) : 0) < 0) {
            error = -1;
            goto next;
        }
        diff_rel = tnd_session_relpath(r->session, name);

        /* audit */
        if (!in.format_error && !in.apply_error && !in.empty && !in.repeats) {
            tnd_audit_request ar = {(char *)task_id, attempt,
                                    (char *)r->opts->task,
                                    (char *)tnd_workspace_path(r->ws), diff};
            free(body);
            free(reply);
            reply = NULL;
            body = tnd_audit_request_encode(&ar, &len);
            snprintf(key, sizeof(key), "%s/%d/reviewer", task_id, attempt);
            say(r, "[%d/%d] reviewer: auditing", attempt,
                r->cfg->gate.max_iterations);
            if ((error = call(r, 1, key, body, len, &reply, &reply_len)) < 0)
                goto next;
            if ((error = tnd_audit_reply_decode(&audit, reply, reply_len)) < 0)
                goto next;
            audited = true;
            tnd_usage_add(&r->usage[1], &audit.usage);
            in.audit = &audit;
            describe_audit(r, attempt, &audit);
        }

        /* decide */
        sig = tnd_gate_signature(&in);
        streak = sig && sig == last_sig ? streak + 1 : (sig ? 1 : 0);
        last_sig = sig;
        in.streak = streak;
        tnd_gate_decide(&d, &r->cfg->gate, &in);
        record_attempt(r, attempt, &cr, &in, &d, diff_rel, sig);
        say(r, "[%d/%d] %s: %s", attempt, r->cfg->gate.max_iterations,
            tnd_gate_action_name(d.action), d.reason);
        free(r->last_diff_rel);
        r->last_diff_rel = diff_rel;
        diff_rel = NULL;
        if (d.action == TND_GATE_APPROVE) {
            if (tnd_session_write(r->session, "final.diff", diff,
                                  strlen(diff)) < 0) {
                error = -1;
                goto next;
            }
            r->final_rel = tnd_session_relpath(r->session, "final.diff");
            r->status = "approved";
            r->reason = tnd_xstrdup(d.reason);
            fputs(diff, stdout);
            fflush(stdout);
        } else if (d.action == TND_GATE_ESCALATE) {
            r->status = "escalated";
            r->reason = tnd_xstrdup(d.reason);
        } else {
            char *next_feedback = tnd_feedback_build(
                &in, &d, (const char *const *)r->history, diff);
            free(feedback);
            feedback = next_feedback;
            free(hints);
            hints = failure_hints(audited ? &audit : NULL);
            history_add(r, "attempt %d: %s", attempt, d.reason);
            if (tnd_workspace_revert(r->ws) < 0)
                error = -1;
        }
    next:
        free(req.repo_map);
        for (size_t i = 0; i < req.nfiles; i++) {
            free(req.files[i].path);
            free(req.files[i].content);
        }
        free(req.files);
        free(body);
        free(reply);
        free(diff);
        free(diff_rel);
        free(apply_error);
        tnd_code_reply_clear(&cr);
        tnd_audit_reply_clear(&audit);
        if (error < 0 || r->status)
            break;
    }
    free(feedback);
    free(hints);
    return error;
}

/* ---- the end ------------------------------------------------------------ */

static json_object *usage_json(const tnd_usage *u)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "llm_calls", json_object_new_int64(u->calls));
    json_object_object_add(o, "prompt",
                           json_object_new_int64(u->prompt_tokens));
    json_object_object_add(o, "completion",
                           json_object_new_int64(u->completion_tokens));
    json_object_object_add(o, "estimated",
                           json_object_new_boolean(u->estimated));
    json_object_object_add(o, "latency_ms",
                           json_object_new_int64(u->latency_ms));
    json_object_object_add(o, "retries", json_object_new_int64(u->retries));
    return o;
}

static int write_report(run *r, const tnd_usage *total, int64_t elapsed)
{
    json_object *o = json_object_new_object();
    json_object *by_role = json_object_new_object();
    json_object *tokens = json_object_new_object();
    char when[40];
    char *text;
    int error;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "session",
                           json_object_new_string(tnd_session_id(r->session)));
    json_object_object_add(o, "status", json_object_new_string(r->status));
    json_object_object_add(o, "reason", tnd_json_str_or_null(r->reason));
    json_object_object_add(o, "task", json_object_new_string(r->opts->task));
    json_object_object_add(o, "repo", json_object_new_string(r->repo));
    json_object_object_add(o, "config", tnd_json_str_or_null(r->cfg->path));
    tnd_clock_iso8601(when, sizeof(when), r->started_wall);
    json_object_object_add(o, "started", json_object_new_string(when));
    json_object_object_add(o, "elapsed_ms", json_object_new_int64(elapsed));
    json_object_object_add(o, "iterations", json_object_new_int(r->iterations));
    json_object_object_add(o, "llm_calls", json_object_new_int64(total->calls));
    json_object_object_add(tokens, "prompt",
                           json_object_new_int64(total->prompt_tokens));
    json_object_object_add(tokens, "completion",
                           json_object_new_int64(total->completion_tokens));
    json_object_object_add(tokens, "estimated",
                           json_object_new_boolean(total->estimated));
    json_object_object_add(o, "tokens", tokens);
    json_object_object_add(by_role, "coder", usage_json(&r->usage[0]));
    json_object_object_add(by_role, "reviewer", usage_json(&r->usage[1]));
    json_object_object_add(o, "by_role", by_role);
    json_object_object_add(o, "final_diff", tnd_json_str_or_null(r->final_rel));
    json_object_object_add(o, "last_diff",
                           tnd_json_str_or_null(r->last_diff_rel));
    json_object_object_add(o, "attempts", json_object_get(r->attempts));
    text = tnd_json_pretty(o);
    tnd_log_redact(text);
    error = tnd_session_write(r->session, "report.json", text, strlen(text));
    free(text);
    json_object_put(o);
    return error;
}

/* 12345 -> "12,345" into buf. */
static const char *thousands(char *buf, size_t size, long n)
{
    char raw[32];
    size_t len, o = 0;

    snprintf(raw, sizeof(raw), "%ld", n);
    len = strlen(raw);
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        buf[o++] = raw[i];
        if (raw[i] != '-' && (len - i - 1) % 3 == 0 && i + 1 < len)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

static int finish(run *r)
{
    tnd_usage total = r->usage[0];
    int64_t elapsed = tnd_now_ms() - r->started;
    char t[32], p[32], c[32];
    int code;

    tnd_usage_add(&total, &r->usage[1]);
    if (write_report(r, &total, elapsed) < 0)
        tnd_log_error("cannot write the report: %s", tnd_error_last());
    fprintf(
        stderr,
        "%s after %d iteration%s · %ld LLM call%s · %s tokens%s (%s "
        "prompt + %s completion) · %.1fs\n",
        r->status, r->iterations, r->iterations == 1 ? "" : "s", total.calls,
        total.calls == 1 ? "" : "s",
        thousands(t, sizeof(t), total.prompt_tokens + total.completion_tokens),
        total.estimated ? " (estimated)" : "",
        thousands(p, sizeof(p), total.prompt_tokens),
        thousands(c, sizeof(c), total.completion_tokens), elapsed / 1000.0);
    if (strcmp(r->status, "approved") == 0) {
        code = TND_EXIT_OK;
    } else if (strcmp(r->status, "escalated") == 0) {
        fprintf(stderr, "needs a human: %s\n", r->reason);
        if (r->last_diff_rel)
            fprintf(stderr, "the last proposal is in %s/%s\n", r->repo,
                    r->last_diff_rel);
        code = TND_EXIT_HUMAN;
    } else {
        fprintf(stderr, "failed: %s\n", r->reason ? r->reason : "");
        code = TND_EXIT_FAILED;
    }
    fprintf(stderr, "session %s: %s/\n", tnd_session_id(r->session),
            tnd_session_dir(r->session));
    return code;
}

static void run_close(run *r)
{
    tnd_supervisor_destroy(&r->sup, STOP_GRACE_MS);
    tnd_broker_destroy(&r->broker);
    tnd_workspace_destroy(&r->ws, !r->opts->keep_workspace);
    if (r->runtime) {
        if (r->opts->keep_workspace) {
            char *sock = tnd_fs_join(r->runtime, "broker.sock");
            unlink(sock);
            free(sock);
        } else {
            tnd_fs_rmtree(r->runtime);
        }
    }
    tnd_session_destroy(&r->session);
    tnd_config_destroy(&r->cfg);
    for (size_t i = 0; i < r->nhistory; i++)
        free(r->history[i]);
    free(r->history);
    free(r->hashes);
    if (r->required)
        for (char **p = r->required; *p; p++)
            free(*p);
    free(r->required);
    for (int i = 0; i < 4; i++)
        free(r->hidden[i]);
    json_object_put(r->attempts);
    free(r->programs[0]);
    free(r->programs[1]);
    free(r->endpoint);
    free(r->runtime);
    free(r->reason);
    free(r->final_rel);
    free(r->last_diff_rel);
    free(r->repo);
}

int tnd_run(const tnd_run_options *opts)
{
    run r;
    struct sigaction sa, old_int, old_term, old_hup;
    tnd_broker_options bo;
    char *ws_dir = NULL;
    int error, code;

    memset(&r, 0, sizeof(r));
    r.opts = opts;
    r.started = tnd_now_ms();
    r.started_wall = tnd_wall_ms();
    r.attempts = json_object_new_array();
    tnd_log_init("tandem", opts->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);

    if (!(r.repo = tnd_fs_realpath(opts->repo ? opts->repo : "."))) {
        fprintf(stderr, "tandem: --repo: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if (!tnd_fs_is_dir(r.repo)) {
        fprintf(stderr, "tandem: --repo: %s is not a directory\n", r.repo);
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if ((error = load_config(&r)) < 0 || (error = find_program(&r, 0)) < 0 ||
        (error = find_program(&r, 1)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return error == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    collect_required(&r);
    hide_own_files(&r);
    if (!(r.session = tnd_session_new(r.repo)) || make_runtime(&r) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    signal(SIGPIPE, SIG_IGN);

    say(&r, "session %s: %s", tnd_session_id(r.session), opts->task);
    ws_dir = tnd_fs_join(r.runtime, "workspace");
    memset(&bo, 0, sizeof(bo));
    bo.endpoint = r.endpoint;
    bo.heartbeat_ms = r.cfg->orchestrator.heartbeat_ms;
    bo.liveness = r.cfg->orchestrator.liveness;
    error = 0;
    if (!(r.ws = tnd_workspace_new(r.repo, ws_dir,
                                   r.cfg->orchestrator.workspace_max_bytes)) ||
        !(r.broker = tnd_broker_new(&bo)) || start_agents(&r) < 0)
        error = -1;
    if (error == 0)
        error = loop(&r);
    if (error < 0) {
        r.status = "failed";
        free(r.reason);
        r.reason = tnd_xstrdup(tnd_error_last());
    }
    code = finish(&r);
    free(ws_dir);
    run_close(&r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    return code;
}
