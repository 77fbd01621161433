/*
 * util.c - the utility functions zlink 1.3 exports beside its messaging API:
 * atomic counters, a microsecond stopwatch, sleep and a thread wrapper.
 * zlink's own tests and tools use them; they have no state of the library.
 */
#include "zl_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---- atomic counters --------------------------------------------------- */

ZL_API void *zlink_atomic_counter_new(void)
{
    atomic_int *c = malloc(sizeof *c);
    if (c)
        atomic_init(c, 0);
    return c;
}

ZL_API void zlink_atomic_counter_set(void *counter, int value)
{
    atomic_store((atomic_int *)counter, value);
}

ZL_API int zlink_atomic_counter_inc(void *counter)
{
    return atomic_fetch_add((atomic_int *)counter, 1);
}

ZL_API int zlink_atomic_counter_dec(void *counter)
{
    return atomic_fetch_sub((atomic_int *)counter, 1) - 1 != 0;
}

ZL_API int zlink_atomic_counter_value(void *counter)
{
    return atomic_load((atomic_int *)counter);
}

ZL_API void zlink_atomic_counter_destroy(void **counter_p)
{
    if (!counter_p)
        return;
    free(*counter_p);
    *counter_p = NULL;
}

/* ---- stopwatch ---------------------------------------------------------- */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

ZL_API void *zlink_stopwatch_start(void)
{
    uint64_t *w = malloc(sizeof *w);
    if (w)
        *w = now_us();
    return w;
}

ZL_API unsigned long zlink_stopwatch_intermediate(void *watch)
{
    return (unsigned long)(now_us() - *(uint64_t *)watch);
}

ZL_API unsigned long zlink_stopwatch_stop(void *watch)
{
    unsigned long us = zlink_stopwatch_intermediate(watch);
    free(watch);
    return us;
}

ZL_API void zlink_sleep(int seconds)
{
    if (seconds > 0)
        sleep((unsigned)seconds);
}

/* ---- threads ------------------------------------------------------------ */

typedef struct zl_app_thread {
    pthread_t tid;
    zlink_thread_fn *fn;
    void *arg;
} zl_app_thread_t;

static void *app_thread_main(void *p)
{
    zl_app_thread_t *t = p;
    pthread_setname_np(pthread_self(), "zlink-app");
    t->fn(t->arg);
    return NULL;
}

ZL_API void *zlink_threadstart(zlink_thread_fn *func, void *arg)
{
    if (!func)
        return NULL;
    zl_app_thread_t *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->fn = func;
    t->arg = arg;
    if (pthread_create(&t->tid, NULL, app_thread_main, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

ZL_API void zlink_threadclose(void *thread)
{
    zl_app_thread_t *t = thread;
    if (!t)
        return;
    pthread_join(t->tid, NULL);
    free(t);
}
