/* tnd_context - which repository files the coder sees.
 *
 * Under a byte budget: first the files the task or the last failure
 * names (by path or file name), then the other text files, smallest
 * first. Binary files and files over 256 KiB are never sent. Files that
 * do not fit are listed in a repository map (path and size) so the coder
 * still knows they exist. */
#ifndef TND_CONTEXT_H
#define TND_CONTEXT_H

#include <stddef.h>

#include "proto/code.h"

/* Fill req->files, req->nfiles and req->repo_map from the tree at root.
 * task and hints (e.g. the last failure's output; may be NULL) decide
 * what comes first; paths in exclude (relative, NULL-terminated, may be
 * NULL) are left out entirely, e.g. tandem's own config and cassettes.
 * -1 with the error set when the tree cannot be read. */
int tnd_context_build(tnd_code_request *req, const char *root, const char *task,
                      const char *hints, const char *const *exclude,
                      size_t budget);

#endif
