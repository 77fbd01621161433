/* test_stream_many.c - one STREAM socket connecting 3000 times to the same
 * endpoint of another STREAM socket; every connection echoes a payload of
 * its own; closing the client socket yields 3000 0x00 on the server. */
#include "testutil.h"

#include <errno.h>

#define N 3000

static unsigned char seen_srv[1 << 20], seen_cli[1 << 20];

int main(void)
{
    tu_raise_nofile();
    if (tu_nofile() < 2 * N + 100) {
        printf("skipped: RLIMIT_NOFILE %ld too small\n", tu_nofile());
        return 0;
    }
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    int backlog = 4096;
    CHECK(zlink_setsockopt(srv, ZLINK_BACKLOG, &backlog, sizeof backlog) == 0);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    for (int i = 0; i < N; i++)
        CHECK(zlink_connect(cli, ep) == 0);

    uint32_t *cids = calloc(N, sizeof *cids);
    int nsrv = 0, ncli = 0;
    unsigned char buf[256];
    uint32_t id;
    long long deadline = tu_now_ms() + 20000;
    while ((nsrv < N || ncli < N) && tu_now_ms() < deadline) {
        int n;
        while ((n = tu_stream_recv(srv, &id, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0) {
            CHECK(n == 1 && buf[0] == 1);
            CHECK(!seen_srv[id & 0xfffff]);
            seen_srv[id & 0xfffff] = 1;
            nsrv++;
        }
        while ((n = tu_stream_recv(cli, &id, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0) {
            CHECK(n == 1 && buf[0] == 1);
            CHECK(!seen_cli[id & 0xfffff]);
            seen_cli[id & 0xfffff] = 1;
            cids[ncli++] = id;
        }
        zlink_pollitem_t items[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli, 0, ZLINK_POLLIN, 0}};
        CHECK(zlink_poll(items, 2, 100) >= 0);
    }
    CHECK(nsrv == N && ncli == N);
    CHECK(zlink_socket_peer_count(srv) == N);
    CHECK(zlink_socket_peer_count(cli) == N);

    /* each connection sends "conn:<id>" and must get exactly that back */
    for (int i = 0; i < N; i++) {
        int l = snprintf((char *)buf, sizeof buf, "conn:%08x", cids[i]);
        CHECK(tu_stream_send(cli, cids[i], buf, (size_t)l, 0) == l);
    }
    int echoed = 0;
    /* per connection reassembly (payloads may be split) */
    char (*acc)[16] = calloc(1 << 20, 16);
    unsigned char *accn = calloc(1 << 20, 1);
    deadline = tu_now_ms() + 20000;
    while (echoed < N && tu_now_ms() < deadline) {
        int n;
        while ((n = tu_stream_recv(srv, &id, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0) {
            if (n > 0)
                CHECK(tu_stream_send(srv, id, buf, (size_t)n, 0) == n);
        }
        while ((n = tu_stream_recv(cli, &id, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0) {
            uint32_t k = id & 0xfffff;
            CHECK(accn[k] + n <= 13);
            memcpy(acc[k] + accn[k], buf, (size_t)n);
            accn[k] = (unsigned char)(accn[k] + n);
            if (accn[k] == 13) {
                char want[16];
                snprintf(want, sizeof want, "conn:%08x", id);
                CHECK(memcmp(acc[k], want, 13) == 0);
                echoed++;
            }
        }
        zlink_pollitem_t items[2] = {{srv, 0, ZLINK_POLLIN, 0}, {cli, 0, ZLINK_POLLIN, 0}};
        CHECK(zlink_poll(items, 2, 100) >= 0);
    }
    CHECK(echoed == N);

    /* closing the client socket closes its 3000 connections */
    int linger = 0;
    CHECK(zlink_setsockopt(cli, ZLINK_LINGER, &linger, sizeof linger) == 0);
    CHECK(zlink_close(cli) == 0);
    int closed = 0;
    deadline = tu_now_ms() + 20000;
    int t = 200;
    CHECK(zlink_setsockopt(srv, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    while (closed < N && tu_now_ms() < deadline) {
        int n = tu_stream_recv(srv, &id, buf, sizeof buf, 0);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            continue;
        }
        CHECK(n == 1 && buf[0] == 0);
        CHECK(seen_srv[id & 0xfffff] == 1);
        seen_srv[id & 0xfffff] = 2;
        closed++;
    }
    CHECK(closed == N);
    CHECK(zlink_socket_peer_count(srv) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    free(cids);
    free(acc);
    free(accn);
    puts("ok");
    return 0;
}
