/* tnd_fs - files and directories: capped reads, atomic writes, trees. */
#ifndef TND_FS_H
#define TND_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/error.h"

/* Read a whole regular file, at most cap bytes. On success *out holds
 * the bytes plus a NUL (caller frees) and *len_out (may be NULL) their
 * count. Returns TND_ENOTFOUND when the file does not exist, -1 on any
 * other failure; the error names path. Anything but a regular file (a
 * FIFO, a directory, a device) is refused without being read, so a FIFO
 * cannot block and /dev/zero cannot run on; a file larger than cap is
 * refused from its size before reading, and reading stops at cap + 1
 * bytes in case it grows. */
int tnd_fs_read(char **out, size_t *len_out, const char *path, size_t cap);

/* As tnd_fs_read, the file name in the directory dirfd, opened through
 * no symbolic link (one there is an error); path names it in messages. */
int tnd_fs_read_at(char **out, size_t *len_out, int dirfd, const char *name,
                   const char *path, size_t cap);

/* 0 when path (symlinks followed) is a regular file; TND_ENOTFOUND when
 * it does not exist; else -1 with the error saying what it is, in
 * tnd_fs_read's words. For checking a file before a run uses it; the
 * read itself checks again. */
int tnd_fs_check_regular(const char *path);

/* Read fd to its end, at most cap bytes (for stdin, or a pipe): as
 * tnd_fs_read, with name in messages, for a descriptor the caller opened
 * and closes. Never reads more than cap + 1 bytes. */
int tnd_fs_read_fd(char **out, size_t *len_out, int fd, const char *name,
                   size_t cap);

/* Create or replace path with data (mode 0644 for new files). Not atomic:
 * for scratch files. */
int tnd_fs_write(const char *path, const void *data, size_t len);

/* Replace path atomically: write a temporary file in the same directory,
 * fsync it, rename it over path, fsync the directory. A reader sees the
 * old or the new contents, never a mix, even after a crash. */
int tnd_fs_write_atomic(const char *path, const void *data, size_t len);

/* Replace path without fsyncs, for files rebuilt from a durable record,
 * such as a session's views, that change often. A regular file that
 * already holds exactly data is left as it is. Otherwise data is
 * written to a spare file beside it (DIR/.NAME.spare, kept) and the two
 * are swapped atomically (renameat2 RENAME_EXCHANGE), so no inode is
 * made or freed, and the spare is written over and cut to length, never
 * emptied first (ext4 writes a file emptied and rewritten out at its
 * close, an I/O each time): on ext4 allocating one after many deletions scans
 * the recently freed ones, and that was most of a server's CPU (see
 * bench/RESULTS.md). A reader that opens path sees the old or the new
 * contents, never a mix, as long as it reads them before the next
 * update but one (which rewrites the inode it holds); a crash of the
 * machine may leave the old contents, those of the update before, or a
 * mix of either with the new (nothing is flushed: what is written so is
 * rebuilt from its durable record). Where the filesystem cannot swap, a new
 * file is renamed over path as tnd_fs_write_atomic does. */
int tnd_fs_write_replace(const char *path, const void *data, size_t len);

/* tnd_fs_write_replace without reading path first: for a file whose
 * every write differs from the last (a session's now.json holds the
 * journal's length and a time), where the comparison only cost an open,
 * a stat and a read. */
int tnd_fs_write_swap(const char *path, const void *data, size_t len);

/* mkdir -p with mode for the directories it creates. */
int tnd_fs_mkdirs(const char *path, mode_t mode);

/* A new lock file name in the directory open as dirfd (O_EXCL, 0600,
 * never following a link), with an exclusive flock(2) taken on it and
 * this process's pid written in it for people to read. The lock lasts
 * as long as the descriptor (close-on-exec), and the kernel drops it
 * however the process ends: a lock another process can take proves its
 * holder gone, where a pid, reused, proves nothing. The descriptor, or
 * -1 with errno set (the caller names the file in its error). */
int tnd_fs_lock_new(int dirfd, const char *name);

/* A new file made from tmpl as mkstemps(3) makes one (tmpl's XXXXXX,
 * followed by suffix_len characters, replaced in place; mode 0600), and
 * an exclusive flock(2) on it, held as long as the descriptor returned
 * (close-on-exec, read-write) is open: a sweep takes for dead only what
 * it can lock. The lock is taken right after the file is made, and the
 * file is made again under another name in the rare case a sweep took
 * it in between (the process stopped there for longer than the sweep's
 * grace). The descriptor, or -1 with errno set (the caller names tmpl
 * in its error). */
int tnd_fs_mkstemps_held(char *tmpl, int suffix_len);

/* The same for a directory, as mkdtemp(3) makes one (mode 0700): the
 * flock is on the directory itself, held by the returned descriptor
 * (O_RDONLY | O_DIRECTORY, close-on-exec). */
int tnd_fs_mkdtemp_held(char *tmpl);

/* All of data written to fd, short writes and EINTR retried; -1 with
 * errno set (no error message: the caller names the file). */
int tnd_fs_write_all(int fd, const void *data, size_t len);

/* Copy the tree at src into dst (created; must not exist yet): regular
 * files with their mode and modification time, directories, symlinks as
 * symlinks; other file types are skipped. Entries of src's top level
 * named in skip (NULL-terminated, may be NULL) are left out. Fails when
 * the regular files add up to more than max_bytes. */
int tnd_fs_copytree(const char *src, const char *dst, const char *const *skip,
                    size_t max_bytes);

/* Copy the open file in (at offset 0, as just opened) into dst, which
 * is created (it must not exist) with st's mode and times. A reflink
 * where the filesystem has them, else copy_file_range, else read/write. */
int tnd_fs_copy_fd(int in, const char *dst, const struct stat *st);

/* tnd_fs_copy_fd with dst relative to the directory open as dirfd. */
int tnd_fs_copy_fd_at(int in, int dirfd, const char *dst,
                      const struct stat *st);

/* The regular files under root as paths relative to it, sorted, skipping
 * top-level names in skip and any directory named ".git". At most
 * max_files; more is an error. *out is a NULL-terminated array; free it
 * with tnd_str_list_free(). */
int tnd_fs_list(char ***out, size_t *count_out, const char *root,
                const char *const *skip, size_t max_files);

/* The symbolic links under root, as tnd_fs_list lists files (sorted,
 * ".git" skipped, at most max_links; the links are not followed). */
int tnd_fs_list_links(char ***out, size_t *count_out, const char *root,
                      size_t max_links);

/* The directories under root (root itself not included), as tnd_fs_list
 * lists files (sorted, ".git" skipped, at most max_dirs; links to
 * directories are not followed or listed). Empty ones are the point: a
 * list of files cannot tell them. */
int tnd_fs_list_dirs(char ***out, size_t *count_out, const char *root,
                     size_t max_dirs);

/* How many regular files and symbolic links are under root, as
 * tnd_fs_list and tnd_fs_list_links would list them together (top-level
 * names in skip and any ".git" left out), without keeping their names:
 * up to max + 1, where the count stops (more than max). -1 when a
 * directory cannot be read. */
int tnd_fs_count(size_t *count_out, const char *root, const char *const *skip,
                 size_t max);

/* True when path exists (without following a final symlink). */
bool tnd_fs_exists(const char *path);

/* True when path is a directory (following symlinks). */
bool tnd_fs_is_dir(const char *path);

/* "a/b" from "a" and "b" (no doubled slash). Caller frees. */
char *tnd_fs_join(const char *a, const char *b);

/* The directory part of path ("." when none). Caller frees. */
char *tnd_fs_dirname(const char *path);

/* Absolute, symlink-free form of an existing path; NULL with the error
 * set when it cannot be resolved. Caller frees. */
char *tnd_fs_realpath(const char *path);

/* Directory holding the running executable; NULL when unknown. Caller
 * frees. */
char *tnd_fs_self_dir(void);

/* $TMPDIR/tandem-UID (TMPDIR, else /tmp), made with mode 0700 when
 * missing: the directory only this user may enter, where tandem's
 * processes keep what is theirs. NULL with the error set when it cannot
 * be made or is not the user's alone. Caller frees. */
char *tnd_fs_user_tmp(void);

/* The directory a sandbox is tried in, in tnd_fs_user_tmp: probe-XXXXXX,
 * empty, made with tnd_fs_mkdtemp_held and held until it is removed at
 * once; one a killed process left, held by nobody, is removed by the
 * next sweep of runtime directories (orchestrator/rundir.c). */
#define TND_FS_PROBE_PREFIX "probe-"

/* Raise this process's soft limit of open files to want, as far as the
 * hard limit allows (children inherit it: it is never raised past want,
 * as some close every descriptor up to it); a soft limit at or past want
 * stays. The soft limit it leaves (ULLONG_MAX for none); want 0 only
 * reads it. */
unsigned long long tnd_fs_files_raise(unsigned long long want);

/* Make sure descriptors 0, 1 and 2 are open, before anything is opened:
 * one closed by the caller (`tandem run >&-`) was the number the next
 * open() got, the session's lock file, and the diff was written there,
 * exit 0. A closed one is opened read-only on /dev/null: a read finds
 * the end, and a write fails, as on the closed descriptor, so output
 * that cannot go out is still said and exit 1. */
void tnd_fs_std_fds(void);

#endif
