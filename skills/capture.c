/* Bounded capture of a program's output (see capture.h). */
#include "skills/capture.h"

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/xalloc.h"
#include "skills/toolline.h"

void tnd_capture_init(tnd_capture *s, size_t cap)
{
    memset(s, 0, sizeof(*s));
    tnd_buf_init(&s->head, cap / 2);
    s->ring_cap = cap - cap / 2; /* >= 1 as cap >= 1 */
    tnd_buf_init(&s->failures, TND_CAPTURE_MIDDLE_MAX);
}

/* The line being dropped has ended: keep it when it names a failure and
 * there is room. */
static void end_dropped_line(tnd_capture *s)
{
    size_t n = s->line_len, need;

    if (n && s->line[n - 1] == '\r' && !s->line_long)
        n--;
    if (tnd_toolline_is_failure(s->line, n)) {
        s->nfailures++;
        if (s->line_long)
            n = tnd_utf8_whole(s->line, n);
        need = n + (s->line_long ? 6 : 0) + 1;
        if (s->failures.len + need <= s->failures.cap) {
            (void)tnd_buf_append(&s->failures, s->line, n);
            (void)tnd_buf_puts(&s->failures, s->line_long ? " [...]\n" : "\n");
            s->kept++;
        }
    }
    s->line_len = 0;
    s->line_long = 0;
}

/* Bytes leaving the capture for good, in the order written: read them as
 * lines, holding at most TND_CAPTURE_LINE_MAX bytes of the current one, since a
 * line goes out in pieces as the ring turns. */
static void drop(tnd_capture *s, const char *data, size_t len)
{
    while (len) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        size_t room = TND_CAPTURE_LINE_MAX - s->line_len,
               take = n < room ? n : room;

        memcpy(s->line + s->line_len, data, take);
        s->line_len += take;
        if (n > take)
            s->line_long = 1;
        if (!nl)
            return;
        end_dropped_line(s);
        data += n + 1;
        len -= n + 1;
    }
}

void tnd_capture_add(tnd_capture *s, const char *data, size_t len)
{
    size_t room = s->head.cap - s->head.len, n = len < room ? len : room;
    size_t over, evict, start;

    s->total += len;
    if (n)
        (void)tnd_buf_append(&s->head, data, n);
    data += n;
    len -= n;
    if (!len)
        return;
    if (!s->ring)
        s->ring = tnd_xmalloc(s->ring_cap);
    /* the oldest bytes of the ring make way, then whatever of data does
     * not fit at all: both are the omitted middle, in that order */
    over =
        s->ring_len + len > s->ring_cap ? s->ring_len + len - s->ring_cap : 0;
    evict = over < s->ring_len ? over : s->ring_len;
    if (evict) {
        start = (s->ring_pos + s->ring_cap - s->ring_len) % s->ring_cap;
        n = s->ring_cap - start < evict ? s->ring_cap - start : evict;
        drop(s, s->ring + start, n);
        drop(s, s->ring, evict - n);
        s->ring_len -= evict;
    }
    if (len > s->ring_cap) {
        drop(s, data, len - s->ring_cap);
        data += len - s->ring_cap;
        len = s->ring_cap;
    }
    n = s->ring_cap - s->ring_pos; /* room before the wrap */
    if (n > len)
        n = len;
    memcpy(s->ring + s->ring_pos, data, n);
    memcpy(s->ring, data + n, len - n);
    s->ring_pos = (s->ring_pos + len) % s->ring_cap;
    s->ring_len += len;
    if (s->ring_len > s->ring_cap)
        s->ring_len = s->ring_cap;
}

/* The marker line for the omitted middle, then the lines from it that
 * name a failure. Worded so that the marker itself does not read as one. */
static void omitted_part(tnd_buf *b, tnd_capture *s, size_t omitted)
{
    if (s->line_len) /* the line the tail starts in the middle of */
        end_dropped_line(s);
    if (!s->nfailures)
        (void)tnd_buf_printf(b, "\n[... %zu bytes omitted ...]\n", omitted);
    else if (s->kept == 1 && s->nfailures == 1)
        (void)tnd_buf_printf(b,
                             "\n[... %zu bytes omitted; this line among them "
                             "names a failure ...]\n",
                             omitted);
    else if (s->kept == s->nfailures)
        (void)tnd_buf_printf(b,
                             "\n[... %zu bytes omitted; these %zu lines among "
                             "them name a failure ...]\n",
                             omitted, s->kept);
    else
        (void)tnd_buf_printf(b,
                             "\n[... %zu bytes omitted; %zu lines among them "
                             "name a failure, the first %zu follow ...]\n",
                             omitted, s->nfailures, s->kept);
    (void)tnd_buf_append(b, tnd_buf_str(&s->failures), s->failures.len);
}

/* head + "\n[... N bytes omitted ...]\n" (and the failure lines from
 * the omitted part) + tail. Caller frees. */
char *tnd_capture_finish(tnd_capture *s, size_t *len_out)
{
    size_t omitted = s->total - s->head.len - s->ring_len;
    size_t start = (s->ring_pos + s->ring_cap - s->ring_len) % s->ring_cap;
    size_t first = s->ring_cap - start;
    tnd_buf b;

    if (first > s->ring_len)
        first = s->ring_len;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    (void)tnd_buf_append(&b, tnd_buf_str(&s->head), s->head.len);
    if (omitted)
        omitted_part(&b, s, omitted);
    if (s->ring_len) {
        (void)tnd_buf_append(&b, s->ring + start, first);
        (void)tnd_buf_append(&b, s->ring, s->ring_len - first);
    }
    return tnd_buf_detach(&b, len_out);
}

void tnd_capture_free(tnd_capture *s)
{
    tnd_buf_free(&s->head);
    tnd_buf_free(&s->failures);
    free(s->ring);
    s->ring = NULL;
}
