/* tnd_slots - how many skills a reviewer process runs at once.
 *
 * The reviewer serves several requests at once (agents.*.threads), and
 * each audit runs its skills up to one per CPU. Unbounded, 8 audits on
 * a 2-CPU host would run 16 sandboxes side by side: they gain no speed
 * by outnumbering the CPUs, and each holds its processes' memory while
 * it waits for one. The slots are a counting semaphore shared by the
 * process's threads: a skill takes one before it starts and gives it
 * back when it ends. Waiters are served in the order they came, so a
 * stream of short skills cannot starve a waiting one; a waiter whose
 * request is cancelled leaves the line. */
#ifndef TND_SLOTS_H
#define TND_SLOTS_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct tnd_slots tnd_slots;

/* n slots (at least 1). Never NULL (aborts when out of memory). */
tnd_slots *tnd_slots_new(size_t n);

/* Frees; sets *self_p to NULL; safe on NULL. No thread may hold or wait
 * for a slot. */
void tnd_slots_destroy(tnd_slots **self_p);

/* Take a slot, waiting behind those who asked first. 0 once taken; -1
 * when *cancel (may be NULL) became non-zero first: nothing is held. */
int tnd_slots_take(tnd_slots *self, const atomic_int *cancel);

/* Give back a slot tnd_slots_take gave. */
void tnd_slots_give(tnd_slots *self);

/* How many slots there are. */
size_t tnd_slots_size(const tnd_slots *self);

/* How many threads wait for one now. */
size_t tnd_slots_waiting(tnd_slots *self);

#endif
