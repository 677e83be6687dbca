/* tnd_patch - what a unified diff touches: its files, their added and
 * removed lines, and each added line with its number in the new file.
 *
 * The reviewer reads the proposal's diff (git's format, as
 * orchestrator/workspace.c writes it; plain `diff -u` output works too)
 * to decide which skills the change concerns (skills.*.paths) and for
 * the built-in skills. The diff comes from outside: lines may be huge,
 * hold control bytes or end in CRLF, and hunk counts may lie; none of
 * that makes parsing fail or read past the text. */
#ifndef TND_PATCH_H
#define TND_PATCH_H

#include <stdbool.h>
#include <stddef.h>

/* Files beyond this make tnd_patch_parse fail. */
#define TND_PATCH_MAX_FILES 10000

typedef struct tnd_patch_file {
    char *path;     /* the new path; the old one for a deleted file */
    char *old_path; /* differs from path for a rename; else equal */
    bool created;
    bool deleted;
    bool binary;        /* "Binary files ... differ": no line counts */
    size_t added;       /* '+' lines in its hunks */
    size_t removed;     /* '-' lines in its hunks */
    size_t added_bytes; /* bytes of its added lines, newlines included:
                           the size of a created text file */
    long first_line;    /* new-file number of its first added line, else
                           of its first hunk; 0 when it has none */
} tnd_patch_file;

typedef struct tnd_patch {
    tnd_patch_file *files;
    size_t nfiles;
    size_t added, removed; /* over all files */
} tnd_patch;

/* Called for each added line: the file's index in patch->files, the
 * line's number in the new file, its text without the '+' and without
 * the line end ("\n" or "\r\n"). */
typedef void tnd_patch_line_fn(const tnd_patch *patch, size_t file, long line,
                               const char *text, size_t len, void *payload);

/* Parse len bytes of diff into *out (clear with tnd_patch_clear, also
 * after a failure). on_added may be NULL. Fails only when the diff names
 * more than TND_PATCH_MAX_FILES files. */
int tnd_patch_parse(tnd_patch *out, const char *diff, size_t len,
                    tnd_patch_line_fn *on_added, void *payload);

/* Free the file list; safe on a zeroed or cleared patch. */
void tnd_patch_clear(tnd_patch *patch);

/* The paths the patch touches (new and old names), NULL-terminated and
 * borrowed from patch: valid until tnd_patch_clear. Caller frees the
 * array itself. */
const char **tnd_patch_paths(const tnd_patch *patch);

#endif
