/*
 * stream_loop.h - the event loop under a STREAM socket: one epoll set, a
 * wake-up eventfd, a timer heap backed by a timerfd (so a caller sleeping on
 * the epoll descriptor, ZLINK_FD, wakes for due timers), and the pump that
 * waits on the set and hands each event to the socket's state machine.
 * Everything runs in the calling thread, inside calls made on the socket.
 *
 * Two backends tell the pump which descriptors are ready (chosen per socket
 * when it is made, see zl_io_backend): level-triggered epoll, or io_uring
 * one-shot polls (stream_uring.c), whose completions the pump reads from
 * shared memory without a system call; with io_uring the ring's descriptor
 * sits in the epoll set, so ZLINK_FD works the same for both.
 */
#ifndef ZL_STREAM_LOOP_H
#define ZL_STREAM_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

#define ZL_EV_BATCH 256

/* What an epoll event refers to, in the top byte of epoll_data.u64; the
 * next 24 bits hold the slot serial so events for a recycled slot can be
 * told apart, the low 32 bits the slot index. */
enum { ZT_CONN = 1, ZT_LISTENER, ZT_EVFD, ZT_TIMERFD, ZT_SHUTDOWN, ZT_RING };

/* the I/O backends (ZLINK_IO_BACKEND_* in zlink.h has the same numbers) */
enum { ZL_BACKEND_EPOLL = 1, ZL_BACKEND_URING = 2 };

struct zl_uring;
#define ZL_TAG(t, serial, idx)                                                 \
    (((uint64_t)(t) << 56) | ((uint64_t)((serial)&0xffffffu) << 32) |          \
     (uint64_t)(uint32_t)(idx))

/* A timer names its owner by kind and index only; the owner keeps the id
 * and a cancelled timer is recognised by that id no longer matching. */
typedef struct zl_timer {
    uint64_t due;
    uint32_t id;
    uint32_t kind;
    uint32_t idx;
} zl_timer_t;

typedef struct zl_loop {
    int epfd, evfd, tfd;
    struct zl_uring *uring; /* NULL: the epoll backend */
    int evfd_signalled;
    uint64_t tfd_armed; /* absolute ms the timerfd is set to, 0 = idle */
    zl_timer_t *heap;   /* min-heap on due */
    uint32_t heap_n, heap_cap;
    uint32_t timer_seq;
    struct epoll_event evs[ZL_EV_BATCH];
} zl_loop_t;

/* wall-clock ms (zl_now_ms, the monotonic one, is in zl_internal.h) */
uint64_t zl_wall_ms(void);

/* The epoll set with the eventfd, the timerfd and the context's shutdown
 * descriptor in it, plus the io_uring ring when backend is
 * ZL_BACKEND_URING. Returns 0, or -1 with errno set (nothing left open). */
int zl_loop_init(zl_loop_t *l, int shutdown_fd, int backend);
void zl_loop_close(zl_loop_t *l);
int zl_loop_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag);
void zl_loop_del(zl_loop_t *l, int fd);

/* Makes the epoll descriptor readable (once; the pump clears it when the
 * socket has nothing left to deliver). */
void zl_loop_wake(zl_loop_t *l);

/* Returns the timer's id (never 0), or 0 when out of memory. */
uint32_t zl_loop_timer_add(zl_loop_t *l, uint64_t due, uint32_t kind,
                           uint32_t idx);

/* stream_epoll.c: the epoll backend, and the set every socket has (with
 * io_uring the ring's descriptor and the loop's own descriptors sit in it,
 * so ZLINK_FD works the same for both). zl_epoll_wait fills l->evs and
 * returns the count (0 when interrupted). */
int zl_epoll_open(void);
int zl_epoll_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag);
void zl_epoll_del(zl_loop_t *l, int fd);
int zl_epoll_wait(zl_loop_t *l, int timeout_ms);

/* stream_uring.c: the backend a new socket of a context uses, from the
 * context's ZLINK_IO_BACKEND (0: not set), else the environment variable
 * ZLINK_IO_BACKEND (epoll or io_uring), else the default; io_uring falls
 * back to epoll, with one line on stderr per process, where the kernel
 * refuses it. */
int zl_io_backend(int ctx_choice);
/* 1 when this process may use io_uring (probed once) */
int zl_uring_available(void);

/* stream_uring.c: the io_uring backend of the loop above */
int zl_uring_open(zl_loop_t *l);
void zl_uring_close(zl_loop_t *l);
int zl_uring_ctl(zl_loop_t *l, int op, int fd, uint32_t events, uint64_t tag);
/* 1 when fd was the ring's (and is removed now), 0 when it is not */
int zl_uring_del(zl_loop_t *l, int fd);
/* Submits what is queued, then copies up to max completed polls into evs
 * (tag and events, as epoll gives them). Returns the count. */
int zl_uring_reap(zl_loop_t *l, struct epoll_event *evs, int max);

#endif
