/* The reviewer's request handler (see reviewer.h). */
#include "agents/reviewer.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent.h"
#include "agents/critique.h"
#include "agents/prompt.h"
#include "agents/slots.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/audit.h"
#include "skills/excerpt.h"
#include "skills/locations.h"
#include "skills/manifest.h"
#include "skills/patch.h"
#include "skills/skill.h"

/* Files a workspace may hold for the reviewer to notice changes. */
#define MANIFEST_MAX_FILES 200000

/* ---- running the skills ------------------------------------------------- *
 *
 * Each skill is a job. A job starts when every job it waits for (see
 * tnd_config_skill_waits) is done, with at most one running job per CPU;
 * each runs on its own thread, and this thread starts them, collects
 * them and looks for changed files. Results stay in the configured
 * order whatever order the jobs finish in. A skill whose dependency
 * failed still runs: results are evidence, and a test run after a
 * failed build says so itself. */

enum { JOB_WAITING, JOB_RUNNING, JOB_FINISHED, JOB_DONE };

typedef struct job {
    struct sched *sched;
    const tnd_skill_config *skill;
    tnd_skill_result *result;
    int state;     /* under sched->lock once threads run */
    bool threaded; /* thread must be joined */
    pthread_t thread;
    char **changed; /* files changed while it ran; this thread's only */
    size_t nchanged, achanged;
} job;

typedef struct sched {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *jobs;
    size_t n, running, done, max_running;
    const tnd_reviewer_ctx *ctx;
    const tnd_audit_request *req;
    tnd_skill_ctx skill_ctx;
    tnd_manifest *manifest; /* NULL: changes are not tracked */
} sched;

/* A result for a skill that never ran: why says why. */
static void never_ran(tnd_skill_result *r, const tnd_skill_config *skill,
                      const char *why)
{
    memset(r, 0, sizeof(*r));
    r->name = tnd_xstrdup(skill->name);
    r->required = skill->required;
    r->command =
        tnd_xstrdup(skill->command.display ? skill->command.display : "");
    r->status = TND_SKILL_ERROR;
    r->exit_code = -1;
    r->output = tnd_xstrdup(why);
}

/* Run j's skill once the process has a slot for it (agents/slots.h). */
static void run_job(job *j)
{
    const tnd_reviewer_ctx *ctx = j->sched->ctx;
    /* a built-in runs in this process, a few ms: no sandbox to bound */
    tnd_slots *slots = *j->skill->builtin ? NULL : ctx->slots;

    if (slots && tnd_slots_take(slots, ctx->cancel) < 0) {
        never_ran(j->result, j->skill, "cancelled while it waited to start");
        return;
    }
    tnd_skill_run(j->result, j->skill, &j->sched->skill_ctx);
    if (slots)
        tnd_slots_give(slots);
}

static void *job_main(void *arg)
{
    job *j = arg;

    run_job(j);
    pthread_mutex_lock(&j->sched->lock);
    j->state = JOB_FINISHED;
    pthread_cond_signal(&j->sched->cond);
    pthread_mutex_unlock(&j->sched->lock);
    return NULL;
}

static bool ready(const sched *s, size_t i)
{
    for (size_t j = 0; j < s->n; j++)
        if (j != i && s->jobs[j].state != JOB_DONE &&
            tnd_config_skill_waits(s->ctx->config, i, j))
            return false;
    return true;
}

/* Attribute the files changed since the last look to every command that
 * ran in the meantime: with one running (the default order) that is
 * exact; with several, any of them may have done it. */
static void look(sched *s)
{
    char **changed;
    size_t n;

    if (!s->manifest)
        return;
    n = tnd_manifest_changes(&changed, s->manifest);
    for (size_t i = 0; i < s->n && n; i++) {
        job *j = &s->jobs[i];
        if ((j->state != JOB_RUNNING && j->state != JOB_FINISHED) ||
            *j->skill->builtin)
            continue;
        for (size_t k = 0; k < n && j->nchanged < TND_AUDIT_MAX_CHANGED; k++) {
            bool dup = false;
            for (size_t m = 0; m < j->nchanged && !dup; m++)
                dup = strcmp(j->changed[m], changed[k]) == 0;
            if (dup)
                continue;
            TND_GROW(j->changed, j->achanged, j->nchanged + 1);
            j->changed[j->nchanged++] = tnd_xstrdup(changed[k]);
        }
    }
    tnd_str_list_free(&changed);
}

static bool commands_running(const sched *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->jobs[i].state == JOB_RUNNING && !*s->jobs[i].skill->builtin)
            return true;
    return false;
}

static void start(sched *s, job *j)
{
    char what[96];

    if (commands_running(s))
        look(s);
    snprintf(what, sizeof(what), "skill %s", j->skill->name);
    tnd_progress_phase(s->ctx->progress, what);
    j->state = JOB_RUNNING;
    s->running++;
    if (pthread_create(&j->thread, NULL, job_main, j) == 0) {
        j->threaded = true;
        return;
    }
    /* no thread to be had: run it here, the others keep going */
    tnd_log_warn("cannot start a thread for skill %s; running it alone",
                 j->skill->name);
    pthread_mutex_unlock(&s->lock);
    run_job(j);
    pthread_mutex_lock(&s->lock);
    j->state = JOB_FINISHED;
}

static void log_result(const sched *s, const tnd_skill_result *r)
{
    tnd_buf list;

    tnd_log_info("task %s attempt %d: %s", s->req->task_id, s->req->attempt,
                 tnd_skill_summary(r));
    if (!r->nchanged)
        return;
    tnd_buf_init(&list, 4096);
    for (size_t i = 0; i < r->nchanged && i < 10; i++)
        tnd_buf_printf(&list, "%s%s", i ? ", " : "", r->changed[i]);
    if (r->nchanged > 10)
        tnd_buf_printf(&list, " and %zu more", r->nchanged - 10);
    tnd_log_warn("task %s attempt %d: skill %s changed %s (a skill must not "
                 "change the files it audits)",
                 s->req->task_id, s->req->attempt, r->name, tnd_buf_str(&list));
    tnd_buf_free(&list);
}

/* A finished job: its thread joined, its changed files and locations
 * added to its result. */
static void collect(sched *s, job *j)
{
    tnd_skill_result *r = j->result;

    if (j->threaded) {
        pthread_mutex_unlock(&s->lock);
        pthread_join(j->thread, NULL);
        pthread_mutex_lock(&s->lock);
        j->threaded = false;
    }
    r->changed = j->changed;
    r->nchanged = j->nchanged;
    j->changed = NULL;
    j->nchanged = 0;
    r->nlocations = tnd_locations_find(
        &r->locations, r->output, s->req->workspace, TND_AUDIT_MAX_LOCATIONS);
    log_result(s, r);
    j->state = JOB_DONE;
    s->running--;
    s->done++;
}

static void fail_job(sched *s, job *j, const char *why)
{
    never_ran(j->result, j->skill, why);
    log_result(s, j->result);
    j->state = JOB_DONE;
    s->done++;
}

static void schedule(sched *s)
{
    pthread_mutex_lock(&s->lock);
    while (s->done < s->n) {
        bool cancelled = s->ctx->cancel && atomic_load(s->ctx->cancel);
        bool collected = false;
        for (size_t i = 0; i < s->n; i++) {
            job *j = &s->jobs[i];
            if (j->state != JOB_WAITING)
                continue;
            if (cancelled)
                fail_job(s, j, "cancelled before it started");
            else if (s->running < s->max_running && ready(s, i))
                start(s, j);
        }
        if (s->manifest && s->running) {
            for (size_t i = 0; i < s->n && !collected; i++)
                collected = s->jobs[i].state == JOB_FINISHED;
            if (collected)
                look(s);
            collected = false;
        }
        for (size_t i = 0; i < s->n; i++)
            if (s->jobs[i].state == JOB_FINISHED) {
                collect(s, &s->jobs[i]);
                collected = true;
            }
        if (collected || s->done == s->n)
            continue;
        if (s->running == 0) {
            /* nothing runs and nothing can start: the loader rejects
             * such cycles, a hand-built config might not */
            for (size_t i = 0; i < s->n; i++)
                if (s->jobs[i].state == JOB_WAITING)
                    fail_job(s, &s->jobs[i],
                             "waits for skills that wait for it (a cycle in "
                             "skills.*.after)");
            break;
        }
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Built-ins judge the change as it came to this reviewer, so they run
 * before any command, which could change what they read: a build that
 * shrank an added file passed it under max_file_kb (a review found it).
 * They take a few ms and no slot, and wait for nothing: what they read
 * is the request's. */
static void run_builtins(sched *s)
{
    for (size_t i = 0; i < s->n; i++) {
        job *j = &s->jobs[i];
        if (j->state != JOB_WAITING || !*j->skill->builtin)
            continue;
        j->state = JOB_RUNNING;
        s->running++;
        run_job(j);
        collect(s, j);
    }
}

/* CPUs this process may use (its affinity mask), 1..the skill cap. */
static size_t cpus(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof(set), &set) == 0
                 ? CPU_COUNT(&set)
                 : sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1                     ? 1
           : n > TND_BODY_MAX_SKILLS ? TND_BODY_MAX_SKILLS
                                     : (size_t)n;
}

size_t tnd_reviewer_skills_at_once(const tnd_config *c)
{
    return c->reviewer.skills_at_once > 0 ? (size_t)c->reviewer.skills_at_once
                                          : cpus();
}

/* Skills that cannot or need not run are done before scheduling starts:
 * unknown names (the loader rejects them; a hand-built config might
 * not) and skills whose paths the change does not touch. */
static void prepare(sched *s, job *j, const char *name,
                    const char *const *touched)
{
    j->sched = s;
    if (!j->skill) {
        memset(j->result, 0, sizeof(*j->result));
        j->result->name = tnd_xstrdup(name);
        j->result->status = TND_SKILL_ERROR;
        j->result->required = true;
        j->result->exit_code = -1;
        j->result->command = tnd_xstrdup("");
        j->result->output =
            tnd_xasprintf("no skill named '%s' is configured", name);
        j->state = JOB_DONE;
        s->done++;
        return;
    }
    if (s->req->baseline && *j->skill->builtin) {
        tnd_skill_skip(j->result, j->skill,
                       "skipped: a built-in skill judges a change, and the "
                       "baseline has none\n");
        log_result(s, j->result);
        j->state = JOB_DONE;
        s->done++;
        return;
    }
    if (touched && !tnd_skill_applies(j->skill, touched)) {
        tnd_buf why;
        tnd_buf_init(&why, TND_BUF_NOCAP);
        tnd_buf_puts(&why, "skipped: the change touches no path matching ");
        for (char **p = j->skill->paths; *p; p++)
            tnd_buf_printf(&why, "%s%s", p == j->skill->paths ? "" : ", ", *p);
        tnd_buf_puts(&why, "\n");
        tnd_skill_skip(j->result, j->skill, tnd_buf_str(&why));
        tnd_buf_free(&why);
        log_result(s, j->result);
        j->state = JOB_DONE;
        s->done++;
    }
}

/* The skills' outputs may add up to this much in one reply, as JSON: 32
 * skills of 1 MiB each would pass the protocol's 16 MiB for one body,
 * and so would 3 whose output is control characters, which JSON writes
 * six bytes each (\u0001); a reply that large is not sent, and the
 * audit fails with an agent error. */
#define OUTPUTS_MAX (8 << 20)

/* Bytes s takes in a JSON string, as tnd_json_dump writes it (no escaped
 * '/'). */
static size_t json_size(const char *s)
{
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += *p == '"' || *p == '\\' || *p == '\b' || *p == '\f' ||
                     *p == '\n' || *p == '\r' || *p == '\t'
                 ? 2
             : *p < 0x20 ? 6
                         : 1;
    return n;
}

/* Over OUTPUTS_MAX in all, each output gets an equal share, cut to what
 * says what failed (skills/excerpt.h) rather than refused. */
static void fit_outputs(tnd_audit_reply *reply)
{
    size_t total = 0, share;

    for (size_t i = 0; i < reply->nskills; i++)
        total +=
            reply->skills[i].output ? json_size(reply->skills[i].output) : 0;
    if (total <= OUTPUTS_MAX || reply->nskills == 0)
        return;
    share = OUTPUTS_MAX / reply->nskills;
    tnd_log_warn("the skills printed %zu bytes in all (as JSON), more than "
                 "a reply carries; each output is cut to %zu bytes",
                 total, share);
    for (size_t i = 0; i < reply->nskills; i++) {
        tnd_skill_result *s = &reply->skills[i];
        size_t size = s->output ? json_size(s->output) : 0, max;
        if (size <= share)
            continue;
        /* the excerpt's budget is in bytes of text: as many as the share
         * holds at this output's rate, halved until the cut fits (what it
         * keeps first may be denser than the rest) */
        max =
            (size_t)((double)share * (double)strlen(s->output) / (double)size);
        for (;;) {
            char *cut = tnd_excerpt(s->output, NULL, max, NULL);
            if (json_size(cut) <= share || max < 64) {
                free(s->output);
                s->output = cut;
                break;
            }
            free(cut);
            max /= 2;
        }
    }
}

static void run_skills(tnd_audit_reply *reply, const tnd_reviewer_ctx *ctx,
                       const tnd_audit_request *req)
{
    sched s;
    tnd_patch patch;
    const char **touched = NULL;
    size_t n = 0;

    for (char **p = ctx->config->reviewer.skills; p && *p; p++)
        n++;
    if (n > TND_BODY_MAX_SKILLS)
        n = TND_BODY_MAX_SKILLS;
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.cond, NULL);
    s.n = n;
    s.ctx = ctx;
    s.req = req;
    s.max_running = cpus();
    s.skill_ctx.dir = req->workspace;
    s.skill_ctx.diff = req->diff;
    s.skill_ctx.envp = ctx->envp;
    s.skill_ctx.cancel = ctx->cancel;
    s.skill_ctx.holder = ctx->holder;
    s.jobs = tnd_xcalloc(n + 1, sizeof(*s.jobs));
    reply->skills = tnd_xcalloc(n + 1, sizeof(*reply->skills));
    reply->nskills = n;
    if (req->baseline)
        memset(&patch, 0, sizeof(patch)); /* every skill runs, paths or not */
    else if (tnd_patch_parse(&patch, req->diff, strlen(req->diff), NULL,
                             NULL) == 0)
        touched = tnd_patch_paths(&patch);
    else
        tnd_log_warn("task %s attempt %d: %s; every skill runs", req->task_id,
                     req->attempt, tnd_error_last());
    for (size_t i = 0; i < n; i++) {
        const char *name = ctx->config->reviewer.skills[i];
        s.jobs[i].skill = tnd_config_skill(ctx->config, name);
        s.jobs[i].result = &reply->skills[i];
        prepare(&s, &s.jobs[i], name, touched);
    }
    if (s.done < n &&
        !(s.manifest = tnd_manifest_new(req->workspace, MANIFEST_MAX_FILES)))
        tnd_log_warn("task %s attempt %d: changed files are not tracked: %s",
                     req->task_id, req->attempt, tnd_error_last());
    run_builtins(&s);
    schedule(&s);
    tnd_manifest_destroy(&s.manifest);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s.jobs[i].nchanged; k++)
            free(s.jobs[i].changed[k]);
        free(s.jobs[i].changed);
    }
    free(touched);
    tnd_patch_clear(&patch);
    free(s.jobs);
    pthread_cond_destroy(&s.cond);
    pthread_mutex_destroy(&s.lock);
}

/* Why an answer the provider cut at max_tokens is no critique, for the
 * re-ask and the gate: a critique that parses may be a draft the model
 * went on to revise, or one whose issues list was still growing. Caller
 * frees. */
static char *cut_error(const tnd_llm_answer *answer)
{
    if (answer->filtered)
        return tnd_xstrdup("the provider stopped the answer with its content "
                           "filter, so it is not taken as a critique. Answer "
                           "with the JSON object only");
    return tnd_xasprintf(
        "the answer was cut off at the model's output limit (max_tokens) "
        "after %ld tokens, so it is not taken as a critique. Answer with the "
        "JSON object only, its summary and evidence short; or raise the "
        "reviewer model's llm.max_tokens (agents.reviewer.llm, or its entry "
        "in agents.reviewer.models)",
        answer->usage.completion_tokens);
}

/* Ask for the critique; a second call carries the parse error. Returns
 * -1 only when the model could not be reached (reply->critique_error is
 * set for an answer that never parsed). */
static int critique(tnd_audit_reply *reply, const tnd_reviewer_ctx *ctx,
                    const tnd_audit_request *req)
{
    char *user = tnd_prompt_reviewer_user(req, reply->skills, reply->nskills);
    char *ask = tnd_xstrdup(user);
    tnd_llm_answer answer;
    tnd_prompt prompt;
    int error = 0;

    memset(&answer, 0, sizeof(answer));
    memset(&prompt, 0, sizeof(prompt));
    prompt.system = tnd_prompt_reviewer_system();
    /* a quorum's members are recorded apart: under one role the
     * cassette kept one member's critique, and a replay gave it to all */
    prompt.role = ctx->role ? ctx->role : "reviewer";
    prompt.task_id = req->task_id;
    prompt.attempt = req->attempt;
    for (int call = 1; call <= 2; call++) {
        prompt.user = ask;
        prompt.call = call;
        tnd_llm_answer_clear(&answer);
        if (tnd_llm_complete(&answer, ctx->llm, &prompt) < 0) {
            error = -1;
            break;
        }
        tnd_usage_add(&reply->usage, &answer.usage);
        free(reply->critique_error);
        reply->critique_error = NULL;
        if (answer.truncated)
            reply->critique_error = cut_error(&answer);
        else if (tnd_critique_parse(&reply->critique, answer.text) < 0)
            reply->critique_error = tnd_xstrdup(tnd_error_last());
        if (!reply->critique_error)
            break;
        tnd_log_warn("task %s attempt %d: unusable critique (%s)%s",
                     req->task_id, req->attempt, reply->critique_error,
                     call == 1 ? "; asking again" : "");
        free(ask);
        ask = tnd_prompt_reviewer_retry(user, reply->critique_error);
    }
    tnd_llm_answer_clear(&answer);
    free(ask);
    free(user);
    return error;
}

/* path with its symlinks resolved, when that lies beneath dir
 * (symlink-free); else NULL. Caller frees. */
static char *beneath(const char *path, const char *dir)
{
    char *real = realpath(path, NULL);
    size_t n = strlen(dir);

    if (real && strncmp(real, dir, n) == 0 && real[n] == '/')
        return real;
    free(real);
    return NULL;
}

/* What a blob sent with req is, for messages: "the manifest", a path,
 * or NULL when neither the tree nor the changes name it. */
static const char *blob_what(const tnd_audit_request *req, const tnd_tree *tree,
                             const char *hash)
{
    const tnd_tree_entry *e;

    if (req->tree && strcmp(hash, req->tree) == 0)
        return "the manifest";
    for (size_t i = 0; i < req->nchanges; i++)
        if (!req->changes[i].deleted && strcmp(req->changes[i].blob, hash) == 0)
            return req->changes[i].path;
    e = tree ? tnd_tree_find_blob(tree, hash) : NULL;
    return e ? e->path : NULL;
}

/* Store the blobs req carries that its manifest or changes name (the
 * manifest first, so the others can be named): each checked against its
 * hash. -1 with the error naming a wrong one. */
static int store_blobs(tnd_blobcache *cache, const tnd_audit_request *req,
                       tnd_tree **tree)
{
    bool others = false; /* blobs besides the manifest */

    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < req->nblobs; i++) {
            const tnd_blob *b = &req->blobs[i];
            bool manifest = strcmp(b->hash, req->tree) == 0;
            const char *what;
            others = others || !manifest;
            if (manifest != (pass == 0))
                continue;
            if (!(what = blob_what(req, *tree, b->hash))) {
                tnd_log_warn("task %s attempt %d: blob %s is not in tree %s "
                             "nor in the changes; not stored",
                             req->task_id, req->attempt, b->hash, req->tree);
                continue;
            }
            if (tnd_blobcache_put(cache, b, what) < 0)
                return -1;
        }
        if (pass == 0 && !*tree && tnd_blobcache_has(cache, req->tree) &&
            !(*tree = tnd_blobcache_tree(cache, req->tree)))
            return -1;
        /* what the cache holds of the tree is this request's: the blobs
         * stored next must not remove it to make room */
        if (pass == 0 && *tree && others)
            tnd_blobcache_hold(cache, *tree, req->changes, req->nchanges);
    }
    return 0;
}

/* Where the skills of req run, into *ws (borrowed from req, or built:
 * then *built holds it too, for tnd_blobcache_drop). 1 with *need set
 * (a "need" body) when the cache lacks blobs; -1 with the error set. */
static int workspace_for(char **built, char **need, size_t *need_len,
                         const tnd_reviewer_ctx *ctx, tnd_audit_request *req)
{
    tnd_tree *tree = NULL;
    char **missing = NULL, *real;
    int rc = -1;

    *built = NULL;
    if (req->workspace && ctx->runtime &&
        (real = beneath(req->workspace, ctx->runtime))) {
        /* the orchestrator's own, on this host: used by the path checked,
         * not the one sent, whose links could change after the check */
        free(req->workspace);
        req->workspace = real;
        return 0;
    }
    if (req->workspace)
        tnd_log_info("task %s attempt %d: the workspace path %s is not "
                     "beneath this reviewer's --runtime directory; "
                     "building from content",
                     req->task_id, req->attempt, req->workspace);
    if (!req->tree)
        return tnd_error_set("the request names no tree by content, and its "
                             "workspace path %s is not one this reviewer may "
                             "use (only a path beneath --runtime DIR is)",
                             req->workspace ? req->workspace : "(none)");
    if (!ctx->cache)
        return tnd_error_set("this reviewer has no blob cache to build tree "
                             "%s in",
                             req->tree);
    tnd_blobcache_lock(ctx->cache); /* to the build: see blobcache.h */
    if (store_blobs(ctx->cache, req, &tree) < 0)
        goto out;
    if (!tree) {
        const char *list[] = {req->tree};
        *need = tnd_need_encode(req->task_id, req->attempt, list, 1, need_len);
        tnd_log_info("task %s attempt %d: need the manifest of tree %s",
                     req->task_id, req->attempt, req->tree);
        rc = 1;
        goto out;
    }
    if ((missing = tnd_blobcache_missing(ctx->cache, tree, req->changes,
                                         req->nchanges))) {
        size_t n = 0;
        while (missing[n])
            n++;
        *need = tnd_need_encode(req->task_id, req->attempt,
                                (const char *const *)missing, n, need_len);
        tnd_log_info("task %s attempt %d: need %zu blob%s of tree %s",
                     req->task_id, req->attempt, n, n == 1 ? "" : "s",
                     req->tree);
        rc = 1;
        goto out;
    }
    if (tnd_blobcache_build(built, ctx->cache, tree, req->changes,
                            req->nchanges) < 0)
        goto out;
    free(req->workspace);
    req->workspace = tnd_xstrdup(*built);
    rc = 0;
out:
    tnd_blobcache_unlock(ctx->cache);
    tnd_str_list_free(&missing);
    tnd_tree_destroy(&tree);
    return rc;
}

/* The model could not be asked (the error is set), but a required skill
 * failed or timed out on the change: the gate rejects it whatever a
 * critique would say, so the reply carries that evidence with the
 * model's failure as its critique_error. An error reply instead read as
 * "could not review" (exit 4), which --on-error pass let through: a
 * change that broke the build was committed because the model was
 * down. False, reply untouched, when every required skill passed (or
 * could not run): then only the model could judge the change. */
static bool judged_without_model(tnd_audit_reply *reply,
                                 const tnd_audit_request *req)
{
    const tnd_skill_result *failed = NULL;

    for (size_t i = 0; i < reply->nskills && !failed; i++) {
        const tnd_skill_result *s = &reply->skills[i];
        if (s->required &&
            (s->status == TND_SKILL_FAIL || s->status == TND_SKILL_TIMEOUT))
            failed = s;
    }
    if (!failed)
        return false;
    tnd_log_warn("task %s attempt %d: no critique (%s); required skill %s "
                 "did not pass, which decides",
                 req->task_id, req->attempt, tnd_error_last(), failed->name);
    tnd_critique_destroy(&reply->critique);
    free(reply->critique_error);
    reply->critique_error =
        tnd_xasprintf("the model could not be asked: %s", tnd_error_last());
    return true;
}

char *tnd_reviewer_handle(const tnd_reviewer_ctx *ctx, const char *body,
                          size_t len, size_t *reply_len)
{
    tnd_audit_request req;
    tnd_audit_reply reply;
    char *out = NULL, *built = NULL;
    int where;

    memset(&reply, 0, sizeof(reply));
    if (tnd_audit_request_decode(&req, body, len) < 0) {
        out = tnd_agent_fail(req.task_id, req.attempt, reply_len);
        tnd_audit_request_clear(&req);
        return out;
    }
    if ((where = workspace_for(&built, &out, reply_len, ctx, &req)) != 0) {
        if (where < 0)
            out = tnd_agent_fail(req.task_id, req.attempt, reply_len);
        tnd_audit_request_clear(&req);
        return out;
    }
    if (req.skills) {
        /* evidence from an earlier phase: judge it, do not remake it */
        reply.skills = req.skills;
        reply.nskills = req.nskills;
        req.skills = NULL;
        req.nskills = 0;
    } else {
        run_skills(&reply, ctx, &req);
        fit_outputs(&reply);
    }
    if (ctx->cancel && atomic_load(ctx->cancel)) {
        out = tnd_error_reply_encode(req.task_id, req.attempt, "cancelled",
                                     reply_len);
        goto done;
    }
    if (req.critique) {
        tnd_progress_phase(ctx->progress, "critique");
        if (critique(&reply, ctx, &req) < 0 &&
            !judged_without_model(&reply, &req)) {
            out = tnd_agent_fail(req.task_id, req.attempt, reply_len);
            goto done;
        }
    } else {
        reply.critique_error = tnd_xstrdup("no critique was asked for");
    }
    reply.task_id = tnd_xstrdup(req.task_id);
    reply.attempt = req.attempt;
    if (reply.critique)
        tnd_log_info("task %s attempt %d: critique says %s (confidence "
                     "%.2f, %zu issue(s))",
                     req.task_id, req.attempt,
                     tnd_verdict_name(reply.critique->verdict),
                     reply.critique->confidence, reply.critique->nissues);
    out = tnd_audit_reply_encode(&reply, reply_len);
done:
    if (built)
        tnd_blobcache_drop(ctx->cache, &built);
    tnd_audit_reply_clear(&reply);
    tnd_audit_request_clear(&req);
    return out;
}
