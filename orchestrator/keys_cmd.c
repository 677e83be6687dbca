/* `tandem keys generate` (see keys_cmd.h). */
#include "orchestrator/keys_cmd.h"

#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "orchestrator/cli.h"
#include "orchestrator/run.h"
#include "proto/curve.h"

void tnd_keys_cmd_usage(const char *name, FILE *to)
{
    (void)name;
    fputs("usage: tandem keys generate [--out DIR] [--name NAME]\n"
          "\n"
          "Write a CurveZMQ key pair: DIR/NAME.key (both keys, mode 0600:\n"
          "keep it secret) and DIR/NAME.pub (the public key, to share).\n"
          "An existing file is never overwritten. The orchestrator's\n"
          "pair goes in orchestrator.curve_key; each agent's or client's\n"
          "public key goes in orchestrator.authorized_keys with its\n"
          "roles (\"coder,reviewer  KEY  NAME\"), and the agent connects\n"
          "with --server-key ORCHESTRATOR.pub --key NAME.key.\n"
          "\n"
          "options:\n"
          "  --out DIR            where to write (default: .)\n"
          "  --name NAME          the files' name (default: tandem)\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 written, 1 it could not be written, 2 usage error\n"
          "(a file of that name exists)\n",
          to);
}

int tnd_keys_cmd(const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_OUT, TND_OPT_NAME, 0};
    const char *out = ".", *file = "tandem";
    tnd_curve_pair pair;
    tnd_cli cli;
    int c, rc;

    tnd_cli_start(&cli, name, tnd_keys_cmd_usage, accepts, false, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_OUT)
            out = optarg;
        else /* TND_OPT_NAME */
            file = optarg;
    }
    if (c < 0)
        return cli.status;
    if (optind >= argc || strcmp(argv[optind], "generate") != 0)
        return tnd_cli_error(&cli, "say what to do: tandem keys generate");
    if (optind + 1 < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'",
                             argv[optind + 1]);
    if (!tnd_fs_is_dir(out))
        return tnd_cli_error(&cli, "--out %s is not a directory", out);
    if (tnd_curve_generate(&pair) < 0) {
        fprintf(stderr, "tandem keys: %s\n", tnd_error_last());
        return TND_EXIT_FAILED;
    }
    rc = tnd_curve_write(out, file, &pair);
    memset(&pair.secret_key, 0, sizeof(pair.secret_key));
    if (rc < 0) {
        fprintf(stderr, "tandem keys: %s\n", tnd_error_last());
        return strstr(tnd_error_last(), "already exists") ||
                       strstr(tnd_error_last(), "is not a key name")
                   ? TND_EXIT_USAGE
                   : TND_EXIT_FAILED;
    }
    fprintf(stderr, "tandem keys: wrote %s/%s.key (secret) and %s/%s.pub\n",
            out, file, out, file);
    printf("%s\n", pair.public_key);
    return TND_EXIT_OK;
}
