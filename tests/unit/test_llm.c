/* Unit tests for agents/llm: backend choice, the recorder (--record),
 * retries, and two backends seen through the interface: command (real
 * shell scripts), openai streaming, and each HTTP backend's answer cut
 * at max_tokens (a one-connection HTTP server on 127.0.0.1 in a thread,
 * writing canned bytes piece by piece). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/command.h"
#include "agents/llm.h"
#include "agents/openai.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"

static char tmpdir[] = "/tmp/tnd-test-llm-XXXXXX";

#define SECRET "sk-unit-0123456789abcdefSECRET"

/* ---- helpers ------------------------------------------------------------ */

static char *path_in_tmp(const char *name)
{
    return tnd_xasprintf("%s/%s", tmpdir, name);
}

static void write_file(const char *name, const char *text)
{
    char *path = path_in_tmp(name);

    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(path);
}

static char *read_file(const char *name)
{
    char *path = path_in_tmp(name), *text = NULL;
    size_t len = 0;

    assert_int_equal(tnd_fs_read(&text, &len, path, 64 << 20), 0);
    free(path);
    return text;
}

/* An LLM from the llm mapping of a coder section, e.g. "{provider: ...}".
 * NULL when tnd_llm_new refuses (the error is set). */
static tnd_llm *llm_from_yaml(const char *llm_yaml)
{
    char *yaml =
        tnd_xasprintf("version: 1\nagents:\n  coder:\n    llm: %s\n", llm_yaml);
    tnd_config *cfg = NULL;
    tnd_llm *llm;

    if (tnd_config_parse(&cfg, yaml, strlen(yaml), "test.yaml", tmpdir) != 0)
        fail_msg("config: %s", tnd_error_last());
    llm = tnd_llm_new(&cfg->coder.llm);
    tnd_config_destroy(&cfg);
    free(yaml);
    return llm;
}

/* An LLM running script (a /bin/sh script written to NAME) as the
 * command provider, with more llm keys in extra (", key: v"). */
static tnd_llm *command_llm(const char *name, const char *script,
                            const char *extra)
{
    char *path = path_in_tmp(name);
    char *yaml = tnd_xasprintf("{provider: command, command: [/bin/sh, %s]%s}",
                               path, extra);
    tnd_llm *llm;

    write_file(name, script);
    llm = llm_from_yaml(yaml);
    assert_non_null(llm);
    free(yaml);
    free(path);
    return llm;
}

static const tnd_prompt coder_call = {"be brief", "fix it", "coder",
                                      "t1",       1,        1};

/* ---- backend choice ----------------------------------------------------- */

static void unknown_provider_is_refused(void **state)
{
    tnd_llm_config cfg;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.provider = (tnd_provider)99;
    assert_null(tnd_llm_new(&cfg));
    assert_non_null(strstr(tnd_error_last(), "no backend for LLM provider 99"));
    assert_non_null(strstr(tnd_error_last(), "command"));
}

/* Each provider's own base URL and key variable, unless the config
 * names its own; a row for every provider agents.yaml accepts. */
static void provider_defaults(void **state)
{
    static const struct {
        const char *provider, *base_url, *key_env;
    } cases[] = {
        {"openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
        {"anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"},
        {"ollama", "http://localhost:11434", ""},
        {"replay", "", ""},
        {"command", "", ""},
        {"nope", "", ""},
    };
    tnd_llm_config cfg;
    char *url;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (tnd_provider_parse(&cfg.provider, cases[i].provider) < 0)
            cfg.provider = (tnd_provider)99; /* "nope": no backend */
        cfg.base_url = (char *)"";
        cfg.api_key_env = (char *)"";
        assert_string_equal(tnd_llm_base_url(&cfg), cases[i].base_url);
        assert_string_equal(tnd_llm_key_env(&cfg), cases[i].key_env);
        cfg.base_url = (char *)"http://127.0.0.1:8080/v1/";
        cfg.api_key_env = (char *)"MY_KEY";
        assert_string_equal(tnd_llm_base_url(&cfg),
                            "http://127.0.0.1:8080/v1/");
        assert_string_equal(tnd_llm_key_env(&cfg), "MY_KEY");
    }
    /* a row for every provider the config accepts */
    {
        char *names = tnd_xstrdup(TND_PROVIDERS), *save = NULL;
        for (char *n = strtok_r(names, ", ", &save); n;
             n = strtok_r(NULL, ", ", &save)) {
            bool found = false;
            for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                found = found || strcmp(cases[i].provider, n) == 0;
            assert_true(found);
        }
        free(names);
    }
    /* trailing slashes of the base are dropped, the path's kept */
    cfg.provider = TND_PROVIDER_OPENAI;
    cfg.base_url = (char *)"http://127.0.0.1:8080/v1//";
    url = tnd_llm_url(&cfg, "/chat/completions");
    assert_string_equal(url, "http://127.0.0.1:8080/v1/chat/completions");
    free(url);
    cfg.base_url = (char *)"";
    url = tnd_llm_url(&cfg, "/models");
    assert_string_equal(url, "https://api.openai.com/v1/models");
    free(url);
}

static void configured_headers_are_found_in_any_case(void **state)
{
    char *headers[] = {(char *)"X-Api-Key: k", (char *)"Accept-Encoding: gzip",
                       NULL};

    (void)state;
    assert_true(tnd_llm_header_set(headers, "x-api-key"));
    assert_true(tnd_llm_header_set(headers, "accept-encoding"));
    assert_false(tnd_llm_header_set(headers, "Accept"));
    assert_false(tnd_llm_header_set(headers, "X-Api"));
    assert_false(tnd_llm_header_set(NULL, "Accept"));
}

/* A credential header's token is a secret alone, not only with its
 * scheme: a model echoes "tok-...", not "Bearer tok-..." (the bare token
 * went into every session file and an approved change in clear) */
static void a_credential_headers_token_is_a_secret_alone(void **state)
{
    char *text = tnd_xstrdup("the token tok-HEADERSECRET-0123 is here");

    (void)state;
    tnd_llm_header_guard("Authorization: Bearer tok-HEADERSECRET-0123");
    tnd_llm_header_guard("Accept: text/plain"); /* no credential */
    assert_true(tnd_log_holds_secret(text));
    tnd_log_redact(text);
    assert_null(strstr(text, "HEADERSECRET"));
    free(text);
    text = tnd_xstrdup("Accept: text/plain");
    assert_false(tnd_log_holds_secret(text));
    free(text);
}

static void a_missing_key_is_found_before_a_call(void **state)
{
    char *auth[] = {(char *)"authorization: Bearer k", NULL};
    tnd_llm_config cfg;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.provider = TND_PROVIDER_OPENAI;
    cfg.base_url = (char *)"";
    cfg.api_key_env = (char *)"TND_TEST_LLM_KEY";
    unsetenv("TND_TEST_LLM_KEY");
    assert_string_equal(tnd_llm_key_missing(&cfg), "TND_TEST_LLM_KEY");
    /* the provider's own URL written out, with a slash: the same */
    cfg.base_url = (char *)"https://api.openai.com/v1/";
    assert_string_equal(tnd_llm_key_missing(&cfg), "TND_TEST_LLM_KEY");
    setenv("TND_TEST_LLM_KEY", "", 1); /* empty is not set */
    assert_string_equal(tnd_llm_key_missing(&cfg), "TND_TEST_LLM_KEY");
    setenv("TND_TEST_LLM_KEY", "sk-x", 1);
    assert_null(tnd_llm_key_missing(&cfg));
    unsetenv("TND_TEST_LLM_KEY");
    /* a key in a configured header */
    cfg.headers = auth;
    assert_null(tnd_llm_key_missing(&cfg));
    cfg.headers = NULL;
    /* a server of one's own may need no key */
    cfg.base_url = (char *)"http://127.0.0.1:8080/v1";
    assert_null(tnd_llm_key_missing(&cfg));
    /* providers without a key */
    cfg.base_url = (char *)"";
    cfg.api_key_env = (char *)"";
    cfg.provider = TND_PROVIDER_OLLAMA;
    assert_null(tnd_llm_key_missing(&cfg));
    cfg.provider = TND_PROVIDER_REPLAY;
    assert_null(tnd_llm_key_missing(&cfg));
    /* anthropic's own */
    cfg.provider = TND_PROVIDER_ANTHROPIC;
    unsetenv("ANTHROPIC_API_KEY");
    assert_string_equal(tnd_llm_key_missing(&cfg), "ANTHROPIC_API_KEY");
}

static void estimate_is_about_four_bytes_a_token(void **state)
{
    (void)state;
    assert_int_equal(tnd_llm_estimate_tokens(NULL), 0);
    assert_int_equal(tnd_llm_estimate_tokens(""), 0);
    assert_int_equal(tnd_llm_estimate_tokens("abc"), 1);
    assert_int_equal(tnd_llm_estimate_tokens("abcdefghi"), 3);
}

/* ---- the recorder ------------------------------------------------------- */

static tnd_llm *replay_llm(void)
{
    char *cassette = path_in_tmp("cassette.json");
    char *yaml = tnd_xasprintf("{provider: replay, cassette: %s}", cassette);
    tnd_llm *llm;

    write_file("cassette.json",
               "{\"tandem_cassette\": 1, \"exchanges\": [\n"
               " {\"role\": \"coder\", \"attempt\": 1, \"call\": 1,\n"
               "  \"answer\": \"say \\\"hi\\\"\\nthen " SECRET "\",\n"
               "  \"usage\": {\"prompt_tokens\": 12, \"completion_tokens\": "
               "3}},\n"
               " {\"role\": \"reviewer\", \"attempt\": 2, \"call\": 2,\n"
               "  \"answer\": \"approve\"}]}\n");
    llm = llm_from_yaml(yaml);
    assert_non_null(llm);
    free(yaml);
    free(cassette);
    return llm;
}

static void recorder_appends_one_line_per_answer(void **state)
{
    char *path = path_in_tmp("rec.jsonl"), *text;
    tnd_llm *llm = replay_llm();
    tnd_llm_answer a;
    tnd_prompt reviewer = {"sys", "look", "reviewer", "t1", 2, 2};
    struct stat st;

    (void)state;
    tnd_log_secret(SECRET);
    unlink(path);
    assert_int_equal(tnd_llm_set_record(llm, path), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), 0);
    /* the caller still gets the real text; only the recording is redacted */
    assert_non_null(strstr(a.text, SECRET));
    tnd_llm_answer_clear(&a);
    assert_int_equal(tnd_llm_complete(&a, llm, &reviewer), 0);
    assert_true(a.usage.estimated);
    tnd_llm_answer_clear(&a);
    /* a failed call records nothing */
    reviewer.attempt = 9;
    assert_int_equal(tnd_llm_complete(&a, llm, &reviewer), -1);

    text = read_file("rec.jsonl");
    assert_string_equal(
        text, "{\"role\":\"coder\",\"attempt\":1,\"call\":1,"
              "\"answer\":\"say \\\"hi\\\"\\nthen [redacted]\","
              "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3},"
              "\"estimated\":false}\n"
              "{\"role\":\"reviewer\",\"attempt\":2,\"call\":2,"
              "\"answer\":\"approve\","
              "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":2},"
              "\"estimated\":true}\n");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(text);
    tnd_llm_destroy(&llm);
    assert_null(llm);
    unlink(path);
    free(path);
}

/* An answer cut at max_tokens is recorded as cut, and a cassette's cut
 * answer replays as cut: else a replay takes as whole what the recorded
 * run refused, and goes another way. */
static void a_cut_answer_is_recorded_and_replayed_cut(void **state)
{
    char *cassette = path_in_tmp("cut.json"), *path = path_in_tmp("cut.jsonl");
    char *yaml = tnd_xasprintf("{provider: replay, cassette: %s}", cassette);
    tnd_prompt again = coder_call;
    tnd_llm_answer a;
    tnd_llm *llm;
    char *text;

    (void)state;
    write_file("cut.json",
               "{\"tandem_cassette\": 1, \"exchanges\": [\n"
               " {\"role\": \"coder\", \"attempt\": 1, \"call\": 1,\n"
               "  \"answer\": \"half\", \"truncated\": true},\n"
               " {\"role\": \"coder\", \"attempt\": 1, \"call\": 2,\n"
               "  \"answer\": \"whole\"}]}\n");
    assert_non_null(llm = llm_from_yaml(yaml));
    unlink(path);
    assert_int_equal(tnd_llm_set_record(llm, path), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), 0);
    assert_string_equal(a.text, "half");
    assert_true(a.truncated);
    tnd_llm_answer_clear(&a);
    again.call = 2;
    assert_int_equal(tnd_llm_complete(&a, llm, &again), 0);
    assert_false(a.truncated);
    tnd_llm_answer_clear(&a);
    text = read_file("cut.jsonl");
    assert_non_null(strstr(text, "\"answer\":\"half\",\"usage\":{\"prompt_"
                                 "tokens\":4,\"completion_tokens\":1},"
                                 "\"estimated\":true,\"truncated\":true}\n"));
    assert_non_null(strstr(text, "\"answer\":\"whole\",\"usage\":{\"prompt_"
                                 "tokens\":4,\"completion_tokens\":2},"
                                 "\"estimated\":true}\n"));
    free(text);
    tnd_llm_destroy(&llm);
    unlink(path);
    free(path);
    free(yaml);
    free(cassette);
}

static void two_recorders_share_one_file(void **state)
{
    char *path = path_in_tmp("shared.jsonl"), *text;
    tnd_llm *one = replay_llm(), *two = replay_llm();
    tnd_llm_answer a;
    int lines = 0;

    (void)state;
    unlink(path);
    assert_int_equal(tnd_llm_set_record(one, path), 0);
    assert_int_equal(tnd_llm_set_record(two, path), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tnd_llm_complete(&a, i % 2 ? one : two, &coder_call),
                         0);
        tnd_llm_answer_clear(&a);
    }
    /* NULL stops recording */
    assert_int_equal(tnd_llm_set_record(one, NULL), 0);
    assert_int_equal(tnd_llm_complete(&a, one, &coder_call), 0);
    tnd_llm_answer_clear(&a);
    text = read_file("shared.jsonl");
    for (char *p = text; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 3);
    free(text);
    tnd_llm_destroy(&one);
    tnd_llm_destroy(&two);
    unlink(path);
    free(path);
}

static void recorder_errors(void **state)
{
    tnd_llm *llm = replay_llm();
    tnd_llm_answer a;

    (void)state;
    assert_int_equal(tnd_llm_set_record(llm, "/nonexistent/dir/rec.jsonl"), -1);
    assert_non_null(strstr(tnd_error_last(), "cannot open the recording "
                                             "/nonexistent/dir/rec.jsonl"));
    /* a write that fails is logged; the call still succeeds */
    assert_int_equal(tnd_llm_set_record(llm, "/dev/full"), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), 0);
    assert_non_null(a.text);
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
    tnd_llm_destroy(&llm); /* safe on NULL */
}

/* ---- command provider and retries -------------------------------------- */

static void command_reads_system_separator_user(void **state)
{
    tnd_llm *llm = command_llm("echo.sh", "cat\n", "");
    tnd_llm_answer a;
    tnd_prompt p = coder_call;

    (void)state;
    assert_int_equal(
        strncmp(tnd_llm_describe(llm), "command '/bin/sh /tmp/", 22), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "be brief\n---\nfix it");
    /* no tokens from a program: estimated, and marked so */
    assert_true(a.usage.estimated);
    assert_int_equal(a.usage.prompt_tokens, 2 + 2);
    assert_int_equal(a.usage.calls, 1);
    tnd_llm_answer_clear(&a);
    p.system = "ends in a newline\n";
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "ends in a newline\n---\nfix it");
    tnd_llm_answer_clear(&a);
    p.system = "";
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "---\nfix it");
    tnd_llm_answer_clear(&a);
    p.system = "a\n---\nb";
    assert_int_equal(tnd_llm_complete(&a, llm, &p), -1);
    assert_non_null(strstr(tnd_error_last(), "holds a line '---'"));
    tnd_llm_destroy(&llm);
}

static void on_exchange(const tnd_prompt *prompt, const tnd_llm_answer *answer,
                        const char *error, void *payload)
{
    (void)answer;
    (void)error;
    *(char **)payload = tnd_xstrdup(prompt->user);
}

/* Issue 12: a Latin-1 byte from a source file reached a prompt verbatim,
 * and a JSON API refuses such a request. The program sees valid UTF-8, the
 * transcript too, and an answer's stray bytes are replaced as well. */
static void prompts_and_answers_are_valid_utf8(void **state)
{
    tnd_llm *llm = command_llm("echo8.sh", "cat; printf ' \\377'\n", "");
    tnd_llm_answer a;
    tnd_prompt p = coder_call;
    char *heard = NULL;

    (void)state;
    tnd_llm_set_exchange(llm, on_exchange, &heard);
    p.user = "Jos\xE9 \xC3\xA9";
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "be brief\n---\nJos\xEF\xBF\xBD \xC3\xA9 "
                                "\xEF\xBF\xBD");
    assert_string_equal(heard, "Jos\xEF\xBF\xBD \xC3\xA9");
    free(heard);
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
}

static void command_exit_75_is_retried(void **state)
{
    char *counter = path_in_tmp("count");
    char *script =
        tnd_xasprintf("n=$(cat %s 2>/dev/null || echo 0); echo $((n + 1)) >%s\n"
                      "[ $n -ge 1 ] || { echo busy >&2; exit 75; }\n"
                      "echo fine\n",
                      counter, counter);
    tnd_llm *llm = command_llm("flaky.sh", script, ", max_retries: 2");
    tnd_llm_answer a;

    (void)state;
    unlink(counter);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), 0);
    assert_string_equal(a.text, "fine\n");
    assert_int_equal(a.usage.retries, 1);
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
    unlink(counter);
    free(counter);
    free(script);
}

static void command_gives_up_after_max_retries(void **state)
{
    tnd_llm *llm =
        command_llm("busy.sh", "echo busy >&2; exit 75\n", ", max_retries: 1");
    tnd_llm_answer a;

    (void)state;
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    assert_non_null(strstr(tnd_error_last(), "gave up after 2 attempts"));
    assert_non_null(strstr(tnd_error_last(), "status 75 (EX_TEMPFAIL"));
    assert_null(a.text);
    tnd_llm_destroy(&llm);
}

static void command_failure_quotes_the_end_of_stderr(void **state)
{
    tnd_llm *llm =
        command_llm("fail.sh",
                    "for i in 1 2 3 4 5 6 7 8; do echo \"line $i\" >&2; done\n"
                    "exit 3\n",
                    "");
    tnd_llm_answer a;
    const char *e;

    (void)state;
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    e = tnd_error_last();
    assert_non_null(strstr(e, "fail.sh' exited with status 3; its stderr "
                              "ends: line 4 | line 5 | line 6 | line 7 | "
                              "line 8"));
    assert_null(strstr(e, "line 3"));
    assert_null(strstr(e, "gave up")); /* permanent, not transient */
    tnd_llm_destroy(&llm);
}

/* The quoted end of stderr starts at a cut; a key across it is redacted
 * whole first, so the error keeps no end of it. */
static void command_stderr_never_holds_part_of_a_key(void **state)
{
    tnd_llm *llm;
    tnd_llm_answer a;

    (void)state;
    tnd_log_secret("sk-command-Zq8vN3xT5bL1mR7wK2pH9cF4yD6");
    /* one line: the last 600 bytes start 20 bytes into the key */
    llm = command_llm("key.sh",
                      "printf 'sk-command-Zq8vN3xT5bL1mR7wK2pH9cF4yD6' >&2\n"
                      "head -c 580 /dev/zero | tr '\\0' y >&2\n"
                      "exit 3\n",
                      "");
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    assert_non_null(strstr(tnd_error_last(), "its stderr ends: "));
    assert_non_null(strstr(tnd_error_last(), "yyyy"));
    assert_null(strstr(tnd_error_last(), "9cF4yD6"));
    tnd_llm_destroy(&llm);
}

static void command_bad_answers(void **state)
{
    tnd_llm *llm;
    tnd_llm_answer a;

    (void)state;
    llm = command_llm("empty.sh", "echo ' '; echo why >&2\n", "");
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    assert_non_null(strstr(tnd_error_last(), "printed no answer on stdout; "
                                             "its stderr ends: why"));
    tnd_llm_destroy(&llm);

    llm = command_llm("big.sh", "head -c 4194305 /dev/zero | tr '\\0' a\n", "");
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    /* the same words whether it exited first or was stopped first */
    assert_non_null(strstr(tnd_error_last(),
                           "printed more than 4194304 bytes on stdout, more "
                           "than an answer may be"));
    tnd_llm_destroy(&llm);

    /* one that never stops printing is stopped at the limit, said so
     * (it ran to its timeout, "no answer within" it) */
    llm = command_llm("flood.sh", "exec yes\n", ", timeout_s: 60");
    {
        int64_t start = tnd_now_ms();
        assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
        assert_true(tnd_now_ms() - start < 20000);
    }
    assert_non_null(strstr(tnd_error_last(),
                           "printed more than 4194304 bytes on stdout, more "
                           "than an answer may be, and was stopped"));
    tnd_llm_destroy(&llm);

    llm = command_llm("nul.sh", "printf 'a\\000b'\n", "");
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    assert_non_null(strstr(tnd_error_last(), "binary"));
    tnd_llm_destroy(&llm);

    {
        /* the config refuses this too; the backend does not rely on it */
        tnd_llm_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.provider = TND_PROVIDER_COMMAND;
        assert_null(tnd_llm_new(&cfg));
        assert_non_null(strstr(tnd_error_last(), "needs a command"));
    }
}

static void command_timeout_is_bounded(void **state)
{
    tnd_llm *llm =
        command_llm("slow.sh", "sleep 20\n", ", timeout_s: 1, max_retries: 0");
    tnd_llm_answer a;
    int64_t start = tnd_now_ms();

    (void)state;
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), -1);
    assert_true(tnd_now_ms() - start < 8000);
    assert_non_null(strstr(tnd_error_last(), "gave no answer within 1.0s"));
    tnd_llm_destroy(&llm);
}

static void *cancel_later(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};

    nanosleep(&ts, NULL);
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

static void command_cancel_stops_the_program(void **state)
{
    tnd_llm *llm = command_llm("hang.sh", "sleep 20\n", "");
    tnd_llm_answer a;
    atomic_int cancel = 0;
    pthread_t t;
    int64_t start = tnd_now_ms();

    (void)state;
    tnd_llm_set_cancel(llm, &cancel, -1);
    assert_int_equal(pthread_create(&t, NULL, cancel_later, &cancel), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), TND_ECANCELLED);
    pthread_join(t, NULL);
    assert_true(tnd_now_ms() - start < 8000);
    tnd_llm_destroy(&llm);
}

/* ---- openai streaming against a canned server --------------------------- */

typedef struct server {
    int fd;
    int port;
    pthread_t thread;
    const char *const *pieces; /* the response, written one piece at a time */
    char request[1 << 16];
    size_t request_len;
} server;

static void *serve_one(void *arg)
{
    server *s = arg;
    int c = accept(s->fd, NULL, NULL);
    size_t want = 0;
    struct timespec gap = {0, 3 * 1000 * 1000};
    int one = 1;

    if (c < 0)
        return NULL;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (;;) {
        char *end;
        ssize_t n = read(c, s->request + s->request_len,
                         sizeof(s->request) - 1 - s->request_len);
        if (n <= 0)
            break;
        s->request_len += (size_t)n;
        s->request[s->request_len] = '\0';
        if (!want && (end = strstr(s->request, "\r\n\r\n")) != NULL) {
            const char *cl = strcasestr(s->request, "content-length:");
            want = (size_t)(end + 4 - s->request) +
                   (cl ? strtoul(cl + 15, NULL, 10) : 0);
        }
        if (want && s->request_len >= want)
            break;
    }
    for (const char *const *p = s->pieces; *p; p++) {
        if (write(c, *p, strlen(*p)) < 0)
            break;
        nanosleep(&gap, NULL);
    }
    close(c);
    return NULL;
}

/* Serve one connection with the NULL-terminated pieces (borrowed). */
static void server_start(server *s, const char *const *pieces)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);

    memset(s, 0, sizeof(*s));
    s->pieces = pieces;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(s->fd, 4), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&addr, &len), 0);
    s->port = ntohs(addr.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve_one, s), 0);
}

static void server_stop(server *s)
{
    pthread_join(s->thread, NULL);
    close(s->fd);
}

#define SSE_HEAD                                             \
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" \
    "Connection: close\r\n\r\n"
#define CHUNK(text)                                                          \
    "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0," \
    "\"delta\":{\"content\":\"" text "\"},\"finish_reason\":null}],"         \
    "\"usage\":null}\n\n"

static void on_delta(const char *text, size_t len, void *payload)
{
    tnd_buf_append(payload, text, len);
}

/* One call of a provider's LLM (llm keys in extra) at base (a path on
 * the server) to a server that answers with pieces. heard (may be NULL)
 * gets the streamed text. Returns the call's code; the server's view of
 * the request stays in s. */
static int ask_provider(server *s, const char *const *pieces,
                        const char *provider, const char *base,
                        const char *extra, tnd_llm_answer *out, tnd_buf *heard)
{
    char *yaml;
    tnd_llm *llm;
    int rc;

    server_start(s, pieces);
    yaml = tnd_xasprintf("{provider: %s, model: m, base_url: "
                         "\"http://127.0.0.1:%d%s\", max_retries: 0%s}",
                         provider, s->port, base, extra);
    llm = llm_from_yaml(yaml);
    assert_non_null(llm);
    if (heard)
        tnd_llm_set_delta(llm, on_delta, heard);
    rc = tnd_llm_complete(out, llm, &coder_call);
    server_stop(s);
    tnd_llm_destroy(&llm);
    free(yaml);
    return rc;
}

/* Once the model server (a listening socket: fd) has a connection
 * waiting, the agent stops: its stop pipe (fd[1] of pipe) is written,
 * and the flag is not set (the pipe alone must wake the call). */
typedef struct stopper {
    int listen_fd;
    int pipe[2];
} stopper;

static void *stop_at_connect(void *arg)
{
    stopper *st = arg;
    struct pollfd p = {st->listen_fd, POLLIN, 0};

    if (poll(&p, 1, 30000) == 1) /* a hang guard, not a timing */
        assert_int_equal(write(st->pipe[1], "s", 1), 1);
    return NULL;
}

/* An agent told to stop with a model call out stops at once: the call
 * waits on the agent's stop pipe with the server (libcurl's own loop
 * looked at the cancel flag once a second, and every agent took up to
 * a second more to stop). The server never answers, and the call's
 * timeout is a minute: only the pipe can end it. */
static void a_stop_wakes_a_call_the_server_holds(void **state)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    stopper st;
    pthread_t t;
    atomic_int cancel = 0;
    tnd_llm_answer a;
    tnd_llm *llm;
    char *yaml;

    (void)state;
    st.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(st.listen_fd >= 0);
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(st.listen_fd, (struct sockaddr *)&addr, len), 0);
    assert_int_equal(listen(st.listen_fd, 4), 0); /* never accepted */
    assert_int_equal(getsockname(st.listen_fd, (struct sockaddr *)&addr, &len),
                     0);
    assert_int_equal(pipe(st.pipe), 0);
    yaml = tnd_xasprintf("{provider: openai, model: m, base_url: "
                         "\"http://127.0.0.1:%d/v1\", max_retries: 0, "
                         "timeout_s: 60}",
                         ntohs(addr.sin_port));
    assert_non_null(llm = llm_from_yaml(yaml));
    tnd_llm_set_cancel(llm, &cancel, st.pipe[0]);
    assert_int_equal(pthread_create(&t, NULL, stop_at_connect, &st), 0);
    assert_int_equal(tnd_llm_complete(&a, llm, &coder_call), TND_ECANCELLED);
    assert_non_null(strstr(tnd_error_last(), "cancelled"));
    pthread_join(t, NULL);
    tnd_llm_destroy(&llm);
    free(yaml);
    close(st.pipe[0]);
    close(st.pipe[1]);
    close(st.listen_fd);
}

/* ask_provider for openai at /v1. */
static int ask(server *s, const char *const *pieces, const char *extra,
               tnd_llm_answer *out, tnd_buf *heard)
{
    return ask_provider(s, pieces, "openai", "/v1", extra, out, heard);
}

static void stream_is_read_piece_by_piece(void **state)
{
    /* lines cut anywhere, CRLF endings split across writes, comments */
    const char *pieces[] = {
        SSE_HEAD,
        ": keep-alive\r\n\r",
        "\n" CHUNK("Hel"),
        CHUNK("lo, \\\"wor"),
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\""
        ":0,\"del",
        "ta\":{\"content\":\"ld\\\"\\n\"},\"finish_reason\":\"stop\"}]}\r\n",
        "\r\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":41,"
        "\"completion_tokens\":7,\"total_tokens\":48}}\n\n",
        "data: [DO",
        "NE]\n\n",
        NULL,
    };
    server s;
    tnd_llm_answer a;
    tnd_buf heard;

    (void)state;
    setenv("OPENAI_API_KEY", SECRET, 1);
    tnd_buf_init(&heard, TND_BUF_NOCAP);
    assert_int_equal(ask(&s, pieces, ", headers: {X-Unit: yes}", &a, &heard),
                     0);
    assert_string_equal(a.text, "Hello, \"world\"\n");
    assert_string_equal(tnd_buf_str(&heard), a.text);
    assert_int_equal(a.usage.prompt_tokens, 41);
    assert_int_equal(a.usage.completion_tokens, 7);
    assert_false(a.usage.estimated);
    assert_non_null(strstr(s.request, "\"stream\":true"));
    assert_non_null(strstr(s.request, "\"stream_options\":{\"include_usage\":"
                                      "true}"));
    assert_non_null(strstr(s.request, "Authorization: Bearer " SECRET));
    assert_non_null(strstr(s.request, "X-Unit: yes"));
    assert_non_null(strstr(s.request, "Accept: text/event-stream"));
    tnd_llm_answer_clear(&a);
    tnd_buf_free(&heard);
    unsetenv("OPENAI_API_KEY");
}

static void stream_without_done_is_truncated(void **state)
{
    const char *pieces[] = {SSE_HEAD, CHUNK("half an ans"), NULL};
    server s;
    tnd_llm_answer a;
    char *want;

    (void)state;
    assert_int_equal(ask(&s, pieces, "", &a, NULL), -1);
    want = tnd_xasprintf("gave up after 1 attempt: the stream from "
                         "http://127.0.0.1:%d/v1/chat/completions ended "
                         "before [DONE] after %zu bytes",
                         s.port, strlen(pieces[1]));
    assert_string_equal(tnd_error_last(), want);
    free(want);
    /* an empty body is a stream that never started */
    pieces[1] = NULL;
    assert_int_equal(ask(&s, pieces, "", &a, NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "before [DONE] after 0 bytes"));
}

static void stream_error_event_is_an_error(void **state)
{
    const char *pieces[] = {
        SSE_HEAD, CHUNK("x"),
        "data: {\"error\":{\"message\":\"no such model " SECRET
        "\",\"type\":\"invalid_request_error\"}}\n\n",
        NULL};
    server s;
    tnd_llm_answer a;
    const char *e;

    (void)state;
    tnd_log_secret(SECRET);
    assert_int_equal(ask(&s, pieces, "", &a, NULL), -1);
    e = tnd_error_last();
    assert_non_null(strstr(e, "sent an error in the stream after"));
    assert_non_null(strstr(e, "no such model [redacted]"));
    assert_null(strstr(e, "gave up")); /* permanent, not transient */
}

static void plain_body_and_error_status_while_streaming(void **state)
{
    const char *plain[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Connection: close\r\n\r\n",
        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":"
        "\"whole\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}",
        NULL};
    const char *denied[] = {
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
        "Connection: close\r\n\r\n",
        "{\"error\":{\"message\":\"not for you\"}}\n\n", NULL};
    server s;
    tnd_llm_answer a;
    tnd_buf heard;

    (void)state;
    /* a server that ignores "stream": one JSON body, still understood */
    tnd_buf_init(&heard, TND_BUF_NOCAP);
    assert_int_equal(ask(&s, plain, "", &a, &heard), 0);
    assert_string_equal(a.text, "whole");
    assert_string_equal(tnd_buf_str(&heard), "whole");
    assert_int_equal(a.usage.prompt_tokens, 5);
    tnd_llm_answer_clear(&a);
    tnd_buf_free(&heard);

    assert_int_equal(ask(&s, denied, "", &a, NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "403 from http://127.0.0.1"));
    assert_non_null(strstr(tnd_error_last(), "not for you; check the key"));
}

static void stream_answer_is_capped(void **state)
{
    size_t n = TND_OPENAI_MAX_ANSWER / 2 + 1;
    char *text = tnd_xmalloc(n + 1), *event;
    const char *pieces[5] = {SSE_HEAD, NULL, NULL, "data: [DONE]\n\n", NULL};
    server s;
    tnd_llm_answer a;

    (void)state;
    memset(text, 'a', n);
    text[n] = '\0';
    event = tnd_xasprintf("data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}"
                          "}]}\n\n",
                          text);
    pieces[1] = pieces[2] = event; /* together just over the cap */
    assert_int_equal(ask(&s, pieces, "", &a, NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "is longer than 4194304 bytes; "
                                             "lower llm.max_tokens"));
    free(event);
    free(text);
}

/* ---- answers cut at max_tokens ----------------------------------------- */

#define JSON_HEAD                                           \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
    "Connection: close\r\n\r\n"

/* One call to provider (at base, with extra llm keys) answered with
 * pieces: 0, the text "half", and whether the answer came back marked
 * as cut at max_tokens. */
static bool cut_answer(const char *provider, const char *base,
                       const char *extra, const char *const *pieces)
{
    server s;
    tnd_llm_answer a;
    bool cut;

    assert_int_equal(ask_provider(&s, pieces, provider, base, extra, &a, NULL),
                     0);
    assert_string_equal(a.text, "half");
    cut = a.truncated;
    tnd_llm_answer_clear(&a);
    return cut;
}

#define OPENAI_BODY(finish)                                            \
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","  \
    "\"content\":\"half\"},\"finish_reason\":" finish "}],\"usage\":{" \
    "\"prompt_tokens\":5,\"completion_tokens\":9}}"
#define OPENAI_LAST(finish)                                                   \
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":" finish \
    "}]}\n\n"

/* OpenAI says "length" in finish_reason: in the one body, and in the
 * stream's last chunk (before the usage chunk and [DONE]). */
static void openai_length_is_a_cut_answer(void **state)
{
    const char *plain[] = {JSON_HEAD, OPENAI_BODY("\"length\""), NULL};
    const char *whole[] = {JSON_HEAD, OPENAI_BODY("\"stop\""), NULL};
    const char *nulled[] = {JSON_HEAD, OPENAI_BODY("null"), NULL};
    const char *stream[] = {SSE_HEAD,
                            CHUNK("half"),
                            OPENAI_LAST("\"length\""),
                            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\""
                            ":5,\"completion_tokens\":9}}\n\n",
                            "data: [DONE]\n\n",
                            NULL};
    const char *done[] = {SSE_HEAD, CHUNK("half"), OPENAI_LAST("\"stop\""),
                          "data: [DONE]\n\n", NULL};

    (void)state;
    assert_true(cut_answer("openai", "/v1", ", stream: false", plain));
    assert_false(cut_answer("openai", "/v1", ", stream: false", whole));
    assert_false(cut_answer("openai", "/v1", ", stream: false", nulled));
    assert_true(cut_answer("openai", "/v1", "", stream));
    assert_false(cut_answer("openai", "/v1", "", done));
    /* a server that ignores "stream" and sends one body */
    assert_true(cut_answer("openai", "/v1", "", plain));
}

#define ANTHROPIC_BODY(stop)                                                 \
    "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":"        \
    "\"half\"}],\"stop_reason\":\"" stop "\",\"usage\":{\"input_tokens\":5," \
    "\"output_tokens\":9}}"
#define ANTHROPIC_EVENTS(stop)                                               \
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{"  \
    "\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"               \
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","   \
    "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n" \
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{"    \
    "\"stop_reason\":\"" stop "\"},\"usage\":{\"output_tokens\":9}}\n\n"     \
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

/* Anthropic says "max_tokens" in stop_reason: the message's, or the
 * message_delta event's. */
static void anthropic_max_tokens_is_a_cut_answer(void **state)
{
    const char *plain[] = {JSON_HEAD, ANTHROPIC_BODY("max_tokens"), NULL};
    const char *whole[] = {JSON_HEAD, ANTHROPIC_BODY("end_turn"), NULL};
    const char *stream[] = {SSE_HEAD, ANTHROPIC_EVENTS("max_tokens"), NULL};
    const char *done[] = {SSE_HEAD, ANTHROPIC_EVENTS("end_turn"), NULL};

    (void)state;
    assert_true(cut_answer("anthropic", "", ", stream: false", plain));
    assert_false(cut_answer("anthropic", "", ", stream: false", whole));
    assert_true(cut_answer("anthropic", "", "", stream));
    assert_false(cut_answer("anthropic", "", "", done));
}

#define OLLAMA_LAST(reason)                                                 \
    "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true," \
    "\"done_reason\":\"" reason "\",\"prompt_eval_count\":5,"               \
    "\"eval_count\":9}\n"
#define OLLAMA_PIECE                                              \
    "{\"message\":{\"role\":\"assistant\",\"content\":\"half\"}," \
    "\"done\":false}\n"
#define OLLAMA_BODY(reason)                                       \
    "{\"message\":{\"role\":\"assistant\",\"content\":\"half\"}," \
    "\"done\":true,\"done_reason\":\"" reason "\"}"

/* Ollama says "length" in done_reason: the answer's, or the stream's
 * last object's. */
static void ollama_length_is_a_cut_answer(void **state)
{
    const char *plain[] = {JSON_HEAD, OLLAMA_BODY("length"), NULL};
    const char *whole[] = {JSON_HEAD, OLLAMA_BODY("stop"), NULL};
    const char *stream[] = {JSON_HEAD, OLLAMA_PIECE, OLLAMA_LAST("length"),
                            NULL};
    const char *done[] = {JSON_HEAD, OLLAMA_PIECE, OLLAMA_LAST("stop"), NULL};

    (void)state;
    assert_true(cut_answer("ollama", "", ", stream: false", plain));
    assert_false(cut_answer("ollama", "", ", stream: false", whole));
    assert_true(cut_answer("ollama", "", "", stream));
    assert_false(cut_answer("ollama", "", "", done));
}

/* The server's message in an error object is cut at 300 bytes; a key
 * it echoes across the cut is redacted whole first, so the error keeps
 * no head of it (anthropic's error object, ollama's error string). */
static void an_error_message_never_holds_part_of_a_key(void **state)
{
    char *anthropic = tnd_xasprintf(
        "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
        "\"message\":\"%0290d sk-errors-Zq8vN3xT5bL1mR7wK2pH9cF4yD6\"}}",
        0);
    char *ollama = tnd_xasprintf(
        "{\"error\":\"%0290d sk-errors-Zq8vN3xT5bL1mR7wK2pH9cF4yD6\"}", 0);
    const char *a_pieces[] = {JSON_HEAD, anthropic, NULL};
    const char *o_pieces[] = {JSON_HEAD, ollama, NULL};
    server s;
    tnd_llm_answer a;

    (void)state;
    tnd_log_secret("sk-errors-Zq8vN3xT5bL1mR7wK2pH9cF4yD6");
    assert_int_equal(ask_provider(&s, a_pieces, "anthropic", "",
                                  ", stream: false", &a, NULL),
                     -1);
    assert_non_null(strstr(tnd_error_last(), "0000 [redact"));
    assert_null(strstr(tnd_error_last(), "sk-errors"));
    assert_int_equal(
        ask_provider(&s, o_pieces, "ollama", "", ", stream: false", &a, NULL),
        -1);
    assert_non_null(strstr(tnd_error_last(), "0000 [redact"));
    assert_null(strstr(tnd_error_last(), "sk-errors"));
    free(anthropic);
    free(ollama);
}

static int setup(void **state)
{
    (void)state;
    tnd_log_init("test", TND_LOG_ERROR);
    unsetenv("OPENAI_API_KEY");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char *cmd = tnd_xasprintf("rm -rf %s", tmpdir);
    int rc = system(cmd);

    (void)state;
    free(cmd);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_provider_is_refused),
        cmocka_unit_test(provider_defaults),
        cmocka_unit_test(configured_headers_are_found_in_any_case),
        cmocka_unit_test(a_credential_headers_token_is_a_secret_alone),
        cmocka_unit_test(a_missing_key_is_found_before_a_call),
        cmocka_unit_test(estimate_is_about_four_bytes_a_token),
        cmocka_unit_test(recorder_appends_one_line_per_answer),
        cmocka_unit_test(a_cut_answer_is_recorded_and_replayed_cut),
        cmocka_unit_test(two_recorders_share_one_file),
        cmocka_unit_test(recorder_errors),
        cmocka_unit_test(command_reads_system_separator_user),
        cmocka_unit_test(prompts_and_answers_are_valid_utf8),
        cmocka_unit_test(command_exit_75_is_retried),
        cmocka_unit_test(command_gives_up_after_max_retries),
        cmocka_unit_test(command_failure_quotes_the_end_of_stderr),
        cmocka_unit_test(command_stderr_never_holds_part_of_a_key),
        cmocka_unit_test(command_bad_answers),
        cmocka_unit_test(command_timeout_is_bounded),
        cmocka_unit_test(command_cancel_stops_the_program),
        cmocka_unit_test(a_stop_wakes_a_call_the_server_holds),
        cmocka_unit_test(stream_is_read_piece_by_piece),
        cmocka_unit_test(stream_without_done_is_truncated),
        cmocka_unit_test(stream_error_event_is_an_error),
        cmocka_unit_test(plain_body_and_error_status_while_streaming),
        cmocka_unit_test(stream_answer_is_capped),
        cmocka_unit_test(openai_length_is_a_cut_answer),
        cmocka_unit_test(anthropic_max_tokens_is_a_cut_answer),
        cmocka_unit_test(ollama_length_is_a_cut_answer),
        cmocka_unit_test(an_error_message_never_holds_part_of_a_key),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
