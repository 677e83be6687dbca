/* tnd_doctor - `tandem doctor`: is everything a run needs in place?
 *
 * Checks the configuration, the agent programs, each agent's model (the
 * key is set — never showing it — and the endpoint answers and offers
 * the model), and that the programs the skills run exist. Prints a
 * table, or with json one JSON document:
 *   {"tandem": 1, "ok": BOOL, "failures": N,
 *    "checks": [{"check": "coder key", "ok": BOOL, "detail": "..."}]}
 * Returns 0 when every check passes and 1 otherwise. */
#ifndef TND_DOCTOR_H
#define TND_DOCTOR_H

#include <stdbool.h>

typedef struct tnd_doctor_options {
    const char *repo;     /* "." when NULL */
    const char *config;   /* as tandem run finds it when NULL */
    const char *llm;      /* --llm override, or NULL */
    const char *base_url; /* --base-url override, or NULL */
    const char *from_env; /* as tnd_run_options' */
    long timeout_ms;      /* per endpoint check */
    bool json;            /* one JSON document on stdout, not a table */
} tnd_doctor_options;

/* Run the checks and print the table (or the document) on stdout.
 * Returns the exit code: 0 all pass, 1 something fails, 2 usage error
 * (said on stderr; nothing on stdout with json). */
int tnd_doctor(const tnd_doctor_options *opts);

#endif
