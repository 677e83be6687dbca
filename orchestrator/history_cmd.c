/* sessions, show, stats, watch (see history_cmd.h). */
#include "orchestrator/history_cmd.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/history.h"
#include "orchestrator/journal.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "orchestrator/views.h"
#include "orchestrator/watch.h"
#include "proto/json.h"

static const char *const commands[] = {"sessions", "show", "stats", "watch",
                                       NULL};

bool tnd_cmd_history_known(const char *cmd)
{
    for (int i = 0; commands[i]; i++)
        if (strcmp(cmd, commands[i]) == 0)
            return true;
    return false;
}

void tnd_cmd_history_usage(const char *cmd, FILE *to)
{
    if (strcmp(cmd, "sessions") == 0)
        fputs("usage: tandem sessions [--repo DIR] [--json]\n"
              "\n"
              "List the sessions of a repository, oldest first, with their\n"
              "state: running, waiting (for a person), approved, rejected,\n"
              "escalated, failed, interrupted (resume it).\n",
              to);
    else if (strcmp(cmd, "show") == 0)
        fputs("usage: tandem show [--repo DIR] ID\n"
              "\n"
              "Show session ID (or a unique prefix): its reflection log (what\n"
              "each attempt did, what the checks and the critique found, what\n"
              "was decided, what people answered) and its final diff, or its\n"
              "last proposal when none was approved.\n",
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
            "\n"
            "A live view of the running sessions of a repository (or of\n"
            "session ID): a line per task with its attempt, what it is doing,\n"
            "the time and the tokens so far. On a terminal the lines update\n"
            "in place; otherwise (or with --plain) each event is a line. It\n"
            "ends when they end (or after --for S seconds).\n",
            to);
    fputs("\n"
          "options:\n"
          "  --repo DIR   the repository (default: .)\n",
          to);
    if (strcmp(cmd, "sessions") == 0 || strcmp(cmd, "stats") == 0)
        fputs("  --json       machine-readable output\n", to);
    if (strcmp(cmd, "watch") == 0)
        fputs("  --plain      one line per event, even on a terminal\n"
              "  --for S      stop watching after S seconds\n",
              to);
    fputs("  -h, --help   show this help\n", to);
}

static int list_sessions(const char *repo, bool json)
{
    tnd_summary *list;
    size_t n;

    tnd_history_list(&list, &n, repo);
    if (json) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            json_object *j = json_object_new_object();
            json_object_object_add(j, "session",
                                   json_object_new_string(list[i].id));
            json_object_object_add(j, "state",
                                   json_object_new_string(list[i].state));
            json_object_object_add(j, "task",
                                   tnd_json_str_or_null(list[i].task));
            json_object_object_add(j, "iterations",
                                   json_object_new_int64(list[i].iterations));
            json_object_object_add(j, "llm_calls",
                                   json_object_new_int64(list[i].llm_calls));
            json_object_object_add(j, "tokens",
                                   json_object_new_int64(list[i].tokens));
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
        printf("%-22s %-11s %5s %6s %9s  %s\n", "SESSION", "STATE", "ITER",
               "CALLS", "TOKENS", "TASK");
        for (size_t i = 0; i < n; i++) {
            char *task =
                tnd_str_printable(list[i].task ? list[i].task : "", 50);
            for (char *p = task; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            printf("%-22s %-11s %5ld %6ld %9ld  %s\n", list[i].id,
                   list[i].state, list[i].iterations, list[i].llm_calls,
                   list[i].tokens, task);
            free(task);
        }
    }
    tnd_history_free(list, n);
    return TND_EXIT_OK;
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
    } else {
        text = tnd_views_reflection(records);
        fputs(text, stdout);
        /* the approved change, or else the last proposal */
        for (size_t i = json_object_array_length(records); i-- > 0 && !diff;) {
            json_object *r = json_object_array_get_idx(records, i), *d;
            if (strcmp(tnd_journal_type(r), "decision") == 0 &&
                json_object_object_get_ex(r, "diff", &d) &&
                json_object_is_type(d, json_type_string)) {
                char *file = tnd_fs_join(repo, json_object_get_string(d));
                if (tnd_fs_read(&diff, &len, file, 64 << 20) < 0)
                    diff = NULL;
                free(file);
            }
        }
        if (diff && len)
            printf("\n## The last proposal\n\n```diff\n%s```\n", diff);
    }
    json_object_put(records);
    free(diff);
    free(text);
    free(path);
    tnd_session_destroy(&s);
    return code;
}

static int stats(const char *repo, bool json)
{
    json_object *o = NULL, *ph, *per, *pats;

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
    json_object_object_foreach(json_object_object_get(o, "by_state"), k, v)
    {
        printf("  %-19s %d\n", k, json_object_get_int(v));
    }
    printf("average iterations:   %.2f\n",
           json_object_get_double(
               json_object_object_get(o, "average_iterations")));
    printf("success rate:         %.0f%%\n",
           100 * json_object_get_double(
                     json_object_object_get(o, "success_rate")));
    printf("escalation rate:      %.0f%%\n",
           100 * json_object_get_double(
                     json_object_object_get(o, "escalation_rate")));
    per = json_object_object_get(o, "per_approved");
    printf("per approved task:    %.0f tokens, %.1f LLM calls\n",
           json_object_get_double(json_object_object_get(per, "tokens")),
           json_object_get_double(json_object_object_get(per, "llm_calls")));
    ph = json_object_object_get(o, "phases");
    printf("time per phase:       coding %.1fs, auditing %.1fs, waiting for "
           "a person %.1fs\n",
           json_object_get_double(json_object_object_get(ph, "coding_ms")) /
               1000,
           json_object_get_double(json_object_object_get(ph, "auditing_ms")) /
               1000,
           json_object_get_double(json_object_object_get(ph, "waiting_ms")) /
               1000);
    pats = json_object_object_get(o, "failure_patterns");
    printf("most common failures:%s\n",
           json_object_array_length(pats) ? "" : " none");
    for (size_t i = 0; i < json_object_array_length(pats); i++) {
        json_object *p = json_object_array_get_idx(pats, i);
        printf("  %3d x in %d session%s  %.70s\n",
               json_object_get_int(json_object_object_get(p, "occurrences")),
               json_object_get_int(json_object_object_get(p, "sessions")),
               json_object_get_int(json_object_object_get(p, "sessions")) == 1
                   ? ""
                   : "s",
               json_object_get_string(json_object_object_get(p, "reason")));
    }
    json_object_put(o);
    return TND_EXIT_OK;
}

int tnd_cmd_history(const char *cmd, int argc, char **argv)
{
    enum { O_REPO = 256, O_JSON, O_PLAIN, O_FOR };
    static const struct option longs[] = {
        {"repo", required_argument, NULL, O_REPO},
        {"json", no_argument, NULL, O_JSON},
        {"plain", no_argument, NULL, O_PLAIN},
        {"for", required_argument, NULL, O_FOR},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *repo_arg = ".";
    bool json = false, plain = false;
    long for_s = 0;
    char *repo, *end;
    int c, code;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case O_REPO:
            repo_arg = optarg;
            break;
        case O_JSON:
            json = true;
            break;
        case O_PLAIN:
            plain = true;
            break;
        case O_FOR:
            for_s = strtol(optarg, &end, 10);
            if (!*optarg || *end || for_s < 1) {
                fprintf(stderr,
                        "tandem %s: --for must be a number of "
                        "seconds\n",
                        cmd);
                return TND_EXIT_USAGE;
            }
            break;
        case 'h':
            tnd_cmd_history_usage(cmd, stdout);
            return TND_EXIT_OK;
        default:
            fprintf(stderr,
                    "tandem %s: unknown option '%s'\ntry 'tandem %s "
                    "--help'\n",
                    cmd, argv[optind - 1], cmd);
            return TND_EXIT_USAGE;
        }
    }
    if (strcmp(cmd, "show") == 0    ? optind != argc - 1
        : strcmp(cmd, "watch") == 0 ? optind < argc - 1
                                    : optind != argc) {
        fprintf(stderr,
                "tandem %s: unexpected arguments\ntry 'tandem %s "
                "--help'\n",
                cmd, cmd);
        return TND_EXIT_USAGE;
    }
    if (strcmp(cmd, "watch") == 0) {
        tnd_watch_options w = {repo_arg, optind < argc ? argv[optind] : NULL,
                               plain, for_s * 1000};
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
