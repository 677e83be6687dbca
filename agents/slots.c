/* A fair counting semaphore with cancellation (see slots.h). */
#include "agents/slots.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "common/xalloc.h"

/* How often a waiter looks at its cancel flag: the flag is set by the
 * agent's loop, which knows nothing of the slots. */
#define CANCEL_POLL_MS 100

/* One waiting thread, on its own stack, in the line. */
typedef struct waiter {
    struct waiter *next;
} waiter;

struct tnd_slots {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a slot came free, or the line moved */
    size_t size, free;
    waiter *head, **tail;
};

tnd_slots *tnd_slots_new(size_t n)
{
    tnd_slots *self = tnd_xcalloc(1, sizeof(*self));
    pthread_condattr_t attr;

    pthread_mutex_init(&self->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&self->cond, &attr);
    pthread_condattr_destroy(&attr);
    self->size = self->free = n ? n : 1;
    self->tail = &self->head;
    return self;
}

void tnd_slots_destroy(tnd_slots **self_p)
{
    tnd_slots *self = *self_p;

    if (!self)
        return;
    assert(!self->head && self->free == self->size);
    pthread_cond_destroy(&self->cond);
    pthread_mutex_destroy(&self->lock);
    free(self);
    *self_p = NULL;
}

static void leave(tnd_slots *self, waiter *w)
{
    waiter **p = &self->head;

    while (*p != w)
        p = &(*p)->next;
    *p = w->next;
    if (self->tail == &w->next)
        self->tail = p;
    /* the one behind may now be first */
    pthread_cond_broadcast(&self->cond);
}

int tnd_slots_take(tnd_slots *self, const atomic_int *cancel)
{
    waiter me = {NULL};
    int rc = 0;

    pthread_mutex_lock(&self->lock);
    *self->tail = &me;
    self->tail = &me.next;
    while (self->head != &me || self->free == 0) {
        struct timespec until;
        if (cancel && atomic_load(cancel)) {
            rc = -1;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += CANCEL_POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&self->cond, &self->lock, &until);
    }
    leave(self, &me);
    if (rc == 0)
        self->free--;
    pthread_mutex_unlock(&self->lock);
    return rc;
}

void tnd_slots_give(tnd_slots *self)
{
    pthread_mutex_lock(&self->lock);
    assert(self->free < self->size);
    self->free++;
    pthread_cond_broadcast(&self->cond);
    pthread_mutex_unlock(&self->lock);
}

size_t tnd_slots_size(const tnd_slots *self)
{
    return self->size;
}

size_t tnd_slots_waiting(tnd_slots *self)
{
    size_t n = 0;

    pthread_mutex_lock(&self->lock);
    for (const waiter *w = self->head; w; w = w->next)
        n++;
    pthread_mutex_unlock(&self->lock);
    return n;
}
