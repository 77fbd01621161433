/*
 * ctx.c - the context wrapper around a libzmq context.
 *
 * libzmq's context only knows libzmq sockets; our STREAM sockets and STREAM
 * monitor handles live outside it, so the wrapper adds a shutdown flag they
 * observe, an eventfd that wakes their blocking calls, and a count of them
 * that term waits on (libzmq semantics: term returns once every socket is
 * closed).
 */
#include "zl_internal.h"
#include "stream_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static zl_ctx_t *get_ctx(void *p)
{
    zl_handle_t *h = zl_handle_get(p, ZL_KIND_CTX);
    return h ? h->u.ctx : NULL;
}

ZL_API void *zlink_ctx_new(void)
{
    zl_ctx_t *c = calloc(1, sizeof *c);
    if (!c) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    c->shutdown_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->shutdown_fd < 0) {
        zl_set_errno(errno);
        free(c);
        return NULL;
    }
    c->zctx = zmq_ctx_new();
    if (!c->zctx) {
        zl_zfail();
        close(c->shutdown_fd);
        free(c);
        return NULL;
    }
    /* zlink's documented default is 2 I/O threads, libzmq's is 1. The
     * threads start lazily, so the caller can still change this. */
    zmq_ctx_set(c->zctx, ZMQ_IO_THREADS, ZLINK_IO_THREADS_DFLT);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    zl_handle_t *h = zl_handle_new(ZL_KIND_CTX);
    if (!h) {
        zmq_ctx_term(c->zctx);
        close(c->shutdown_fd);
        free(c);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    h->u.ctx = c;
    h->ctx = c;
    c->handle = h;
    return h;
}

static void mark_shutdown(zl_ctx_t *c)
{
    if (!atomic_exchange(&c->shutdown, 1)) {
        uint64_t one = 1;
        ssize_t rc = write(c->shutdown_fd, &one, sizeof one);
        (void)rc; /* cannot fail short of a counter overflow */
    }
}

int zl_ctx_register(zl_ctx_t *c)
{
    pthread_mutex_lock(&c->lock);
    if (zl_ctx_is_shutdown(c)) {
        pthread_mutex_unlock(&c->lock);
        return zl_fail(ETERM);
    }
    c->nobjects++;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

void zl_ctx_unregister(zl_ctx_t *c)
{
    pthread_mutex_lock(&c->lock);
    if (--c->nobjects == 0)
        pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

ZL_API int zlink_ctx_shutdown(void *context)
{
    zl_ctx_t *c = get_ctx(context);
    if (!c)
        return zl_fail(EFAULT);
    mark_shutdown(c);
    if (zmq_ctx_shutdown(c->zctx) != 0)
        return zl_zfail();
    return 0;
}

ZL_API int zlink_ctx_term(void *context)
{
    zl_ctx_t *c = get_ctx(context);
    if (!c)
        return zl_fail(EFAULT);
    mark_shutdown(c);
    /* Release blocked libzmq calls first so that threads owning both kinds
     * of socket can get out and close their STREAM sockets too. */
    zmq_ctx_shutdown(c->zctx);
    pthread_mutex_lock(&c->lock);
    while (c->nobjects > 0)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    int rc;
    while ((rc = zmq_ctx_term(c->zctx)) != 0 && zmq_errno() == EINTR)
        ;
    if (rc != 0)
        return zl_zfail();
    zl_relay_join_all(c);
    zl_handle_release(c->handle);
    close(c->shutdown_fd);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return 0;
}

ZL_API int zlink_ctx_set(void *context, int option, int optval)
{
    zl_ctx_t *c = get_ctx(context);
    if (!c)
        return zl_fail(EFAULT);
    if (option == ZLINK_IO_BACKEND) {
        /* for STREAM sockets made from now on */
        if (optval < ZLINK_IO_BACKEND_DEFAULT || optval > ZLINK_IO_BACKEND_IO_URING)
            return zl_fail(EINVAL);
        c->io_backend = optval;
        return 0;
    }
    if (zmq_ctx_set(c->zctx, option, optval) != 0)
        return zl_zfail();
    return 0;
}

ZL_API int zlink_ctx_get(void *context, int option)
{
    zl_ctx_t *c = get_ctx(context);
    if (!c)
        return zl_fail(EFAULT);
    if (option == ZLINK_IO_BACKEND)
        return zl_io_backend(c->io_backend); /* what a new socket runs on */
    int rc = zmq_ctx_get(c->zctx, option);
    if (rc < 0)
        return zl_zfail();
    return rc;
}
