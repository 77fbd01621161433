/*
 * epoll_common.h - what the plain-epoll benchmark programs (epoll_echo.c,
 * limit_echo.c) share: the clock, the descriptor limit, a per-connection
 * output queue used only when the kernel's send buffer is full, and the
 * one-thread level-triggered echo server loop.
 */
#ifndef EPOLL_COMMON_H
#define EPOLL_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* bytes one recv() reads at most */
#define EC_RECV_BUF 65536

/* pending output of one connection */
typedef struct ec_outq {
    char *q;
    size_t len, cap;
} ec_outq_t;

/* monotonic clock in nanoseconds */
uint64_t ec_now_ns(void);

/* raise the soft descriptor limit to the hard one; returns the new soft limit */
long ec_raise_nofile(void);

/* TCP_NODELAY, and SO_SNDBUF/SO_RCVBUF when > 0 */
void ec_tune(int fd, int sndbuf, int rcvbuf);

/* epoll_ctl that exits with a message on failure (DEL failures are ignored) */
void ec_ctl(int ep, int op, int fd, uint32_t events, uint64_t data);

/*
 * Write what the kernel takes now and queue the rest, asking epoll for
 * EPOLLOUT (with EPOLLIN) while anything is queued. Returns 0, or the errno
 * of a failed send (the connection is then dead).
 */
int ec_write(int ep, int fd, uint64_t data, ec_outq_t *o, const void *buf, size_t len);

/* Send queued bytes on EPOLLOUT; back to EPOLLIN only once empty. Returns 0 or an errno. */
int ec_flush(int ep, int fd, uint64_t data, ec_outq_t *o);

/*
 * A non-blocking listening socket on host:port (port 0 = any); prints why
 * and returns -1 on failure. *bound gets the port actually bound.
 */
int ec_listen(const char *host, int port, int backlog, int *bound);

/*
 * The echo server: accepts on listen_fd and sends every byte back in order,
 * one thread, level-triggered epoll. Returns when stop_fd (>= 0) becomes
 * readable or reaches end-of-file, or when *stop becomes non-zero.
 */
int ec_echo_serve(int listen_fd, int stop_fd, int sndbuf, int rcvbuf, volatile int *stop);

/* count packets of the echo benchmarks, back to back: [u32 big-endian
 * size][size bytes 'x'] each (malloc'd; the caller frees them) */
unsigned char *ec_packets(int size, int count);

/* The RESULT line of an echo client's run: impl, its settings and the
 * packets echoed in the measured seconds. */
void ec_print_result(const char *impl, int ccu, int inflight, int size, int seconds,
                     uint64_t measured);

/*
 * main of the echo benchmarks (epoll_echo, stream_echo): raises the
 * descriptor limit, then "server PORT" runs server, "client HOST PORT CCU
 * INFLIGHT SIZE SECONDS" runs client; anything else prints the usage (2).
 */
int ec_echo_main(int argc, char **argv, int (*server)(int port),
                 int (*client)(const char *host, int port, int ccu, int inflight,
                               int size, int seconds));

#endif
