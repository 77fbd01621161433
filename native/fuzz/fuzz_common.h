/*
 * fuzz_common.h - what the libFuzzer targets share: the network sandbox
 * (fuzz_sandbox.c) and the helpers that set up a STREAM socket with one
 * connection from a plain TCP peer (fuzz_common.c).
 *
 * Every target links libzlink's sources statically with the same
 * sanitizers, so a bad input aborts with a report and a reproducer file.
 */
#ifndef ZLINK_FUZZ_COMMON_H
#define ZLINK_FUZZ_COMMON_H

#include "zlink.h"
/* tu_be32 / tu_put_be32: the tests' routing-id helpers */
#include "testutil.h"

#include <stddef.h>
#include <stdint.h>

/* Aborts with a message: a broken contract is a finding like a crash. */
#define FUZZ_ASSERT(cond)                                                      \
    do {                                                                       \
        if (!(cond))                                                           \
            fuzz_fail(__FILE__, __LINE__, #cond);                              \
    } while (0)

void fuzz_fail(const char *file, int line, const char *what);

/* ---- sandbox (fuzz_sandbox.c) -------------------------------------------
 * The targets hand arbitrary endpoints to the library and to libzmq, on a
 * machine shared with other test runs, so the process's bind(), connect()
 * and getaddrinfo() are replaced: a TCP bind always gets an ephemeral port
 * (never takes a fixed port someone else uses; asking for a port this
 * process holds fails with EADDRINUSE as it would unfenced), a TCP connect succeeds only
 * to a loopback port the harness registered (others fail at once with
 * ECONNREFUSED: no packet leaves the machine, no other test's server sees
 * a connection) and names other than "localhost" do not resolve (no DNS).
 * The parsers see the input unchanged; only the system calls are fenced. */
void fuzz_allow_port(uint16_t port);

/* ---- helpers (fuzz_common.c) -------------------------------------------- */

/* one context per process; sockets made in it are closed by the targets */
void *fuzz_ctx(void);

/* zlink_socket in that context. libzmq reaps closed sockets in a thread of
 * its own, so at its socket limit this waits for it a little. */
void *fuzz_socket(int type);

/* A STREAM socket bound to 127.0.0.1 with its port registered, LINGER 0,
 * RAW framing (the targets using it check byte streams; fuzz_stream_recv
 * makes its own sockets, one per framing). */
void *fuzz_stream_listener(uint16_t *port);

/* The same bound to endpoint, whose port is the wildcard (tcp or ws, a ws
 * path allowed). */
void *fuzz_stream_bind(const char *endpoint, uint16_t *port);

/* A blocking plain TCP socket connected to 127.0.0.1:port. */
int fuzz_tcp_connect(uint16_t port);

/* The same with SO_RCVBUF set to rcvbuf before the connect (the window the
 * handshake announces follows it); rcvbuf <= 0 keeps the default. */
int fuzz_tcp_connect_rcvbuf(uint16_t port, int rcvbuf);

/* CLOCK_MONOTONIC in milliseconds, for the targets' deadlines. */
long long fuzz_now_ms(void);

/* Receives from a STREAM socket until a connection event arrives whose
 * ZLINK_STREAM_EVENT is `byte` (0x01 connect, 0x00 disconnect; any
 * framing); data payloads met on the way are discarded. Returns that
 * connection's routing id. Aborts after 10 s. */
uint32_t fuzz_stream_wait_event(void *s, uint8_t byte);

/* Like fuzz_stream_wait_event for the 0x00 of the connection id. */
void fuzz_stream_wait_closed(void *s, uint32_t id);

/* Number of open descriptors of this process, pipes excepted (see
 * fuzz_common.c). */
int fuzz_open_fds(void);

/* Number of descriptors the epoll set epfd watches (from /proc). */
int fuzz_epoll_watches(int epfd);

/* Lists them on stderr (number, what it is, and a TCP socket's addresses
 * from /proc/net), for a report of leaked descriptors. */
void fuzz_dump_fds(void);

/* Reads the fuzz input as a sequence of fields; reads past the end give
 * zeros, so every input is a valid program. */
typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n;
} fuzz_reader_t;

static inline uint8_t fuzz_u8(fuzz_reader_t *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static inline uint16_t fuzz_u16(fuzz_reader_t *r)
{
    uint16_t hi = fuzz_u8(r);
    return (uint16_t)(hi << 8 | fuzz_u8(r));
}

/* Up to want bytes of the input (fewer at its end); *got says how many. */
static inline const uint8_t *fuzz_bytes(fuzz_reader_t *r, size_t want,
                                        size_t *got)
{
    const uint8_t *p = r->p;
    *got = want < r->n ? want : r->n;
    r->p += *got;
    r->n -= *got;
    return p;
}

#endif
