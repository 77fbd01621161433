/*
 * fuzz_ws_frames.c - libFuzzer target: a ws:// connection's input after the
 * upgrade. A raw TCP peer does a valid handshake with a ws:// STREAM
 * socket, then writes the input as it is (frames or garbage); the STREAM
 * socket (RAW framing) receives until the connection ends or the bytes run
 * out. Checked: the connect event first, the disconnect event at most
 * once, no more payload bytes than the input holds, no crash, hang or
 * leak.
 */
#include "fuzz_common.h"
#include "ws_testutil.h"

#include <errno.h>

static void *srv;
static uint16_t port;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv)
        srv = fuzz_stream_bind("ws://127.0.0.1:*", &port);
    int fd = fuzz_tcp_connect(port);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    tu_ws_client_handshake(fd, "/", &p);
    FUZZ_ASSERT(TU_UNTIL(&p, p.sa.ups == 1, 5000));
    if (size)
        send(fd, data, size, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    long long end = fuzz_now_ms() + 10000;
    while (p.sa.downs == 0) {
        FUZZ_ASSERT(fuzz_now_ms() < end);
        tu_step(&p);
    }
    FUZZ_ASSERT(p.sa.downs == 1 && p.sa.ups == 1 && p.sa.bytes <= (long long)size);
    close(fd);
    return 0;
}
