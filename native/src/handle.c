/*
 * handle.c - allocation of the opaque handles given to callers.
 *
 * Closed handles are not given back to malloc straight away: they sit in a
 * FIFO quarantine with a cleared magic, so that a caller using a handle it
 * already closed (a common bug in bindings) gets ENOTSOCK instead of
 * undefined behaviour, and so ASan builds stay clean when tests check that.
 * Shells are recycled only once the quarantine is long.
 */
#include "zl_internal.h"

#include <errno.h>
#include <stdlib.h>

#define ZL_QUARANTINE_MIN 4096

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static zl_handle_t *q_head, *q_tail;
static size_t q_len;

zl_handle_t *zl_handle_new(uint32_t kind)
{
    zl_handle_t *h = NULL;
    pthread_mutex_lock(&q_lock);
    if (q_len > ZL_QUARANTINE_MIN) {
        h = q_head;
        q_head = h->qnext;
        if (!q_head)
            q_tail = NULL;
        q_len--;
    }
    pthread_mutex_unlock(&q_lock);
    if (!h) {
        h = malloc(sizeof *h);
        if (!h)
            return NULL;
    }
    h->kind = kind;
    h->ctx = NULL;
    h->u.zsock = NULL;
    h->type = -1;
    h->ops = NULL;
    h->qnext = NULL;
    atomic_store(&h->magic, ZL_MAGIC_LIVE);
    return h;
}

void zl_handle_release(zl_handle_t *h)
{
    atomic_store(&h->magic, ZL_MAGIC_DEAD);
    h->u.zsock = NULL;
    pthread_mutex_lock(&q_lock);
    h->qnext = NULL;
    if (q_tail)
        q_tail->qnext = h;
    else
        q_head = h;
    q_tail = h;
    q_len++;
    pthread_mutex_unlock(&q_lock);
}

zl_handle_t *zl_handle_get(void *p, uint32_t kind)
{
    zl_handle_t *h = p;
    if (!h || atomic_load(&h->magic) != ZL_MAGIC_LIVE)
        return NULL;
    if (kind && h->kind != kind)
        return NULL;
    return h;
}

zl_handle_t *zl_sock_get(void *p)
{
    zl_handle_t *h = zl_handle_get(p, ZL_KIND_SOCKET);
    if (!h)
        zl_set_errno(ENOTSOCK);
    return h;
}
