/* tnd_code - the coder's request and reply bodies (see proto/body.h). */
#ifndef TND_CODE_H
#define TND_CODE_H

#include <stddef.h>

#include "proto/body.h"

/* Limits of the request's "lessons". */
#define TND_CODE_MAX_LESSONS 5
#define TND_CODE_MAX_LESSON  (2 << 10) /* bytes per lesson */

typedef struct tnd_file {
    char *path; /* relative to the repository root */
    char *content;
} tnd_file;

/* orchestrator -> coder */
typedef struct tnd_code_request {
    char *task_id;
    int attempt;     /* 1-based */
    char *task;      /* what the user asked for */
    tnd_file *files; /* repository files for context */
    size_t nfiles;
    char *repo_map; /* "PATH SIZE" lines for files not sent */
    char *feedback; /* why the previous attempt failed; "" at first */
    char **lessons; /* what earlier tasks here taught: one paragraph
                       each, at most TND_CODE_MAX_LESSONS; NULL when
                       none (left out of the body) */
    size_t nlessons;
} tnd_code_request;

/* The request's body (see proto/body.h). */
char *tnd_code_request_encode(const tnd_code_request *r, size_t *len_out);
int tnd_code_request_decode(tnd_code_request *out, const char *body,
                            size_t len);
void tnd_code_request_clear(tnd_code_request *r);

typedef enum tnd_edit_kind {
    TND_EDIT_REPLACE = 1, /* replace search (exactly once) by replace */
    TND_EDIT_WRITE,       /* write the whole file: content in replace */
    TND_EDIT_DELETE,      /* delete the file */
} tnd_edit_kind;

/* The largest line an edit may be anchored at. */
#define TND_EDIT_MAX_LINE 100000000L

typedef struct tnd_edit {
    tnd_edit_kind kind;
    char *path;
    char *search;  /* REPLACE only; "" otherwise */
    char *replace; /* REPLACE: new text; WRITE: the whole file */
    long line;     /* REPLACE: the line search begins at, 1-based, in the
                      file as the edits before this one left it (a diff's
                      hunk: search must be there, exactly; "" inserts);
                      0: wherever search matches, once (a coder's) */
} tnd_edit;

/* coder -> orchestrator */
typedef struct tnd_code_reply {
    char *task_id; /* echoed from the request */
    int attempt;
    char *rationale; /* the coder's explanation, for people */
    tnd_edit *edits;
    size_t nedits;
    char *format_error; /* why the model's answer held no usable edits
                           (then nedits is 0); NULL otherwise */
    tnd_usage usage;
} tnd_code_reply;

/* The reply's body (see proto/body.h). */
char *tnd_code_reply_encode(const tnd_code_reply *r, size_t *len_out);
int tnd_code_reply_decode(tnd_code_reply *out, const char *body, size_t len);
/* The same from a body already parsed (o is borrowed). */
int tnd_code_reply_from_json(tnd_code_reply *out, json_object *o);
void tnd_code_reply_clear(tnd_code_reply *r);

/* Check an edit's path: relative, no "..", no empty or "." parts, no
 * NUL or control characters, at most TND_BODY_MAX_PATH bytes, not inside
 * .git or .tandem. -1 with a reason. */
int tnd_edit_path_check(const char *path);

/* "replace", "write", "delete". */
const char *tnd_edit_kind_name(tnd_edit_kind k);

/* Free an edit's strings and zero it (clearing twice is harmless). Every
 * tnd_edit, whoever made it, is freed here. */
void tnd_edit_clear(tnd_edit *e);

/* Clear n edits and free the array itself. Safe on NULL. */
void tnd_edit_list_free(tnd_edit *edits, size_t n);

#endif
