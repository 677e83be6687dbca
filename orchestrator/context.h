/* tnd_context - which repository files the coder sees.
 *
 * Under a byte budget: first the files the task or the last failure
 * names (by path or file name), then those matching
 * agents.coder.context_include, then the other text files; smallest
 * first within each group. Files that hold data rather than text (see
 * tnd_utf8_is_binary) are never sent, nor are files over 256 KiB that
 * nothing names. A named file that does not fit is counted and named in
 * the stats, so the run can say so and which budget to raise.
 *
 * Files that are not sent are listed in a repository map (path and size)
 * so the coder still knows they exist. The map has its own cap: past it,
 * the rest is summed up per top-level directory, so a 2,000-file tree
 * costs the prompt a bounded number of tokens. What is sent is valid
 * UTF-8: a text file's stray bytes (a Latin-1 comment) go as U+FFFD,
 * counted. */
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
    size_t map_max;             /* bytes of repository map at most; 0 for
                                   TND_CONTEXT_MAP_DEFAULT */
} tnd_context_options;

#define TND_CONTEXT_MAP_DEFAULT (8 * 1024)

/* What one context holds, for the console and report.json. */
typedef struct tnd_context_stats {
    size_t files;          /* files sent */
    size_t bytes;          /* bytes of file content sent (as read) */
    size_t binary;         /* files left to the map as data, not text */
    size_t replaced;       /* bytes that were not UTF-8, sent as U+FFFD */
    size_t replaced_files; /* files holding such bytes */
    size_t left_out;       /* files not sent (data files not counted) */
    size_t named_out;      /* ...of which the task or failure names */
    char named[256];       /* the first of those, ", "-separated, each
                              with its size ("cJSON.c (80 KiB)"); "" */
    size_t named_need;     /* the budget, in bytes, that would have held
                              every named file (but those below) */
    size_t named_over;     /* named_out that no budget would send: over
                              the most a file in a request may be
                              (TND_BODY_MAX_FILE, U+FFFDs included), or
                              past what a request may hold */
    size_t map_listed;     /* files the map lists by name */
    size_t map_summed;     /* files it only counts, per directory */
    size_t map_bytes;      /* the map's size */
} tnd_context_stats;

/* Fill req->files, req->nfiles and req->repo_map from the tree at root;
 * *stats (may be NULL) says what was sent. -1 with the error set when the
 * tree cannot be read. */
int tnd_context_build(tnd_code_request *req, const char *root,
                      const tnd_context_options *o, tnd_context_stats *stats);

#endif
