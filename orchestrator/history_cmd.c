/* sessions, show, stats, watch (see history_cmd.h). */
#include "orchestrator/history_cmd.h"

#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/duration.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/history.h"
#include "orchestrator/journal.h"
#include "orchestrator/prune.h"
#include "orchestrator/rundir.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "orchestrator/views.h"
#include "orchestrator/watch.h"
#include "proto/json.h"

/* The task column of a session that never started. */
#define UNSTARTED_TASK "(killed before its task was recorded)"

/* tandem watch --for: seconds at most (a week) */
#define FOR_MAX_S (7 * 24 * 3600)

void tnd_cmd_history_usage(const char *cmd, FILE *to)
{
    if (strcmp(cmd, "sessions") == 0)
        fputs("usage: tandem sessions [--repo DIR] [--json]\n"
              "       tandem sessions prune [--repo DIR] [--older-than D] "
              "[--waiting]\n"
              "                             [--dry-run]\n"
              "\n"
              "List the sessions of a repository, oldest first, with their\n"
              "state: running, queued (by tandem serve, for a free slot),\n"
              "waiting (for a person), approved, rejected, escalated,\n"
              "failed, interrupted (resume it), unstarted (a run or server\n"
              "killed before it recorded the task: nothing ran, nothing to\n"
              "resume; prune removes it), unreadable.\n"
              "\n"
              "'prune' removes the sessions that have ended and are older\n"
              "than D (default 30d); see 'tandem sessions prune --help'.\n",
              to);
    else if (strcmp(cmd, "show") == 0)
        fputs("usage: tandem show [--repo DIR] ID\n"
              "\n"
              "Show session ID (or any part of it that no other session's id\n"
              "has): its reflection log (what each attempt did, what the\n"
              "checks and the critique found, what was decided, what people\n"
              "answered) and its final diff, or its last proposal when none\n"
              "was approved.\n",
              to);
    else if (strcmp(cmd, "stats") == 0)
        fputs(
            "usage: tandem stats [--repo DIR] [--json]\n"
            "\n"
            "Figures across the sessions of a repository: how many, by\n"
            "state, average iterations, success and escalation rates, tokens\n"
            "and LLM calls per approved task, time per phase, and the most\n"
            "common failure patterns.\n",
            to);
    else
        fputs(
            "usage: tandem watch [--repo DIR] [--plain] [--for S] [ID]\n"
            "       tandem watch --server [--plain] [--for S]\n"
            "\n"
            "A live view of the running sessions of a repository (or of\n"
            "session ID): a line per task with its attempt, what it is doing\n"
            "(\"reviewer: test running (6.1 s)\"), the time and the tokens so\n"
            "far. On a terminal the lines update in place, cut to its width;\n"
            "otherwise (or with --plain) each event is a line. It ends when\n"
            "they end. With no session running it ends at once, unless --for\n"
            "S: then it waits up to S seconds for one to start, and stops\n"
            "after S seconds in any case. With --server, the sessions the\n"
            "running tandem serve runs, whatever their repository.\n",
            to);
    fputs("\n"
          "options:\n"
          "  --repo DIR   the repository (default: .)\n",
          to);
    if (strcmp(cmd, "sessions") == 0 || strcmp(cmd, "stats") == 0)
        fputs("  --json       machine-readable output\n", to);
    if (strcmp(cmd, "watch") == 0)
        fputs(
            "  --plain      one line per event, even on a terminal\n"
            "  --for S      wait up to S seconds for a session; stop after S\n"
            "               seconds\n"
            "  --server     every session your tandem serve runs\n",
            to);
    fputs("  -h, --help   show this help\n", to);
}

static void prune_usage(const char *cmd, FILE *to)
{
    (void)cmd;
    fputs("usage: tandem sessions prune [--repo DIR] [--older-than D] "
          "[--waiting]\n"
          "                             [--dry-run]\n"
          "\n"
          "Remove the sessions of a repository that have ended (approved,\n"
          "rejected, escalated, failed, interrupted, unstarted, or\n"
          "unreadable) and are older than D; a session's age is the time\n"
          "since its last journal record (or, with none, since its\n"
          "directory changed). A running or queued session is never\n"
          "removed, and one waiting for a person only with --waiting. A\n"
          "workspace a run kept (--keep-workspace) goes with its session;\n"
          "the lessons bank stays. Prints each session removed (id, state,\n"
          "age, size on disk) and the total. The runtime directories of\n"
          "killed runs ($TMPDIR/tandem-UID/) are removed too.\n"
          "\n"
          "options:\n"
          "  --repo DIR       the repository (default: .)\n"
          "  --older-than D   the age from which an ended session goes: a\n"
          "                   whole number and a unit (s, m, h, d, w), e.g.\n"
          "                   30d, 12h, 1d12h (default: 30d)\n"
          "  --waiting        remove old sessions waiting for a person too\n"
          "  --dry-run        say what would be removed; remove nothing\n"
          "  -h, --help       show this help\n"
          "\n"
          "exit status: 0 done (also when nothing was old enough), 1 a\n"
          "session could not be removed, 2 usage error\n",
          to);
}

/* "512 B", "56.0 KiB", "1.3 MiB", "2.0 GiB". */
static void size_text(char *out, size_t size, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;

    if (bytes < 1024) {
        snprintf(out, size, "%llu B", (unsigned long long)bytes);
        return;
    }
    v /= 1024;
    while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024;
        u++;
    }
    snprintf(out, size, "%.1f %s", v, units[u]);
}

/* "; kept 3: 1 running, 1 waiting for a person (...), 1 newer" */
static void print_kept(const size_t kept[TND_PRUNE_NEWER + 1])
{
    static const char *const what[TND_PRUNE_NEWER + 1] = {
        [TND_PRUNE_RUNNING] = "running",
        [TND_PRUNE_QUEUED] = "queued in a server",
        [TND_PRUNE_WAITING] =
            "waiting for a person (--waiting removes those too)",
        [TND_PRUNE_NEWER] = "newer"};
    size_t total = 0;
    const char *sep = ":";

    for (int v = TND_PRUNE_RUNNING; v <= TND_PRUNE_NEWER; v++)
        total += kept[v];
    if (!total)
        return;
    printf("; kept %zu", total);
    for (int v = TND_PRUNE_RUNNING; v <= TND_PRUNE_NEWER; v++)
        if (kept[v]) {
            printf("%s %zu %s", sep, kept[v], what[v]);
            sep = ",";
        }
}

static int prune(int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_REPO, TND_OPT_OLDER_THAN,
                                  TND_OPT_WAITING, TND_OPT_DRY_RUN, 0};
    const char *repo_arg = ".", *older = "30d";
    const char *verb;
    tnd_prune_options o;
    tnd_prune_result res;
    tnd_rundir_sweep swept;
    size_t removed = 0, failed = 0, kept[TND_PRUNE_NEWER + 1] = {0};
    uint64_t bytes = 0;
    char *base, age[32], size[32];
    tnd_cli cli;
    int c, rc;

    memset(&o, 0, sizeof(o));
    tnd_cli_start(&cli, "sessions prune", prune_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            repo_arg = optarg;
        else if (c == TND_OPT_OLDER_THAN)
            older = optarg;
        else if (c == TND_OPT_WAITING)
            o.waiting = true;
        else /* TND_OPT_DRY_RUN */
            o.dry_run = true;
    }
    if (c < 0)
        return cli.status;
    if (optind < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'", argv[optind]);
    if (tnd_duration_parse(&o.older_than_ms, older) < 0) {
        fprintf(stderr,
                "tandem sessions prune: --older-than: %s; give a duration "
                "such as 30d, 12h or 45m\n",
                tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if (!(o.repo = tnd_fs_realpath(repo_arg))) {
        fprintf(stderr, "tandem sessions prune: --repo: %s\n",
                tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if (tnd_session_check_home(o.repo) < 0) {
        fprintf(stderr, "tandem sessions prune: %s\n", tnd_error_last());
        free((char *)o.repo);
        return TND_EXIT_FAILED;
    }
    o.now_ms = tnd_wall_ms();
    verb = o.dry_run ? "would remove" : "removed";
    rc = tnd_prune(&res, &o);
    for (size_t i = 0; i < res.count; i++) {
        const tnd_prune_item *it = &res.items[i];
        char *id;
        if (it->verdict != TND_PRUNE_REMOVE) {
            kept[it->verdict]++;
            continue;
        }
        if (it->error) {
            fprintf(stderr, "tandem sessions prune: %s\n", it->error);
            failed++;
            continue;
        }
        tnd_duration_format(age, sizeof(age), it->age_ms);
        size_text(size, sizeof(size), it->bytes);
        id = tnd_str_one_line(it->id, 64); /* a directory's name */
        printf("%s %s  %-11s %5s %10s%s\n", verb, id,
               tnd_session_status_name(it->state), age, size,
               it->workspace ? "  and its kept workspace" : "");
        free(id);
        removed++;
        bytes += it->bytes;
    }
    size_text(size, sizeof(size), bytes);
    printf("%s %zu session%s older than %s (%s)", verb, removed,
           removed == 1 ? "" : "s", older, size);
    print_kept(kept);
    if (failed)
        printf("; %zu could not be removed (said above)", failed);
    putchar('\n');
    if (res.more)
        printf("only the oldest %d sessions were looked at; run it again for "
               "the rest\n",
               TND_PRUNE_MAX_SESSIONS);
    /* and what killed runs left in $TMPDIR, whatever their repository */
    if ((base = tnd_rundir_base()) != NULL) {
        tnd_rundir_sweep_dead(&swept, base, TND_RUNDIR_SWEEP_ENTRIES,
                              TND_RUNDIR_SWEEP_ENTRIES, o.dry_run);
        if (swept.removed)
            printf("%s %zu runtime director%s left in %s by runs that are "
                   "gone\n",
                   verb, swept.removed, swept.removed == 1 ? "y" : "ies", base);
        if (swept.failed)
            rc = -1;
        free(base);
    } else {
        fprintf(stderr,
                "tandem sessions prune: cannot look for runtime directories "
                "left by killed runs: %s\n",
                tnd_error_last());
    }
    if (o.dry_run)
        printf("nothing was removed (--dry-run)\n");
    tnd_prune_result_clear(&res);
    free((char *)o.repo);
    return rc < 0 ? TND_EXIT_FAILED : TND_EXIT_OK;
}

static int list_sessions(const char *repo, bool json)
{
    tnd_summary *list;
    size_t n;

    if (tnd_session_check_home(repo) < 0) {
        fprintf(stderr, "tandem sessions: %s\n", tnd_error_last());
        return TND_EXIT_FAILED;
    }
    tnd_history_list(&list, &n, repo);
    if (json) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            json_object *j = json_object_new_object();
            json_object_object_add(j, "session",
                                   json_object_new_string(list[i].id));
            json_object_object_add(
                j, "state",
                json_object_new_string(tnd_session_status_name(list[i].state)));
            json_object_object_add(j, "task",
                                   tnd_json_str_or_null(list[i].task));
            json_object_object_add(j, "iterations",
                                   json_object_new_int64(list[i].iterations));
            /* null: unknown (no report.json), never a false 0 */
            json_object_object_add(
                j, "llm_calls",
                list[i].llm_calls < 0
                    ? NULL
                    : json_object_new_int64(list[i].llm_calls));
            json_object_object_add(j, "tokens",
                                   list[i].tokens < 0
                                       ? NULL
                                       : json_object_new_int64(list[i].tokens));
            json_object_object_add(j, "elapsed_ms",
                                   json_object_new_int64(list[i].elapsed_ms));
            json_object_array_add(arr, j);
        }
        fputs(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
                                                      JSON_C_TO_STRING_SPACED),
              stdout);
        fputc('\n', stdout);
        json_object_put(arr);
    } else if (n == 0) {
        printf("no sessions in %s\n", repo);
    } else {
        printf("%-26s %-11s %5s %6s %9s  %s\n", "SESSION", "STATE", "ITER",
               "CALLS", "TOKENS", "TASK");
        for (size_t i = 0; i < n; i++) {
            /* nothing else says what an unstarted one is */
            const char *said = list[i].task ? list[i].task
                               : list[i].state == TND_SESSION_UNSTARTED
                                   ? UNSTARTED_TASK
                                   : "";
            char *task = tnd_str_printable(said, 50);
            for (char *p = task; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            char *id = tnd_str_one_line(list[i].id, 64);
            char calls[24] = "?", tokens[24] = "?";
            if (list[i].llm_calls >= 0)
                snprintf(calls, sizeof(calls), "%ld", list[i].llm_calls);
            if (list[i].tokens >= 0)
                snprintf(tokens, sizeof(tokens), "%ld", list[i].tokens);
            printf("%-26s %-11s %5ld %6s %9s  %s\n", id,
                   tnd_session_status_name(list[i].state), list[i].iterations,
                   calls, tokens, task);
            free(id);
            free(task);
        }
    }
    tnd_history_free(list, n);
    return TND_EXIT_OK;
}

/* A session's diff file: attempt-N.diff or final.diff. */
static bool diff_name(const char *name)
{
    size_t n =
        strspn(name + (strncmp(name, "attempt-", 8) ? 0 : 8), "0123456789");

    return strcmp(name, "final.diff") == 0 ||
           (strncmp(name, "attempt-", 8) == 0 && n > 0 &&
            strcmp(name + 8 + n, ".diff") == 0);
}

/* text on stdout with no terminal escape: model-written text and a
 * diff of a repository's files reach a person's terminal here */
static void put_printable(const char *text)
{
    char *clean = tnd_str_printable(text, strlen(text) + 1);

    fputs(clean, stdout);
    free(clean);
}

static int show(const char *repo, const char *prefix)
{
    tnd_session *s = tnd_session_open(repo, prefix);
    json_object *records = NULL;
    char *path, *text = NULL, *diff = NULL;
    size_t len = 0;
    int code = TND_EXIT_OK;

    if (!s) {
        fprintf(stderr, "tandem show: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    path = tnd_session_path(s, "journal.jsonl");
    if (tnd_journal_read(&records, path) < 0) {
        fprintf(stderr, "tandem show: %s\n", tnd_error_last());
        code = TND_EXIT_FAILED;
    } else if (json_object_array_length(records) == 0) {
        /* empty, or its one line torn: it printed nothing, exit 0 */
        fprintf(stderr,
                "tandem show: %s holds no record (empty, or its first line "
                "cut short), so there is nothing to show\n",
                path);
        code = TND_EXIT_FAILED;
    } else {
        text = tnd_views_reflection(records);
        put_printable(text);
        /* the approved change, or else the last proposal */
        for (size_t i = json_object_array_length(records); i-- > 0 && !diff;) {
            json_object *r = json_object_array_get_idx(records, i), *d;
            if (strcmp(tnd_journal_type(r), "decision") == 0 &&
                json_object_object_get_ex(r, "diff", &d) &&
                json_object_is_type(d, json_type_string)) {
                /* a file of this session, by its name only: a journal
                 * naming any other path had it printed (/etc/passwd) */
                const char *name = strrchr(json_object_get_string(d), '/');
                char *file;
                name = name ? name + 1 : json_object_get_string(d);
                if (!diff_name(name))
                    continue;
                file = tnd_session_path(s, name);
                if (tnd_fs_read(&diff, &len, file, 64 << 20) < 0)
                    diff = NULL;
                free(file);
            }
        }
        if (diff && len) {
            tnd_session_status st;
            bool approved = tnd_journal_status(&st, records) == 0 &&
                            st == TND_SESSION_APPROVED;
            printf("\n## %s\n\n```diff\n",
                   approved ? "The approved change"
                            : "The last proposal (not approved)");
            put_printable(diff);
            fputs("```\n", stdout);
        }
    }
    json_object_put(records);
    free(diff);
    free(text);
    free(path);
    tnd_session_destroy(&s);
    return code;
}

/* One line of stats' figures: v times scale in fmt, or unknown when v
 * is null (an average of nothing). */
static void figure(const char *label, json_object *v, double scale,
                   const char *fmt, const char *unknown)
{
    fputs(label, stdout);
    if (v)
        printf(fmt, scale * json_object_get_double(v));
    else
        fputs(unknown, stdout);
    fputc('\n', stdout);
}

/* A phase's average time in seconds, or "unknown" when none was timed,
 * in buf. */
static const char *seconds(json_object *ms, char buf[static 32])
{
    if (!ms)
        return "unknown";
    snprintf(buf, 32, "%.1fs", json_object_get_double(ms) / 1000);
    return buf;
}

static int stats(const char *repo, bool json)
{
    json_object *o = NULL, *ph, *per, *pats;
    char coding[32], auditing[32], waiting[32];

    if (tnd_session_check_home(repo) < 0) {
        fprintf(stderr, "tandem stats: %s\n", tnd_error_last());
        return TND_EXIT_FAILED;
    }
    tnd_history_stats(&o, repo);
    if (json) {
        fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                    JSON_C_TO_STRING_SPACED),
              stdout);
        fputc('\n', stdout);
        json_object_put(o);
        return TND_EXIT_OK;
    }
    printf("sessions:             %d\n",
           json_object_get_int(json_object_object_get(o, "sessions")));
    {
        json_object *rv = json_object_object_get(o, "reviews");
        printf("reviews:              %d (%d approved, %d rejected); the "
               "figures below are the %d runs'\n",
               json_object_get_int(json_object_object_get(rv, "sessions")),
               json_object_get_int(json_object_object_get(rv, "approved")),
               json_object_get_int(json_object_object_get(rv, "rejected")),
               json_object_get_int(json_object_object_get(o, "runs")));
    }
    json_object_object_foreach(json_object_object_get(o, "by_state"), k, v)
    {
        printf("  %-19s %d\n", k, json_object_get_int(v));
    }
    figure("average iterations:   ",
           json_object_object_get(o, "average_iterations"), 1, "%.2f",
           "unknown (no session has a report)");
    figure("success rate:         ", json_object_object_get(o, "success_rate"),
           100, "%.0f%%", "unknown (none has ended)");
    figure(
        "escalation rate:      ", json_object_object_get(o, "escalation_rate"),
        100, "%.0f%%", "unknown (no runs)");
    per = json_object_object_get(o, "per_approved");
    if (json_object_get_int64(json_object_object_get(per, "costed")) > 0)
        printf(
            "per approved task:    %.0f tokens, %.1f LLM calls\n",
            json_object_get_double(json_object_object_get(per, "tokens")),
            json_object_get_double(json_object_object_get(per, "llm_calls")));
    else
        printf("per approved task:    unknown (no approved session's "
               "report.json gives its cost)\n");
    ph = json_object_object_get(o, "phases");
    printf("time per phase:       coding %s, auditing %s, waiting for a "
           "person %s\n",
           seconds(json_object_object_get(ph, "coding_ms"), coding),
           seconds(json_object_object_get(ph, "auditing_ms"), auditing),
           seconds(json_object_object_get(ph, "waiting_ms"), waiting));
    pats = json_object_object_get(o, "failure_patterns");
    printf("most common failures:%s\n",
           json_object_array_length(pats) ? "" : " none");
    for (size_t i = 0; i < json_object_array_length(pats); i++) {
        json_object *p = json_object_array_get_idx(pats, i);
        /* the reason holds the model's words: no terminal escape */
        char *reason = tnd_str_one_line(tnd_json_str_or(p, "reason", ""), 70);
        printf("  %3d x in %d session%s  %s\n",
               json_object_get_int(json_object_object_get(p, "occurrences")),
               json_object_get_int(json_object_object_get(p, "sessions")),
               json_object_get_int(json_object_object_get(p, "sessions")) == 1
                   ? ""
                   : "s",
               reason);
        free(reason);
    }
    json_object_put(o);
    return TND_EXIT_OK;
}

int tnd_cmd_history(const char *cmd, int argc, char **argv)
{
    /* each its own: one list took --json for show and watch, and
     * --plain and --for for sessions, and did nothing with them */
    static const int listing[] = {TND_OPT_REPO, TND_OPT_JSON, 0};
    static const int one[] = {TND_OPT_REPO, 0};
    static const int watching[] = {TND_OPT_REPO, TND_OPT_PLAIN, TND_OPT_FOR,
                                   TND_OPT_SERVER, 0};
    const int *accepts = strcmp(cmd, "show") == 0    ? one
                         : strcmp(cmd, "watch") == 0 ? watching
                                                     : listing;
    const char *repo_arg = ".";
    bool json = false, plain = false, server = false;
    long for_s = 0;
    char *repo, *end;
    tnd_cli cli;
    int c, code;

    if (strcmp(cmd, "sessions") == 0 && argc > 1 &&
        strcmp(argv[1], "prune") == 0)
        return prune(argc - 1, argv + 1);
    tnd_cli_start(&cli, cmd, tnd_cmd_history_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            repo_arg = optarg;
        else if (c == TND_OPT_JSON)
            json = true;
        else if (c == TND_OPT_PLAIN)
            plain = true;
        else if (c == TND_OPT_SERVER)
            server = true;
        else if ((errno = 0, for_s = strtol(optarg, &end, 10)) < 1 || *end ||
                 errno || for_s > FOR_MAX_S)
            /* over a week, or past what a long holds in ms, was taken
             * for no --for at all */
            return tnd_cli_error(&cli,
                                 "--for must be a number of seconds, "
                                 "1..%d, got \"%s\"",
                                 FOR_MAX_S, optarg);
    }
    if (c < 0)
        return cli.status;
    if (strcmp(cmd, "show") == 0    ? optind != argc - 1
        : strcmp(cmd, "watch") == 0 ? optind < argc - 1
                                    : optind != argc) {
        if (strcmp(cmd, "sessions") == 0 && optind < argc &&
            strcmp(argv[optind], "prune") == 0)
            fprintf(stderr, "tandem sessions: put prune first: tandem "
                            "sessions prune [options]\n");
        else
            tnd_cli_error(&cli, "unexpected arguments");
        return TND_EXIT_USAGE;
    }
    if (strcmp(cmd, "watch") == 0) {
        tnd_watch_options w = {repo_arg, optind < argc ? argv[optind] : NULL,
                               plain, for_s * 1000, server};
        if (server && optind < argc)
            return tnd_cli_error(&cli, "--server watches every session the "
                                       "server runs; give no ID");
        return tnd_watch(&w);
    }
    if (!(repo = tnd_fs_realpath(repo_arg))) {
        fprintf(stderr, "tandem %s: --repo: %s\n", cmd, tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if (strcmp(cmd, "sessions") == 0)
        code = list_sessions(repo, json);
    else if (strcmp(cmd, "show") == 0)
        code = show(repo, argv[optind]);
    else
        code = stats(repo, json);
    free(repo);
    return code;
}
