/*
 * fuzz_zmp_ws.c - libFuzzer target: the input of a ws:// connection to a
 * PAIR socket (ZMP over NetZlink's WebSocket transport, src/zmp_transport.c)
 * after a valid upgrade. A raw TCP peer upgrades, then writes the input as
 * it is (masked frames, unmasked ones, control frames, garbage) and ends its
 * side. Checked: the server ends the connection within 10 s (the peer's end
 * or a protocol failure; never a hang), the PAIR never delivers more bytes
 * than the input holds, and no crash, leak or undefined behaviour in the
 * frame decoder or the engine's use of it.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <string.h>

static void *srv;
static uint16_t port;

static const char request[] =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\n\r\n";

/* what the PAIR delivered, drained without waiting */
static long long drain(void)
{
    static unsigned char buf[65536];
    long long total = 0;
    int n;
    while ((n = zlink_recv(srv, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0)
        total += n;
    FUZZ_ASSERT(zlink_errno() == EAGAIN);
    return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv) {
        srv = fuzz_socket(ZLINK_PAIR);
        int zero = 0;
        FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_LINGER, &zero, sizeof zero) == 0);
        /* a bound on bodies: without MAXMSGSIZE a ZMP header alone makes the
         * decoder allocate the body it announces (up to 4 GiB), as libzmq and
         * zlink do (docs/zlink-abi.md), which the fuzzer's malloc limit reports */
        int64_t max = 1 << 20;
        FUZZ_ASSERT(zlink_setsockopt(srv, ZLINK_MAXMSGSIZE, &max, sizeof max) == 0);
        FUZZ_ASSERT(zlink_bind(srv, "ws://127.0.0.1:*") == 0);
        char ep[256];
        size_t len = sizeof ep;
        FUZZ_ASSERT(zlink_getsockopt(srv, ZLINK_LAST_ENDPOINT, ep, &len) == 0);
        const char *colon = strrchr(ep, ':');
        FUZZ_ASSERT(colon);
        port = (uint16_t)atoi(colon + 1);
        fuzz_allow_port(port);
    }
    int fd = fuzz_tcp_connect(port);
    FUZZ_ASSERT(send(fd, request, sizeof request - 1, MSG_NOSIGNAL) ==
                (ssize_t)(sizeof request - 1));
    /* the 101 head, byte by byte (the server's greeting frames follow it); libFuzzer's timeout
       alarm (SIGALRM) can interrupt a wait: EINTR is retried */
    char head[1024];
    size_t have = 0;
    while (have < 4 || memcmp(head + have - 4, "\r\n\r\n", 4) != 0) {
        FUZZ_ASSERT(have < sizeof head);
        ssize_t got;
        do
            got = recv(fd, head + have, 1, 0);
        while (got < 0 && errno == EINTR);
        FUZZ_ASSERT(got == 1);
        have++;
    }
    FUZZ_ASSERT(strncmp(head, "HTTP/1.1 101", 12) == 0);
    if (size)
        send(fd, data, size, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    long long delivered = 0, end = fuzz_now_ms() + 10000;
    for (;;) {
        delivered += drain();
        FUZZ_ASSERT(fuzz_now_ms() < end);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5) <= 0)
            continue;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break; /* the server ended the connection */
    }
    delivered += drain();
    FUZZ_ASSERT(delivered <= (long long)size);
    close(fd);
    return 0;
}
