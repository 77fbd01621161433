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
 * the STREAM socket first, bit 5 makes the length len * 4. Whatever an
 * input binds or connects is undone at its end, so the sockets live for
 * the whole process without growing; the descriptor count must come back
 * near the start's.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_UNDO 512

typedef struct undo {
    void *s;
    int is_bind;
    char *ep;
} undo_t;

static void *stream, *pair, *listener;
static char listener_ep[64];
static int fd_baseline;

static void setup(void)
{
    uint16_t port;
    listener = fuzz_stream_listener(&port);
    snprintf(listener_ep, sizeof listener_ep, "tcp://127.0.0.1:%u", port);
    stream = zlink_socket(fuzz_ctx(), ZLINK_STREAM);
    pair = zlink_socket(fuzz_ctx(), ZLINK_PAIR);
    FUZZ_ASSERT(stream && pair);
    int zero = 0;
    FUZZ_ASSERT(zlink_setsockopt(stream, ZLINK_LINGER, &zero, sizeof zero) == 0);
    FUZZ_ASSERT(zlink_setsockopt(pair, ZLINK_LINGER, &zero, sizeof zero) == 0);
    fd_baseline = fuzz_open_fds();
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!stream)
        setup();
    fuzz_reader_t r = {data, size};
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
        free(ep);
    }
    /* undo in reverse; ENOENT when the input undid it already */
    while (nu--) {
        undo_t *u = &undo[nu];
        int rc = u->is_bind ? zlink_unbind(u->s, u->ep) : zlink_disconnect(u->s, u->ep);
        FUZZ_ASSERT(rc == 0 || zlink_errno() == ENOENT);
        free(u->ep);
    }
    /* the listener closes what connected to it once it sees the EOF */
    drain(listener);
    drain(stream);
    /* STREAM closes at once; libzmq closes its listeners and connecters in
     * its I/O threads, a few hundred of them after a long input. So over
     * the bound, give them time: a leak stays, lag goes. */
    int fds = fuzz_open_fds();
    for (int i = 0; fds > fd_baseline + 64 && i < 1000; i++) {
        usleep(10000);
        fds = fuzz_open_fds();
    }
    if (fds > fd_baseline + 64) {
        fprintf(stderr, "fuzz_endpoint: %d descriptors open 10 s after the input, %d at the start\n",
                fds, fd_baseline);
        abort();
    }
    return 0;
}
