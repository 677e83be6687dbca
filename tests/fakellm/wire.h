/* fl_wire - the three chat APIs' response formats, as fakellm sends them.
 *
 * OpenAI Chat Completions, Anthropic Messages and Ollama /api/chat, each
 * as one JSON body or as the list of stream events that carry the same
 * answer (SSE for OpenAI and Anthropic, NDJSON for Ollama), plus each
 * API's own error shape. Pure formatting: no sockets, no script. */
#ifndef FL_WIRE_H
#define FL_WIRE_H

#include <stddef.h>

typedef enum fl_api {
    FL_API_OPENAI,
    FL_API_ANTHROPIC,
    FL_API_OLLAMA,
} fl_api;

/* One answer to render. */
typedef struct fl_answer {
    fl_api api;
    const char *model; /* echoed from the request */
    const char *content;
    size_t content_len;
    long long prompt_tokens;
    long long completion_tokens;
    int usage;        /* 0: leave token counts out (or zero, Anthropic) */
    int stream_usage; /* OpenAI: stream_options.include_usage was true */
    size_t chunk_size;
    int hit_max_tokens; /* the stop reason says max_tokens cut it */
    int filtered;       /* ...says the content filter stopped it */
} fl_answer;

/* One stream event, framed and ready to send. */
typedef struct fl_event {
    char *data;
    size_t len;
    int content; /* carries a piece of the answer's text */
} fl_event;

typedef struct fl_events {
    fl_event *items;
    size_t count;
    size_t alloc;
} fl_events;

/* The non-streaming response body. Caller frees; *len_out gets the
 * length. */
char *fl_wire_body(size_t *len_out, const fl_answer *answer);

/* The streaming response as events, terminator last. Free with
 * fl_events_free. */
void fl_wire_events(fl_events *out, const fl_answer *answer);

/* Free the events' memory; leaves *events empty. */
void fl_events_free(fl_events *events);

/* An error body in api's own shape for an HTTP status. Caller frees. */
char *fl_wire_error(size_t *len_out, fl_api api, int status,
                    const char *message);

/* Content-Type of api's stream. Static. */
const char *fl_wire_stream_type(fl_api api);

#endif
