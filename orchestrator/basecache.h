/* tnd_basecache - baselines that served sessions on the same tree share
 * (tandem serve).
 *
 * A baseline (the skills on the unmodified tree, audit_step.c) is a
 * function of the tree's bytes and of what the reviewer is told to run
 * there; neither names the task. Sessions of one server whose baselines
 * have the same key (tnd_basecache_key: the base tree's hash, its
 * directories and a hash of the resolved config the baseline depends on)
 * therefore share one: the first to ask runs it, the others wait for its
 * reply (single flight), and later ones take it while it is younger than
 * the age limit.
 * A run that fails is not kept: its waiters run their own.
 *
 * Thread-safe: the hub owns the cache; session threads call it. */
#ifndef TND_BASECACHE_H
#define TND_BASECACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/sha256.h"

typedef struct tnd_basecache tnd_basecache;

/* The most baselines kept; the oldest goes first. */
#define TND_BASECACHE_MAX 256

/* What tnd_basecache_take found (its non-negative returns). */
enum {
    TND_BASECACHE_HIT = 0,   /* *out holds a baseline to reuse */
    TND_BASECACHE_RUN = 1,   /* none: run it and end the flight with
                                tnd_basecache_done (others wait for it) */
    TND_BASECACHE_ALONE = 2, /* the run waited for failed: run one of
                                your own, and tell nobody */
};

/* A baseline taken from the cache: the reply body as the session that
 * ran it journaled it, that session's id and its workspace (for paths
 * in the skills' output). Free with tnd_basecache_hit_clear. */
typedef struct tnd_basecache_hit {
    char *reply;
    size_t len;
    char *session;
    char *workspace;
} tnd_basecache_hit;

/* A cache of at most max entries (1..), each kept max_age_ms. */
tnd_basecache *tnd_basecache_new(size_t max, int64_t max_age_ms);

/* Free; sets *self_p to NULL. Safe on NULL. No flight may be open. */
void tnd_basecache_destroy(tnd_basecache **self_p);

/* The key of a baseline into out (64 hex digits): tree (the base tree's
 * hash, proto/tree.h, then tnd_content_stamp's, its files' whole modes,
 * and their mtimes for a tree taken whole or one with untracked files
 * brought in (build outputs), which a reviewer on this host
 * sees in the workspace), dirs (the base
 * tree's directories, sorted and NULL-terminated, tnd_fs_list_dirs: the tree's
 * hash lists files and links only, and an empty directory is there for the
 * skills too; NULL for git's files, whose directories they imply), the service
 * asked, and every setting of cfg the baseline's result depends on: each skill
 * the reviewer runs (its name, command, required, timeout, output cap, paths,
 * order, limits, sandbox, network, built-in settings), the reviewer's program
 * and count, the workspace settings and the config's directory. The task's
 * words are not in it: the baseline asks no model and no skill is given them.
 */
void tnd_basecache_key(char out[TND_SHA256_HEX + 1], const tnd_config *cfg,
                       const char *tree, char *const *dirs,
                       const char *service);

/* The baseline of key for session (its id). A kept one younger than the
 * age limit: TND_BASECACHE_HIT with *out filled. None, and nobody runs
 * it: TND_BASECACHE_RUN; the caller runs it now and must call
 * tnd_basecache_done once, whatever happens. Someone runs it: wait
 * (told by on_wait first, when given, with the runner's session id)
 * until it is done (HIT, or ALONE when it failed), *stop is non-zero
 * (TND_ECANCELLED), or deadline (a tnd_now_ms() value) passes
 * (TND_ETIMEOUT); the error names the session waited for. */
int tnd_basecache_take(tnd_basecache_hit *out, tnd_basecache *self,
                       const char *key, const char *session,
                       const char *workspace, int64_t deadline,
                       const atomic_int *stop,
                       void (*on_wait)(const char *runner, void *payload),
                       void *payload);

/* End the flight tnd_basecache_take gave to the caller: reply (len
 * bytes, copied) is kept under key and goes to every waiter; NULL
 * (the run failed, or its result must not be reused) keeps nothing and
 * sends the waiters to run their own. */
void tnd_basecache_done(tnd_basecache *self, const char *key, const char *reply,
                        size_t len);

/* Baselines kept now (flights included). */
size_t tnd_basecache_size(tnd_basecache *self);

void tnd_basecache_hit_clear(tnd_basecache_hit *hit);

#endif
