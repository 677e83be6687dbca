/* Trees removed on a thread of their own (see trash.h). */
#include "common/trash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/xalloc.h"

struct tnd_trash {
    char *dir;
    int fd; /* dir, open */
    pthread_mutex_t mu;
    pthread_cond_t cond;  /* next or done moved, or stop was set */
    unsigned long next;   /* the name the next entry gets */
    unsigned long done;   /* entries below it are removed (or given up) */
    bool started, joined; /* the thread */
    atomic_int stop;      /* set: the thread stops, puts stay */
    pthread_t thread;
};

tnd_trash *tnd_trash_new(const char *dir)
{
    tnd_trash *t;
    int fd;

    if (mkdir(dir, 0700) < 0) {
        tnd_error_sys("cannot make the directory %s", dir);
        return NULL;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        tnd_error_sys("cannot open %s", dir);
        rmdir(dir);
        return NULL;
    }
    t = tnd_xcalloc(1, sizeof(*t));
    t->dir = tnd_xstrdup(dir);
    t->fd = fd;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cond, NULL);
    atomic_init(&t->stop, 0);
    return t;
}

const char *tnd_trash_path(const tnd_trash *self)
{
    return self->dir;
}

/* Remove entry n of t (its name is its number). */
static void remove_one(tnd_trash *t, unsigned long n)
{
    char name[32];

    snprintf(name, sizeof(name), "%lu", n);
    if (tnd_fs_rmtree_at_until(t->fd, name, &t->stop) < 0 &&
        !atomic_load(&t->stop))
        /* it stays in the trash, removed with it */
        tnd_log_warn("%s/%s: %s", t->dir, name, tnd_error_last());
}

static void *remover(void *arg)
{
    tnd_trash *t = arg;

    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->done == t->next && !atomic_load(&t->stop))
            pthread_cond_wait(&t->cond, &t->mu);
        if (atomic_load(&t->stop))
            break;
        unsigned long n = t->done;
        pthread_mutex_unlock(&t->mu);
        remove_one(t, n);
        pthread_mutex_lock(&t->mu);
        t->done = n + 1;
        pthread_cond_broadcast(&t->cond);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* The thread, with every signal blocked: they are the caller's main
 * thread's (a handler there wakes the loop's poll). Under t->mu. */
static int start(tnd_trash *t)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&t->thread, NULL, remover, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return tnd_error_set("cannot start a thread: %s", strerror(rc));
    t->started = true;
    return 0;
}

int tnd_trash_put_at(tnd_trash *self, int dirfd, const char *name)
{
    char to[32];
    int error = 0;

    pthread_mutex_lock(&self->mu);
    snprintf(to, sizeof(to), "%lu", self->next);
    if (renameat2(dirfd, name, self->fd, to, RENAME_NOREPLACE) < 0) {
        error = tnd_error_sys("cannot move %s into %s", name, self->dir);
    } else {
        self->next++;
        if (!self->started && !atomic_load(&self->stop) && start(self) < 0) {
            /* no thread: removed here, as without a trash */
            tnd_log_warn("%s; removing %s/%s here", tnd_error_last(), self->dir,
                         to);
            remove_one(self, self->next - 1);
            self->done = self->next;
        }
        pthread_cond_broadcast(&self->cond);
    }
    pthread_mutex_unlock(&self->mu);
    return error;
}

void tnd_trash_drain(tnd_trash *self)
{
    pthread_mutex_lock(&self->mu);
    while (self->started && self->done < self->next &&
           !atomic_load(&self->stop))
        pthread_cond_wait(&self->cond, &self->mu);
    pthread_mutex_unlock(&self->mu);
}

void tnd_trash_stop(tnd_trash *self)
{
    pthread_mutex_lock(&self->mu);
    atomic_store(&self->stop, 1);
    pthread_cond_broadcast(&self->cond);
    pthread_mutex_unlock(&self->mu);
    if (self->started && !self->joined) {
        pthread_join(self->thread, NULL);
        self->joined = true;
    }
}

void tnd_trash_destroy(tnd_trash **self_p)
{
    tnd_trash *t = self_p ? *self_p : NULL;

    if (!t)
        return;
    tnd_trash_stop(t);
    close(t->fd);
    if (tnd_fs_rmtree(t->dir) < 0)
        tnd_log_warn("%s", tnd_error_last());
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->mu);
    free(t->dir);
    free(t);
    *self_p = NULL;
}
