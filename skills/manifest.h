/* tnd_manifest - which of a workspace's files a skill changed.
 *
 * The reviewer audits a tree it must not change: a skill that rewrites a
 * source file (a formatter run with -i, a code generator) changes what is
 * being audited. Before the skills run the reviewer records every regular
 * file (path, size, mtime and ctime in ns, device and inode; .git
 * skipped); after a skill it asks which of those files were modified or
 * deleted since the last look.
 * Files created since are build outputs and ignored, and so are files
 * that look like build outputs even though they existed before (an
 * earlier attempt's build leaves them): binary files (a NUL in the first
 * 8 KiB) and paths the workspace's top-level .gitignore ignores. */
#ifndef TND_MANIFEST_H
#define TND_MANIFEST_H

#include <stddef.h>

typedef struct tnd_manifest tnd_manifest;

/* Record the regular files under root, at most max_files of them; NULL
 * with the error set when root cannot be read or holds more. Free with
 * tnd_manifest_destroy. */
tnd_manifest *tnd_manifest_new(const char *root, size_t max_files);

/* The recorded files that were modified or deleted since the manifest
 * was taken or since the last call (each change is reported once, and
 * the record moves on to the file's new state). *out is a NULL-terminated
 * list of relative paths, sorted (caller frees with
 * tnd_str_list_free); returns the count. */
size_t tnd_manifest_changes(char ***out, tnd_manifest *self);

/* The number of files recorded. */
size_t tnd_manifest_size(const tnd_manifest *self);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_manifest_destroy(tnd_manifest **self_p);

#endif
