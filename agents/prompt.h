/* tnd_prompt - what the agents say to their models.
 *
 * The words live here, apart from the plumbing, so they can be read and
 * improved in one place. Builders return new strings (caller frees). */
#ifndef TND_PROMPT_H
#define TND_PROMPT_H

#include "proto/audit.h"
#include "proto/code.h"

/* How both agents' first user prompt gives the task (printf format, the
 * task its one argument): a recorded cassette expects it (cassette.c). */
#define TND_PROMPT_TASK "## Task\n\n%s\n\n"

/* The coder's instructions: its job and the edit block format. */
const char *tnd_prompt_coder_system(void);

/* The coder's request: task, repository map, files, feedback. */
char *tnd_prompt_coder_user(const tnd_code_request *req);

/* A re-ask after an answer without usable edit blocks. */
char *tnd_prompt_coder_retry(const tnd_code_request *req, const char *error);

/* The reviewer's instructions: audit criteria and the JSON schema. */
const char *tnd_prompt_reviewer_system(void);

/* The reviewer's request: task, diff, and what each skill found. */
char *tnd_prompt_reviewer_user(const tnd_audit_request *req,
                               const tnd_skill_result *skills, size_t nskills);

/* A re-ask after an answer that was not a valid critique. */
char *tnd_prompt_reviewer_retry(const char *user, const char *error);

#endif
