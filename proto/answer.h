/* tnd_answer - whether a reply answers the request it was sent for.
 *
 * The orchestrator journals an agent's reply before it acts on it, and a
 * resumed run replays the journal. A reply that cannot be used (not
 * JSON, a wrong type, a field out of its limits, another task's ids) must
 * therefore be caught before it is journaled: it is the agent's fault,
 * not the task's, and the request goes to an agent again (see
 * orchestrator/crew.c). One function, so the rule lives in one place and
 * any peer's reply is judged by the same contract (proto/PROTOCOL.md). */
#ifndef TND_ANSWER_H
#define TND_ANSWER_H

#include <json-c/json.h>
#include <stddef.h>

/* 0 when reply is a usable answer to request: an "error" body (the agent
 * could not do it; an answer all the same, which the caller reports), or
 * the type the request asks for ("code" -> "code_reply", "audit" ->
 * "audit_reply") decoding within every limit; either way echoing the
 * request's task_id and attempt. -1 with the error set to what is wrong,
 * in words fit for a log line. On 0, the reply's type ("error",
 * "need", "code_reply", ...) goes to reply_type (type_size bytes, 32 are
 * enough) unless it is NULL, so a caller need not parse the reply again
 * to know it; and, unless parsed is NULL, the reply parsed goes to
 * *parsed (the caller's to put), so it need not parse it to use it
 * either (NULL on -1). */
int tnd_answer_check(const char *request, size_t request_len, const char *reply,
                     size_t reply_len, char *reply_type, size_t type_size,
                     json_object **parsed);

#endif
