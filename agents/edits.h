/* tnd_edits - reading the coder model's answer: edit blocks.
 *
 * The coder is asked to answer with a short rationale and, per change,
 * the file's path on its own line followed by one block:
 *
 *   src/stats.c
 *   <<<<<<< SEARCH
 *   exact lines from the file
 *   =======
 *   the lines that replace them
 *   >>>>>>> REPLACE
 *
 *   src/new.c
 *   <<<<<<< FILE
 *   the whole content of a new (or rewritten) file
 *   >>>>>>> FILE
 *
 *   src/old.c
 *   <<<<<<< DELETE
 *   >>>>>>> DELETE
 *
 * Models wrap these in code fences, decorate paths with backticks or bold,
 * and vary the marker length; the parser tolerates that and nothing else,
 * and its errors quote the line at fault so a re-ask can fix it. */
#ifndef TND_EDITS_H
#define TND_EDITS_H

#include <stddef.h>

#include "proto/code.h"

/* Parse an answer into edits and the rationale (the text outside the
 * blocks). On success *edits_out (free with tnd_edit_list_free) holds at
 * least one edit. -1 with a message naming the block and line at fault
 * when the answer has no blocks, an unterminated block, a block without a
 * path, or a path that leaves the repository. */
int tnd_edits_parse(tnd_edit **edits_out, size_t *count_out,
                    char **rationale_out, const char *answer);

#endif
