/*
 * limit_io.h - the I/O layers of limit_echo. The scenario logic of limit_echo.c (phases,
 * packets, counters, the COUNTS line) runs over one of two layers chosen by --io:
 *
 *   epoll  level-triggered epoll, recv()/send() on readiness (limit_echo.c; the c-epoll row)
 *   uring  io_uring without readiness polling (limit_uring.c; the c-uring row): one multishot
 *          recv per connection into a ring of provided buffers, writes staged in memory and
 *          sent as one send SQE per connection per loop pass, every pass's SQEs handed to the
 *          kernel by the same io_uring_submit_and_wait that waits for the next completions
 *
 * A client layer owns the connections' descriptors, numbered 0..ccu-1 by the client; it
 * reports what happened through the lc_* functions below, which limit_echo.c implements.
 */
#ifndef LIMIT_IO_H
#define LIMIT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct client;

/* the client's side of the layer: called from a layer's wait() */
void lc_connected(struct client *c, int idx, int err, uint64_t now); /* err 0: up */
void lc_data(struct client *c, int idx, const unsigned char *buf, size_t n);
void lc_closed(struct client *c, int idx, int err); /* err 0: end of stream */
void lc_drained(struct client *c, int idx);        /* output the socket held back went out */

typedef struct lio lio_t;

struct lio {
    const char *name;
    /* a new non-blocking socket for connection idx, connecting to addr; 0 or an errno */
    int (*connect)(lio_t *io, int idx, const struct sockaddr *addr, socklen_t len);
    /* sends len bytes (copied or handed to the kernel before it returns); 0 or an errno */
    int (*write)(lio_t *io, int idx, const void *buf, size_t len);
    /* whether output of idx is held back because its socket is full (lc_drained follows) */
    int (*held)(lio_t *io, int idx);
    /* closes connection idx (connecting or up); nothing more is reported for it */
    void (*close)(lio_t *io, int idx);
    /* waits up to ns for events and reports them; -1 on a failure it printed */
    int (*wait)(lio_t *io, struct client *c, uint64_t ns);
    void (*destroy)(lio_t *io);
};

/* --io uring: the client layer for ccu connections, or NULL with *why set (io_uring refused,
 * or limit_echo was built without liburing) */
lio_t *lio_uring_client(int ccu, int sndbuf, int rcvbuf, const char **why);

/* --io uring: the echo server on listen_fd until stop_fd ends or *stop is set; every
 * sample_rate-th read of a connection (its first included) is timed from its completion to the
 * echo being staged, through record(ctx, ns). Returns 0, 2 on a failure it printed, or 3 when
 * io_uring is refused (*why set; nothing was served). */
int lio_uring_serve(int listen_fd, int stop_fd, int sndbuf, int rcvbuf, int sample_rate, volatile int *stop,
                    void (*record)(void *ctx, uint64_t ns), void *ctx, const char **why);

#endif
