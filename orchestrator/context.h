/* tnd_context - which repository files the coder sees.
 *
 * Under a byte budget: first the files the task or the last failure
 * names (by path or file name), then those matching
 * agents.coder.context_include, then the other text files; smallest
 * first within each group. Files that hold data rather than text (see
 * tnd_utf8_is_binary) and files over 256 KiB are never sent. Files that
 * do not fit are listed in a repository map (path and size) so the coder
 * still knows they exist. What is sent is valid UTF-8: a text file's
 * stray bytes (a Latin-1 comment) go as U+FFFD, counted. */
#ifndef TND_CONTEXT_H
#define TND_CONTEXT_H

#include <stddef.h>

#include "proto/code.h"

typedef struct tnd_context_options {
    const char *task;
    const char *hints;          /* e.g. the last failure's output; may be
                                   NULL */
    char *const *include;       /* globs ranked after what is named;
                                   NULL-terminated, may be NULL */
    const char *const *exclude; /* relative paths never sent (tandem's own
                                   config and cassettes); may be NULL */
    size_t budget;              /* bytes of file content at most */
} tnd_context_options;

/* What one context holds, for the console and report.json. */
typedef struct tnd_context_stats {
    size_t files;          /* files sent */
    size_t bytes;          /* bytes of file content sent (as read) */
    size_t binary;         /* files left to the map as data, not text */
    size_t replaced;       /* bytes that were not UTF-8, sent as U+FFFD */
    size_t replaced_files; /* files holding such bytes */
} tnd_context_stats;

/* Fill req->files, req->nfiles and req->repo_map from the tree at root;
 * *stats (may be NULL) says what was sent. -1 with the error set when the
 * tree cannot be read. */
int tnd_context_build(tnd_code_request *req, const char *root,
                      const tnd_context_options *o, tnd_context_stats *stats);

#endif
