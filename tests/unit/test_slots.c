/* Unit tests for agents/slots: as many holders as slots, waiters served
 * in the order they came, a cancelled waiter leaves the line and holds
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "agents/slots.h"

/* One thread that takes a slot, notes when it got it, and gives it back
 * when told. */
typedef struct taker {
    tnd_slots *slots;
    atomic_int cancel;
    atomic_int release; /* give it back now */
    atomic_int *order;  /* shared: the next place in line served */
    int place;          /* the order it was served in; 0: not yet */
    int rc;
    pthread_t thread;
} taker;

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void *take_main(void *arg)
{
    taker *t = arg;

    t->rc = tnd_slots_take(t->slots, &t->cancel);
    if (t->rc < 0)
        return NULL;
    t->place = atomic_fetch_add(t->order, 1) + 1;
    while (!atomic_load(&t->release))
        pause_ms(1);
    tnd_slots_give(t->slots);
    return NULL;
}

static void start(taker *t, tnd_slots *slots, atomic_int *order)
{
    t->slots = slots;
    t->order = order;
    t->place = 0;
    t->rc = 1;
    atomic_init(&t->cancel, 0);
    atomic_init(&t->release, 0);
    assert_int_equal(pthread_create(&t->thread, NULL, take_main, t), 0);
}

/* Poll until cond holds, for at most 10 s. */
#define EVENTUALLY(cond)                          \
    do {                                          \
        int i_;                                   \
        for (i_ = 0; i_ < 10000 && !(cond); i_++) \
            pause_ms(1);                          \
        assert_true(cond);                        \
    } while (0)

static void size_is_at_least_one(void **state)
{
    tnd_slots *s = tnd_slots_new(0);

    (void)state;
    assert_int_equal(tnd_slots_size(s), 1);
    tnd_slots_destroy(&s);
    assert_null(s);
    tnd_slots_destroy(&s); /* NULL-safe */
    s = tnd_slots_new(3);
    assert_int_equal(tnd_slots_size(s), 3);
    tnd_slots_destroy(&s);
}

static void as_many_take_at_once_as_there_are_slots(void **state)
{
    tnd_slots *s = tnd_slots_new(2);
    atomic_int order;
    taker third;

    (void)state;
    atomic_init(&order, 0);
    assert_int_equal(tnd_slots_take(s, NULL), 0);
    assert_int_equal(tnd_slots_take(s, NULL), 0);
    assert_int_equal(tnd_slots_waiting(s), 0);
    start(&third, s, &order);
    EVENTUALLY(tnd_slots_waiting(s) == 1);
    assert_int_equal(third.place, 0);
    tnd_slots_give(s);
    EVENTUALLY(third.place == 1);
    assert_int_equal(tnd_slots_waiting(s), 0);
    atomic_store(&third.release, 1);
    pthread_join(third.thread, NULL);
    assert_int_equal(third.rc, 0);
    tnd_slots_give(s);
    tnd_slots_destroy(&s);
}

static void waiters_are_served_in_the_order_they_came(void **state)
{
    tnd_slots *s = tnd_slots_new(1);
    atomic_int order;
    taker t[3];

    (void)state;
    atomic_init(&order, 0);
    assert_int_equal(tnd_slots_take(s, NULL), 0);
    for (int i = 0; i < 3; i++) {
        start(&t[i], s, &order);
        EVENTUALLY(tnd_slots_waiting(s) == (size_t)i + 1);
    }
    tnd_slots_give(s);
    for (int i = 0; i < 3; i++) {
        EVENTUALLY(t[i].place != 0);
        assert_int_equal(t[i].place, i + 1);
        atomic_store(&t[i].release, 1);
        pthread_join(t[i].thread, NULL);
        assert_int_equal(t[i].rc, 0);
    }
    tnd_slots_destroy(&s);
}

static void a_cancelled_waiter_leaves_the_line(void **state)
{
    tnd_slots *s = tnd_slots_new(1);
    atomic_int order;
    taker first, behind;

    (void)state;
    atomic_init(&order, 0);
    assert_int_equal(tnd_slots_take(s, NULL), 0);
    start(&first, s, &order);
    EVENTUALLY(tnd_slots_waiting(s) == 1);
    start(&behind, s, &order);
    EVENTUALLY(tnd_slots_waiting(s) == 2);
    atomic_store(&first.cancel, 1);
    pthread_join(first.thread, NULL);
    assert_int_equal(first.rc, -1);
    assert_int_equal(first.place, 0);
    assert_int_equal(tnd_slots_waiting(s), 1);
    /* the one behind it is next, and the cancelled one took nothing */
    tnd_slots_give(s);
    EVENTUALLY(behind.place == 1);
    atomic_store(&behind.release, 1);
    pthread_join(behind.thread, NULL);
    assert_int_equal(tnd_slots_take(s, NULL), 0);
    tnd_slots_give(s);
    tnd_slots_destroy(&s);
}

static void a_cancel_set_before_the_take_still_takes_a_free_slot(void **state)
{
    tnd_slots *s = tnd_slots_new(1);
    atomic_int cancel;

    (void)state;
    atomic_init(&cancel, 1);
    /* cancellation is looked at while waiting; a free slot is taken,
     * and the skill's own run sees the flag */
    assert_int_equal(tnd_slots_take(s, &cancel), 0);
    assert_int_equal(tnd_slots_take(s, &cancel), -1);
    tnd_slots_give(s);
    tnd_slots_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(size_is_at_least_one),
        cmocka_unit_test(as_many_take_at_once_as_there_are_slots),
        cmocka_unit_test(waiters_are_served_in_the_order_they_came),
        cmocka_unit_test(a_cancelled_waiter_leaves_the_line),
        cmocka_unit_test(a_cancel_set_before_the_take_still_takes_a_free_slot),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
