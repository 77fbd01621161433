/*
 * stream_epoll.c - the epoll backend of the STREAM event loop: level-
 * triggered interest per descriptor, tagged with what it refers to (ZL_TAG),
 * and one wait that fills the loop's event batch. The set also carries the
 * loop's own descriptors (eventfd, timerfd, the context's shutdown
 * descriptor) and, with the io_uring backend (stream_uring.c), the ring, so
 * a caller sleeping on ZLINK_FD wakes the same way with either backend.
 */
#include "stream_loop.h"

#include <stddef.h>
#include <sys/epoll.h>

int zl_epoll_open(void)
{
    return epoll_create1(EPOLL_CLOEXEC);
}

int zl_epoll_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = tag;
    return epoll_ctl(l->epfd, op, fd, &ev);
}

void zl_epoll_del(zl_loop_t *l, int fd)
{
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int zl_epoll_wait(zl_loop_t *l, int timeout_ms)
{
    int n = epoll_wait(l->epfd, l->evs, ZL_EV_BATCH, timeout_ms);
    return n < 0 ? 0 : n; /* EINTR: an empty batch */
}
