/* Unit tests for proto/curve: key files that only their owner reads,
 * public keys from files or text, roles, and the authorized-keys list
 * with errors that name the file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "proto/curve.h"

static char dir[] = "/tmp/tnd-test-curve-XXXXXX";

static const char *in_dir(const char *name)
{
    static char path[512];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

static void has(const char *part)
{
    if (!strstr(tnd_error_last(), part))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), part);
}

static void generate_write_and_read_back(void **state)
{
    tnd_curve_pair pair, back;
    char pub[TND_CURVE_Z85_LEN + 1];
    struct stat st;

    (void)state;
    assert_int_equal(tnd_curve_generate(&pair), 0);
    assert_true(tnd_curve_is_key(pair.public_key));
    assert_true(tnd_curve_is_key(pair.secret_key));
    assert_int_equal(tnd_curve_write(dir, "agent-1", &pair), 0);
    assert_int_equal(stat(in_dir("agent-1.key"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(in_dir("agent-1.pub"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(tnd_curve_read_pair(&back, in_dir("agent-1.key")), 0);
    assert_string_equal(back.public_key, pair.public_key);
    assert_string_equal(back.secret_key, pair.secret_key);
    /* the public half from either file, or as text */
    assert_int_equal(tnd_curve_read_public(pub, in_dir("agent-1.pub")), 0);
    assert_string_equal(pub, pair.public_key);
    assert_int_equal(tnd_curve_read_public(pub, in_dir("agent-1.key")), 0);
    assert_string_equal(pub, pair.public_key);
    assert_int_equal(tnd_curve_read_public(pub, pair.public_key), 0);
    assert_string_equal(pub, pair.public_key);
    /* the .pub file holds no secret */
    {
        char *text;
        assert_int_equal(tnd_fs_read(&text, NULL, in_dir("agent-1.pub"), 4096),
                         0);
        assert_null(strstr(text, pair.secret_key));
        free(text);
    }
    /* never overwritten */
    assert_int_equal(tnd_curve_write(dir, "agent-1", &pair), -1);
    has("agent-1.pub already exists");
    assert_int_equal(tnd_curve_write(dir, "../x", &pair), -1);
    has("is not a key name");
}

static void a_key_others_can_read_is_refused(void **state)
{
    tnd_curve_pair pair;

    (void)state;
    assert_int_equal(tnd_curve_generate(&pair), 0);
    assert_int_equal(tnd_curve_write(dir, "loose", &pair), 0);
    assert_int_equal(chmod(in_dir("loose.key"), 0644), 0);
    assert_int_equal(tnd_curve_read_pair(&pair, in_dir("loose.key")), -1);
    has("can be read by others (mode 644)");
    has("chmod 600");
    assert_int_equal(tnd_fs_write(in_dir("bad.key"), "public-key = x\n", 15),
                     0);
    chmod(in_dir("bad.key"), 0600);
    assert_int_equal(tnd_curve_read_pair(&pair, in_dir("bad.key")), -1);
    has("is not a tandem key pair");
}

/* --key given the wrong file is told which file to give: a NAME.pub
 * (0644) was told to chmod 600 itself, and then that it was not a key
 * pair; a directory to chmod 600; a pair whose public key is not its
 * secret key's failed every handshake with no word but "no answer". */
static void a_wrong_key_file_says_what_to_give(void **state)
{
    tnd_curve_pair a, b, out;
    char text[256];

    (void)state;
    assert_int_equal(tnd_curve_generate(&a), 0);
    assert_int_equal(tnd_curve_generate(&b), 0);
    assert_int_equal(tnd_curve_write(dir, "wrong", &a), 0);
    assert_int_equal(tnd_curve_read_pair(&out, in_dir("wrong.pub")), -1);
    has("holds a public key only (a NAME.pub)");
    assert_int_equal(tnd_curve_read_pair(&out, dir), -1);
    has("is not a file");
    snprintf(text, sizeof(text), "public-key = %s\nsecret-key = %s\n",
             a.public_key, b.secret_key);
    assert_int_equal(tnd_fs_write(in_dir("mixed.key"), text, strlen(text)), 0);
    chmod(in_dir("mixed.key"), 0600);
    assert_int_equal(tnd_curve_read_pair(&out, in_dir("mixed.key")), -1);
    has("its public-key is not the one of its secret-key");
    assert_int_equal(tnd_curve_read_pair(&out, in_dir("wrong.key")), 0);
}

static void roles_format_and_parse(void **state)
{
    char text[64];

    (void)state;
    assert_int_equal(tnd_curve_roles_parse("coder"), TND_CURVE_CODER);
    assert_int_equal(tnd_curve_roles_parse("reviewer,client"),
                     TND_CURVE_REVIEWER | TND_CURVE_CLIENT);
    assert_int_equal(tnd_curve_roles_parse("coders"), 0);
    has("'coders' is not a role (coder, reviewer, client, person)");
    assert_int_equal(tnd_curve_roles_parse(""), 0);
    assert_int_equal(tnd_curve_roles_parse("client,person"),
                     TND_CURVE_CLIENT | TND_CURVE_PERSON);
    tnd_curve_roles_format(text, sizeof(text),
                           TND_CURVE_CODER | TND_CURVE_CLIENT);
    assert_string_equal(text, "coder,client");
    tnd_curve_roles_format(text, sizeof(text),
                           TND_CURVE_REVIEWER | TND_CURVE_PERSON);
    assert_string_equal(text, "reviewer,person");
}

static void the_list_reads_roles_and_names(void **state)
{
    tnd_curve_pair a, b;
    tnd_curve_list list;
    unsigned char raw[32];
    const char *name;
    char text[512];

    (void)state;
    assert_int_equal(tnd_curve_generate(&a), 0);
    assert_int_equal(tnd_curve_generate(&b), 0);
    snprintf(text, sizeof(text),
             "# who may connect\n"
             "coder,reviewer  %s  build-host\n"
             "\n"
             "client %s # ci\n",
             a.public_key, b.public_key);
    assert_int_equal(tnd_fs_write(in_dir("authorized"), text, strlen(text)), 0);
    assert_int_equal(tnd_curve_list_load(&list, in_dir("authorized")), 0);
    assert_int_equal(list.n, 2);
    zmq_z85_decode(raw, a.public_key);
    assert_int_equal(tnd_curve_list_roles(&list, raw, &name),
                     TND_CURVE_CODER | TND_CURVE_REVIEWER);
    assert_string_equal(name, "build-host");
    zmq_z85_decode(raw, b.public_key);
    assert_int_equal(tnd_curve_list_roles(&list, raw, &name), TND_CURVE_CLIENT);
    assert_string_equal(name, "");
    memset(raw, 7, sizeof(raw));
    assert_int_equal(tnd_curve_list_roles(&list, raw, NULL), 0);
    tnd_curve_list_clear(&list);
}

/* A key on several lines has the roles of all of them: the orchestrator
 * adds its own key for its local agents after the file's lines, and a
 * file that listed that key as a client (to submit with it) had the
 * agents refused for ever, the session waiting for them. */
static void a_key_listed_twice_has_both_lines_roles(void **state)
{
    tnd_curve_list list;
    tnd_curve_pair a;
    unsigned char raw[32];
    const char *name;
    char text[256];

    (void)state;
    assert_int_equal(tnd_curve_generate(&a), 0);
    snprintf(text, sizeof(text), "client %s server\nperson %s\n", a.public_key,
             a.public_key);
    tnd_fs_write(in_dir("twice"), text, strlen(text));
    assert_int_equal(tnd_curve_list_load(&list, in_dir("twice")), 0);
    /* as pool.c adds the orchestrator's own key */
    list.entries = realloc(list.entries, (list.n + 1) * sizeof(*list.entries));
    memset(&list.entries[list.n], 0, sizeof(list.entries[list.n]));
    memcpy(list.entries[list.n].public_key, a.public_key,
           TND_CURVE_Z85_LEN + 1);
    list.entries[list.n++].roles = TND_CURVE_CODER | TND_CURVE_REVIEWER;
    zmq_z85_decode(raw, a.public_key);
    assert_int_equal(tnd_curve_list_roles(&list, raw, &name),
                     TND_CURVE_CLIENT | TND_CURVE_PERSON | TND_CURVE_CODER |
                         TND_CURVE_REVIEWER);
    assert_string_equal(name, "server");
    tnd_curve_list_clear(&list);
}

static void list_errors_name_file_and_line(void **state)
{
    tnd_curve_list list;
    tnd_curve_pair a;
    char text[256];

    (void)state;
    assert_int_equal(tnd_curve_generate(&a), 0);
    snprintf(text, sizeof(text), "coder %s\ncoders %s\n", a.public_key,
             a.public_key);
    tnd_fs_write(in_dir("l1"), text, strlen(text));
    assert_int_equal(tnd_curve_list_load(&list, in_dir("l1")), -1);
    has("l1:2: 'coders' is not a role");
    tnd_fs_write(in_dir("l2"), "coder not-a-key\n", 16);
    assert_int_equal(tnd_curve_list_load(&list, in_dir("l2")), -1);
    has("l2:1: expected ROLES PUBLIC-KEY [NAME]");
    snprintf(text, sizeof(text), "client %s a b\n", a.public_key);
    tnd_fs_write(in_dir("l3"), text, strlen(text));
    assert_int_equal(tnd_curve_list_load(&list, in_dir("l3")), -1);
    has("l3:1: more than ROLES PUBLIC-KEY NAME");
    assert_int_equal(tnd_curve_list_load(&list, in_dir("missing")), -1);
    assert_null(list.entries);
}

/* A list another user could change is refused: a key they add is let in
 * as a coder or a reviewer (it was read from a 0666 file in a 0777
 * directory, and nothing said so). */
static void a_list_others_can_write_is_refused(void **state)
{
    tnd_curve_list list;
    tnd_curve_pair a;
    char text[256], sub[600];

    (void)state;
    assert_int_equal(tnd_curve_generate(&a), 0);
    snprintf(text, sizeof(text), "coder %s\n", a.public_key);
    tnd_fs_write(in_dir("open"), text, strlen(text));
    chmod(in_dir("open"), 0666);
    assert_int_equal(tnd_curve_list_load(&list, in_dir("open")), -1);
    has("can be written by others (mode 666)");
    has("chmod go-w");
    chmod(in_dir("open"), 0644);
    assert_int_equal(tnd_curve_list_load(&list, in_dir("open")), 0);
    tnd_curve_list_clear(&list);

    /* replaced in a directory others can write */
    snprintf(sub, sizeof(sub), "%s", in_dir("shared"));
    assert_int_equal(mkdir(sub, 0700), 0);
    chmod(sub, 0777);
    snprintf(sub, sizeof(sub), "%s/list", in_dir("shared"));
    tnd_fs_write(sub, text, strlen(text));
    chmod(sub, 0644);
    assert_int_equal(tnd_curve_list_load(&list, sub), -1);
    has("which others can write (mode 777)");
    /* nor through a link from a private directory (it checked the
     * directory the link is in) */
    {
        char link[600];
        snprintf(link, sizeof(link), "%s", in_dir("link-to-list"));
        assert_int_equal(symlink(sub, link), 0);
        assert_int_equal(tnd_curve_list_load(&list, link), -1);
        has("which others can write (mode 777)");
    }
    /* unless it is sticky, as /tmp: no one removes another's file */
    chmod(in_dir("shared"), 01777);
    assert_int_equal(tnd_curve_list_load(&list, sub), 0);
    tnd_curve_list_clear(&list);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generate_write_and_read_back),
        cmocka_unit_test(a_key_others_can_read_is_refused),
        cmocka_unit_test(a_wrong_key_file_says_what_to_give),
        cmocka_unit_test(roles_format_and_parse),
        cmocka_unit_test(the_list_reads_roles_and_names),
        cmocka_unit_test(a_key_listed_twice_has_both_lines_roles),
        cmocka_unit_test(list_errors_name_file_and_line),
        cmocka_unit_test(a_list_others_can_write_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
