/* tnd_reviewer - the reviewer agent's work: audit a proposed change.
 *
 * Runs the configured skills (build, test, ...) in the workspace the
 * request names: those the change concerns (skills.*.paths; the others
 * are reported skipped), each once the skills it waits for are done
 * (skills.*.after), in parallel up to one per CPU and, over all the
 * requests the process serves, one per slot of ctx->slots
 * (agents/slots.h). Each result carries
 * the places its output points at and the workspace files it changed.
 * Then it asks the model for a JSON critique with that evidence, the
 * code around each place included, re-asking once with the exact parse
 * error when the answer is not a valid critique. A request may carry
 * skill results already made (then no skill runs) and may ask for no
 * critique: the orchestrator audits in two phases that way when
 * gate.critique is on_trigger or a quorum reviews. The reviewer reports;
 * it does not decide: the orchestrator's gate makes the decision in
 * code. */
#ifndef TND_REVIEWER_H
#define TND_REVIEWER_H

#include <stdatomic.h>
#include <stddef.h>

#include "agents/blobcache.h"
#include "agents/llm.h"
#include "agents/progress.h"
#include "agents/slots.h"
#include "common/config.h"
#include "skills/holder.h"

typedef struct tnd_reviewer_ctx {
    tnd_llm *llm;
    const tnd_config *config; /* skills and their order */
    char *const *envp;        /* environment for skills, secrets removed */
    const atomic_int *cancel; /* may be NULL */
    tnd_progress *progress;   /* phases go here; may be NULL */
    tnd_blobcache *cache;     /* blobs sent by content, and the workspaces
                                 built from them; NULL: none */
    const char *runtime;      /* --runtime DIR, symlink-free: a request's
                                 workspace path is used only beneath it;
                                 NULL: never */
    tnd_slots *slots;         /* skills running at once in this process,
                                 shared by its threads; NULL: no bound
                                 but the audit's own (one per CPU) */
    tnd_holder *holder;       /* the process's running sandbox, from which
                                 each skill's is made (skills/holder.h);
                                 NULL: a bwrap per skill */
    const char *role;         /* the critique prompt's role, which a
                                 recording keys its answers on: "reviewer",
                                 or "reviewer.N" for quorum member N;
                                 NULL: "reviewer" */
} tnd_reviewer_ctx;

/* The skills a reviewer process runs at once (c's
 * agents.reviewer.skills_at_once, or the CPUs it may use): the size of
 * the tnd_slots its threads share. */
size_t tnd_reviewer_skills_at_once(const tnd_config *c);

/* Handle one request body; returns the reply body (caller frees): an
 * "audit_reply"; a "need" body listing the blobs of the request's tree
 * the cache lacks; or an "error" body when the request was malformed,
 * names no tree this reviewer may use, carries a blob that does not
 * match its hash, or the model could not be reached.
 *
 * Where the skills run: the request's "workspace" when ctx->runtime is
 * set and the path, symlinks resolved, lies beneath it (an agent the
 * orchestrator started on its own host); otherwise a workspace built in
 * the cache from the tree and changes the request names, removed after
 * the reply. A path from the wire is never used otherwise. */
char *tnd_reviewer_handle(const tnd_reviewer_ctx *ctx, const char *body,
                          size_t len, size_t *reply_len);

#endif
