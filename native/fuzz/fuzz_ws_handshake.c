/*
 * fuzz_ws_handshake.c - libFuzzer target: the HTTP/1.1 upgrade of ws://, both
 * parsers. The first input byte picks the side, the rest is what the peer says:
 *
 *   even  a raw TCP client writes the bytes to a ws:// server as its request
 *         head (and whatever follows it), then ends its side. The server must
 *         answer with an HTTP status line or nothing, and end that TCP
 *         connection unless it upgraded; an upgrade (the fuzzer found a valid
 *         request) must come with exactly one 0x01 and, after the client's
 *         end, its 0x00.
 *   odd   a raw TCP server reads a ws:// client's request and answers with the
 *         bytes, then closes. The client must never report the connection up
 *         (the answer cannot carry the Accept value of a key the fuzzer never
 *         saw), and a connect that gave up reports its 0x00 once.
 *
 * No crash, hang or leak on either side (ASan + UBSan, the build's).
 */
#include "fuzz_common.h"
#include "ws_testutil.h"

#include <errno.h>
#include <poll.h>

static void *srv;
static uint16_t sport;
static int lfd = -1;
static uint16_t lport;

/* reads fd (non-blocking) until it ends, stepping p meanwhile; returns what
 * was read, at most cap bytes kept */
static size_t read_to_end(int fd, tu_pair_t *p, char *buf, size_t cap)
{
    size_t kept = 0;
    long long end = fuzz_now_ms() + 10000;
    for (;;) {
        FUZZ_ASSERT(fuzz_now_ms() < end);
        char tmp[4096];
        ssize_t n = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return kept;
        if (n > 0) {
            size_t k = (size_t)n < cap - kept ? (size_t)n : cap - kept;
            memcpy(buf + kept, tmp, k);
            kept += k;
            continue;
        }
        FUZZ_ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
        tu_step(p);
    }
}

static void as_client(const uint8_t *data, size_t size)
{
    if (!srv)
        srv = fuzz_stream_bind("ws://127.0.0.1:*/f", &sport);
    int fd = fuzz_tcp_connect(sport);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    if (size)
        send(fd, data, size, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    char answer[64];
    size_t got = read_to_end(fd, &p, answer, sizeof answer);
    FUZZ_ASSERT(got == 0 || (got >= 9 && memcmp(answer, "HTTP/1.1 ", 9) == 0));
    if (got >= 12 && memcmp(answer + 9, "101", 3) == 0)
        FUZZ_ASSERT(TU_UNTIL(&p, p.sa.ups == 1 && p.sa.downs == 1, 5000));
    else
        FUZZ_ASSERT(p.sa.ups == 0 && p.sa.downs == 0);
    close(fd);
}

static void as_server(const uint8_t *data, size_t size)
{
    if (lfd < 0) {
        lfd = tu_raw_listen(&lport);
        fuzz_allow_port(lport);
    }
    void *cli = fuzz_socket(ZLINK_STREAM);
    int zero = 0, ivl = 1000000, hs = 2000;
    zlink_setsockopt(cli, ZLINK_LINGER, &zero, sizeof zero);
    zlink_setsockopt(cli, ZLINK_RECONNECT_IVL, &ivl, sizeof ivl); /* one attempt here */
    zlink_setsockopt(cli, ZLINK_HANDSHAKE_IVL, &hs, sizeof hs);
    char cep[64];
    snprintf(cep, sizeof cep, "ws://127.0.0.1:%u/f", lport);
    FUZZ_ASSERT(zlink_connect(cli, cep) == 0);
    tu_pair_t p = {cli, NULL, {0}, {0}};
    struct pollfd pf = {lfd, POLLIN, 0};
    long long end = fuzz_now_ms() + 10000;
    while (poll(&pf, 1, 0) == 0) {
        FUZZ_ASSERT(fuzz_now_ms() < end);
        tu_step(&p);
    }
    int fd = accept(lfd, NULL, NULL);
    FUZZ_ASSERT(fd >= 0);
    char head[8192];
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    tu_wait_readable(fd, &p);
    FUZZ_ASSERT(tu_read_head(fd, head, sizeof head) > 0);
    FUZZ_ASSERT(strncmp(head, "GET /f HTTP/1.1\r\n", 17) == 0);
    if (size)
        send(fd, data, size, MSG_NOSIGNAL);
    close(fd);
    /* the attempt ends one way or the other; it never comes up */
    TU_UNTIL(&p, p.sa.downs > 0, 300);
    FUZZ_ASSERT(p.sa.ups == 0 && p.sa.downs <= 1);
    zlink_close(cli);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        as_server(data + 1, size - 1);
    else
        as_client(data + 1, size - 1);
    return 0;
}
