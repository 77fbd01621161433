/*
 * fuzz_endpoint.c - libFuzzer target: arbitrary endpoint strings to
 * zlink_bind / zlink_connect / zlink_unbind / zlink_disconnect on a STREAM
 * socket (the library's own parser and engine) and a PAIR socket (the
 * port check, then libzmq).
 *
 * Input: records [op][len][len bytes of endpoint]. op bits 0-1 pick the
 * call, bit 2 the socket (PAIR when set), bit 3 replaces the bytes by a
 * known-good endpoint (the socket's LAST_ENDPOINT, or the harness's own
 * listener so that a connect really connects), bit 4 flips ZLINK_IPV6 on
 * the STREAM socket first, bit 5 makes the length len * 4.
 *
 * The STREAM socket lives for the whole process: whatever an input binds
 * or connects on it is undone at the input's end, after which it must be
 * back to its start exactly (no peer, its epoll set watching what it did
 * at the start). The PAIR socket is made for each input and closed at its
 * end, and the process's descriptors must then come back to the start's
 * count. A long-lived PAIR would report libzmq's own leak instead of ours:
 * libzmq 4.3.4 keeps connections open for good when one endpoint is
 * connected and disconnected repeatedly, until the socket closes (see
 * native/README.md, "libzmq 4.3.4 behaviour the fuzzing met").
 */
#include "fuzz_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_UNDO 512

typedef struct undo {
    void *s;
    int is_bind;
    char *ep;
} undo_t;

/* What the current input did, printed when its descriptors do not come
 * back (the cause may depend on the STREAM socket's earlier state, so the
 * reproducer alone may pass). */
#define MAX_LOG 1024
static struct {
    char what[24];
    int rc, err;
    char ep[72];
} oplog[MAX_LOG];
static int nlog;

static void *stream, *pair, *listener, *warm;

static void log_op(const char *what, void *s, const char *ep, int rc)
{
    if (nlog == MAX_LOG)
        return;
    snprintf(oplog[nlog].what, sizeof oplog[nlog].what, "%s %s", what,
             s == pair ? "PAIR" : "STREAM");
    oplog[nlog].rc = rc;
    oplog[nlog].err = rc ? zlink_errno() : 0;
    snprintf(oplog[nlog].ep, sizeof oplog[nlog].ep, "%s", ep);
    nlog++;
}

static int stream_epfd, stream_watches;

static void print_log(void)
{
    for (int i = 0; i < nlog; i++)
        fprintf(stderr, "  %-16s rc %d errno %d  %s\n", oplog[i].what, oplog[i].rc,
                oplog[i].err, oplog[i].ep);
}
static char listener_ep[64];
static int fd_baseline;

static void setup(void)
{
    uint16_t port;
    listener = fuzz_stream_listener(&port);
    snprintf(listener_ep, sizeof listener_ep, "tcp://127.0.0.1:%u", port);
    stream = zlink_socket(fuzz_ctx(), ZLINK_STREAM);
    FUZZ_ASSERT(stream);
    int zero = 0;
    FUZZ_ASSERT(zlink_setsockopt(stream, ZLINK_LINGER, &zero, sizeof zero) == 0);
    /* libzmq starts its threads (and their descriptors) with its first
     * socket: one kept open for the process's life counts them in */
    warm = fuzz_socket(ZLINK_PAIR);
    /* the listener's first read allocates its scratch buffer for good: do
     * it here, so that no input looks like a leak to libFuzzer (whose leak
     * check runs the input again under LSan, whose pipes the descriptor
     * count below would see) */
    int fd = fuzz_tcp_connect(port);
    FUZZ_ASSERT(send(fd, "warm", 4, MSG_NOSIGNAL) == 4);
    fuzz_stream_wait_event(listener, 0x01);
    unsigned char b[16];
    unsigned char idb[4];
    long long deadline = fuzz_now_ms() + 10000;
    while (zlink_recv(listener, idb, sizeof idb, ZLINK_DONTWAIT) != 4)
        FUZZ_ASSERT(zlink_errno() == EAGAIN && fuzz_now_ms() < deadline);
    FUZZ_ASSERT(zlink_recv(listener, b, sizeof b, 0) == 4);
    close(fd);
    fuzz_stream_wait_event(listener, 0x00);
    fd_baseline = fuzz_open_fds();
    size_t len = sizeof stream_epfd;
    FUZZ_ASSERT(zlink_getsockopt(stream, ZLINK_FD, &stream_epfd, &len) == 0);
    stream_watches = fuzz_epoll_watches(stream_epfd);
    FUZZ_ASSERT(stream_watches > 0);
}

/* libzmq binds ipc:// paths in the file system (and unlinks what is there
 * first): never hand it one. The STREAM socket refuses them itself. */
static int touches_files(const char *ep)
{
    return strncmp(ep, "ipc://", 6) == 0;
}

static void remember(undo_t *u, int *nu, void *s, int is_bind, const char *ep)
{
    if (*nu == MAX_UNDO)
        return;
    u[*nu].s = s;
    u[*nu].is_bind = is_bind;
    u[*nu].ep = strdup(ep);
    FUZZ_ASSERT(u[*nu].ep);
    (*nu)++;
}

static void last_endpoint(void *s, char *buf, size_t cap)
{
    size_t len = cap;
    FUZZ_ASSERT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, buf, &len) == 0);
    FUZZ_ASSERT(len >= 1 && len <= cap && buf[len - 1] == '\0');
}

static void drain(void *s)
{
    unsigned char buf[256];
    while (zlink_recv(s, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
        ;
    FUZZ_ASSERT(zlink_errno() == EAGAIN);
}

static void report_and_abort(void)
{
    fprintf(stderr, "fuzz_endpoint: STREAM peers %d, listener peers %d; descriptors:\n",
            zlink_socket_peer_count(stream), zlink_socket_peer_count(listener));
    fuzz_dump_fds();
    fprintf(stderr, "fuzz_endpoint: the input's calls:\n");
    print_log();
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!stream)
        setup();
    pair = fuzz_socket(ZLINK_PAIR);
    int zero = 0;
    FUZZ_ASSERT(zlink_setsockopt(pair, ZLINK_LINGER, &zero, sizeof zero) == 0);
    fuzz_reader_t r = {data, size};
    nlog = 0;
    undo_t undo[MAX_UNDO];
    int nu = 0;
    while (r.n) {
        uint8_t op = fuzz_u8(&r);
        size_t want = fuzz_u8(&r);
        if (op & 0x20)
            want *= 4;
        void *s = (op & 0x04) ? pair : stream;
        int call = op & 0x03; /* bind, connect, unbind, disconnect */
        char *ep;
        if (op & 0x08) {
            char known[256];
            if (want & 1)
                snprintf(known, sizeof known, "%s", listener_ep);
            else
                last_endpoint(s, known, sizeof known);
            ep = strdup(known);
        } else {
            size_t got;
            const uint8_t *b = fuzz_bytes(&r, want, &got);
            /* exactly as long as the input says: ASan sees any overread */
            ep = malloc(got + 1);
            FUZZ_ASSERT(ep);
            memcpy(ep, b, got);
            ep[got] = '\0';
        }
        FUZZ_ASSERT(ep);
        if (op & 0x10) {
            int v6 = 0;
            size_t len = sizeof v6;
            FUZZ_ASSERT(zlink_getsockopt(stream, ZLINK_IPV6, &v6, &len) == 0);
            v6 = !v6;
            FUZZ_ASSERT(zlink_setsockopt(stream, ZLINK_IPV6, &v6, sizeof v6) == 0);
        }
        if (s == pair && touches_files(ep)) {
            free(ep);
            continue;
        }
        int rc;
        switch (call) {
        case 0:
            rc = zlink_bind(s, ep);
            if (rc == 0) {
                char real[256];
                last_endpoint(s, real, sizeof real);
                remember(undo, &nu, s, 1, real);
            }
            break;
        case 1:
            rc = zlink_connect(s, ep);
            if (rc == 0)
                remember(undo, &nu, s, 0, ep);
            break;
        case 2:
            rc = zlink_unbind(s, ep);
            break;
        default:
            rc = zlink_disconnect(s, ep);
            break;
        }
        FUZZ_ASSERT(rc == 0 || (rc == -1 && zlink_errno() != 0));
        static const char *names[] = {"bind", "connect", "unbind", "disconnect"};
        log_op(names[call], s, ep, rc);
        free(ep);
    }
    /* undo in reverse; ENOENT when the input undid it already */
    for (int i = nu - 1; i >= 0; i--) {
        undo_t *u = &undo[i];
        int rc = u->is_bind ? zlink_unbind(u->s, u->ep) : zlink_disconnect(u->s, u->ep);
        log_op(u->is_bind ? "undo unbind" : "undo disconnect", u->s, u->ep, rc);
        FUZZ_ASSERT(rc == 0 || zlink_errno() == ENOENT);
    }
    /* the listener closes what connected to it once it sees the EOF */
    drain(listener);
    drain(stream);
    /* The STREAM engine is synchronous and exact: with the input's
     * endpoints undone, the socket has no peer and its epoll set watches
     * just what it did at the start (every listener and connection of the
     * socket is in that set). */
    if (zlink_socket_peer_count(stream) != 0 || fuzz_epoll_watches(stream_epfd) != stream_watches) {
        fprintf(stderr, "fuzz_endpoint: STREAM socket kept %d peers, its epoll set %d descriptors (%d at the start)\n",
                zlink_socket_peer_count(stream), fuzz_epoll_watches(stream_epfd), stream_watches);
        report_and_abort();
    }
    /* libzmq closes the PAIR's listeners and connections in its own
     * threads: give them time */
    FUZZ_ASSERT(zlink_close(pair) == 0);
    /* libzmq keeps a closed socket alive while it has an inproc connect
     * pending (nothing bound the name), until some socket binds that name:
     * do that, so the input's sockets really go */
    for (int i = 0; i < nu; i++) {
        if (undo[i].s == pair && !undo[i].is_bind && strncmp(undo[i].ep, "inproc://", 9) == 0 &&
            zlink_bind(warm, undo[i].ep) == 0)
            FUZZ_ASSERT(zlink_unbind(warm, undo[i].ep) == 0);
        free(undo[i].ep);
    }
    int fds = fuzz_open_fds();
    for (int i = 0; fds > fd_baseline && i < 1000; i++) {
        /* the pipes that bind made end in warm's own thread, in its calls */
        int ev;
        size_t evlen = sizeof ev;
        FUZZ_ASSERT(zlink_getsockopt(warm, ZLINK_EVENTS, &ev, &evlen) == 0);
        usleep(10000);
        drain(listener);
        fds = fuzz_open_fds();
    }
    if (fds > fd_baseline) {
        fprintf(stderr, "fuzz_endpoint: %d descriptors open 10 s after the input, %d at the start\n",
                fds, fd_baseline);
        report_and_abort();
    }
    return 0;
}
