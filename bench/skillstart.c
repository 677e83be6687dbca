/* bench/skillstart - what starting one skill costs the reviewer.
 *
 * Every attempt runs each configured skill in its sandbox (issue 8:
 * the benchmark's tasks run six each). This times, in this one process,
 * a skill whose command is `true` through tnd_skill_run, in a sandbox of
 * its own, made from the reviewer's running sandbox (skills/holder.h;
 * bin/tandem-sandbox-enter unless TANDEM_SANDBOX_ENTER says) and (for
 * the yardstick) with `sandbox: none`, and the pids cgroup a
 * skill gets alone (made, then removed): wall and CPU (this process and
 * its reaped children) of each run: medians, and the mean wall time
 * (a slow tail is time a reviewer spends too).
 *
 *   build/bench/skillstart [RUNS [WHICH]]
 *
 * Default 201 runs after 5 of warm-up. Prints one line per figure.
 * WHICH (own, entered, none or cgroup) times that one alone, for a
 * profiler to see nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/timing.h"
#include "common/config.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "common/str.h"
#include "proto/audit.h"
#include "skills/cgroup.h"
#include "skills/holder.h"
#include "skills/skill.h"

extern char **environ;

typedef enum what { SANDBOXED, ENTERED, UNSANDBOXED, CGROUP_ONLY } what;

/* One run of w; -1 when it did not do what it should. */
static int one(what w, const tnd_skill_config *skill, const tnd_skill_ctx *ctx)
{
    tnd_skill_config none;
    tnd_skill_result r;
    tnd_cgroup *cg;
    int ok;

    if (w == CGROUP_ONLY) {
        if (!(cg = tnd_cgroup_new(TND_SKILL_LIMIT_PROCESSES)))
            return -1;
        tnd_cgroup_destroy(&cg);
        return 0;
    }
    none = *skill;
    none.sandbox = w == UNSANDBOXED ? TND_SANDBOX_NONE : TND_SANDBOX_BWRAP;
    memset(&r, 0, sizeof(r));
    tnd_skill_run(&r, &none, ctx);
    ok = r.status == TND_SKILL_PASS ? 0 : -1;
    if (ok < 0)
        fprintf(stderr, "skillstart: the skill did not pass: %s\n",
                r.output ? r.output : "");
    tnd_skill_result_clear(&r);
    return ok;
}

int main(int argc, char **argv)
{
    static const char *const names[] = {
        "true in its own sandbox", "true from the reviewer's sandbox",
        "true without a sandbox", "a pids cgroup made and removed"};
    static const char *const which[] = {"own", "entered", "none", "cgroup"};
    int runs = argc > 1 ? atoi(argv[1]) : 201, only = -1;
    char root[] = "/tmp/tnd-skillstart-XXXXXX", *dir = NULL;
    char name[] = "true", builtin[] = "", prog[] = "true";
    char *true_argv[] = {prog, NULL};
    const char *roots[] = {root, NULL}, *probe_argv[] = {"/bin/true", NULL};
    tnd_skill_config skill;
    tnd_skill_ctx ctx, entered;
    tnd_sandbox_spec probe;
    tnd_holder *holder;
    tnd_holder_entry entry;
    char **held;
    double *wall, *cpu;

    for (int w = SANDBOXED; argc > 2 && w <= CGROUP_ONLY; w++)
        if (!strcmp(argv[2], which[w]))
            only = w;
    if (runs < 1 || (argc > 2 && only < 0) || argc > 3 || !mkdtemp(root) ||
        mkdir((dir = tnd_xasprintf("%s/ws", root)), 0700) < 0) {
        fprintf(stderr, "usage: skillstart [RUNS >= 1 [own|entered|none|"
                        "cgroup]] (and a writable /tmp)\n");
        return 2;
    }
    memset(&skill, 0, sizeof(skill));
    skill.name = name;
    skill.command.argv = true_argv;
    skill.builtin = builtin;
    skill.timeout_s = 60;
    skill.output_cap = 4096;
    skill.limits.processes = TND_SKILL_LIMIT_PROCESSES;
    /* a skill's default: its workspace watched (skills/diskuse.h) */
    skill.limits.disk_bytes = (size_t)TND_SKILL_LIMIT_DISK_MB << 20;
    memset(&ctx, 0, sizeof(ctx));
    ctx.dir = dir;
    ctx.envp = environ;
    /* the enter program of this build, unless told */
    setenv("TANDEM_SANDBOX_ENTER", "bin/tandem-sandbox-enter", 0);
    holder = tnd_holder_new(roots, environ);
    entered = ctx;
    entered.holder = holder;
    /* started now, and whether there is one at all */
    memset(&probe, 0, sizeof(probe));
    probe.workspace = dir;
    probe.argv = probe_argv;
    held = tnd_holder_argv(holder, &probe, &entry);
    wall = tnd_xcalloc((size_t)runs, sizeof(*wall));
    cpu = tnd_xcalloc((size_t)runs, sizeof(*cpu));
    printf("medians of %d runs each, in turn (ms)\n", runs);
    for (int w = SANDBOXED; w <= CGROUP_ONLY; w++) {
        const tnd_skill_ctx *c = w == ENTERED ? &entered : &ctx;
        if (only >= 0 && w != only)
            continue;
        if (w == ENTERED && !held) {
            printf("%-36s  n/a: no running sandbox (see the log)\n", names[w]);
            continue;
        }
        for (int i = 0; i < 5; i++)
            if (one(w, &skill, c) < 0)
                break;
        for (int i = 0; i < runs; i++) {
            double t0 = bench_now_ms(), c0 = bench_cpu_ms(true);
            if (one(w, &skill, c) < 0) {
                printf("%-36s  n/a: %s\n", names[w], tnd_error_last());
                goto next;
            }
            wall[i] = bench_now_ms() - t0;
            cpu[i] = bench_cpu_ms(true) - c0;
        }
        {
            double sum = 0;
            for (int i = 0; i < runs; i++)
                sum += wall[i];
            printf("%-36s  wall %6.3f (mean %6.3f)  cpu %6.3f\n", names[w],
                   bench_median(wall, (size_t)runs), sum / runs,
                   bench_median(cpu, (size_t)runs));
        }
    next:;
    }
    tnd_str_list_free(&held);
    tnd_holder_destroy(&holder);
    free(wall);
    free(cpu);
    rmdir(dir);
    rmdir(root);
    free(dir);
    return 0;
}
