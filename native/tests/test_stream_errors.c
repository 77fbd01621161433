/* test_stream_errors.c - STREAM send-side errors: unknown ids, malformed id
 * frames, options that do not exist or are read with the wrong size, the
 * defaults (HWM 300000 as zlink), ZLINK_STREAM_FRAMING's rules (range, only
 * before any listener or connection), the read-only event options,
 * [id]+empty closing, and the libzmq-like behaviour of a pending id frame. */
#include "testutil.h"

#include <errno.h>

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);

    /* the framing: 0..2, set while the socket has nothing */
    int fr = 3;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_FRAMING, &fr, sizeof fr), EINVAL);
    fr = -1;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_FRAMING, &fr, sizeof fr), EINVAL);
    fr = 1;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_FRAMING, &fr, 8), EINVAL);
    CHECK(tu_get_int(srv, ZLINK_STREAM_FRAMING) == ZLINK_STREAM_FRAMING_LENGTH);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_BATCH);
    CHECK(tu_get_int(srv, ZLINK_STREAM_FRAMING) == ZLINK_STREAM_FRAMING_BATCH);
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_LENGTH);
    CHECK(tu_last_event(srv) == -1 && tu_event_errno(srv) == 0);
    int ev = 1;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_EVENT, &ev, sizeof ev), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_EVENT_ERRNO, &ev, sizeof ev), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, 1004, &ev, sizeof ev), EINVAL);

    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    fr = ZLINK_STREAM_FRAMING_RAW;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_STREAM_FRAMING, &fr, sizeof fr), EINVAL);
    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);

    unsigned char idb[4] = {1, 2, 3, 4};
    CHECK_ERR(zlink_send(srv, idb, 4, ZLINK_SNDMORE), EHOSTUNREACH);
    CHECK_ERR(zlink_send(srv, idb, 3, ZLINK_SNDMORE), EHOSTUNREACH);
    CHECK_ERR(zlink_send(srv, idb, 5, ZLINK_SNDMORE), EHOSTUNREACH);
    CHECK_ERR(zlink_send(srv, idb, 4, 0), EINVAL); /* id without SNDMORE */
    CHECK_ERR(zlink_send(srv, NULL, 0, ZLINK_SNDMORE), EHOSTUNREACH);

    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid, sid, id;
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    CHECK(cid != 0 && sid != 0);

    /* options */
    int v = 5;
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_SUBSCRIBE, "a", 1), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, 9999, &v, sizeof v), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_SNDHWM, &v, 2), EINVAL);
    /* TLS options exist on STREAM only in a build with TLS (test_tls_opts
     * checks their values) */
    if (zlink_has("tls"))
        CHECK(zlink_setsockopt(srv, ZLINK_TLS_CERT, "x", 1) == 0);
    else
        CHECK_ERR(zlink_setsockopt(srv, ZLINK_TLS_CERT, "x", 1), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_CONNECT_ROUTING_ID, "abc", 3), EINVAL);
    size_t len = 1;
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_SNDHWM, &v, &len), EINVAL);
    /* numbers are read with exactly their size, as zlink */
    int64_t v64 = 0;
    len = sizeof v64;
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_SNDHWM, &v64, &len), EINVAL);
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_STREAM_EVENT, &v64, &len), EINVAL);
    CHECK(zlink_getsockopt(srv, ZLINK_MAXMSGSIZE, &v64, &len) == 0 && v64 == -1);
    len = sizeof v;
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_MAXMSGSIZE, &v, &len), EINVAL);
    CHECK_ERR(zlink_setsockopt(srv, ZLINK_MAXMSGSIZE, &v, sizeof v), EINVAL);
    len = 4;
    char small[4];
    CHECK_ERR(zlink_getsockopt(srv, ZLINK_LAST_ENDPOINT, small, &len), EINVAL);
    int opts[] = {ZLINK_SNDHWM, ZLINK_RCVHWM, ZLINK_SNDBUF, ZLINK_RCVBUF,
                  ZLINK_BACKLOG, ZLINK_LINGER, ZLINK_RCVTIMEO, ZLINK_SNDTIMEO,
                  ZLINK_RECONNECT_IVL, ZLINK_CONNECT_TIMEOUT, ZLINK_TCP_KEEPALIVE,
                  ZLINK_TCP_KEEPALIVE_CNT, ZLINK_TCP_KEEPALIVE_IDLE,
                  ZLINK_TCP_KEEPALIVE_INTVL, ZLINK_IPV6};
    int dflt[] = {300000, 300000, -1, -1, 100, -1, -1, -1, 100, 0, -1, -1, -1, -1, 0};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        len = sizeof v;
        CHECK(zlink_getsockopt(srv, opts[i], &v, &len) == 0 && len == sizeof v);
        CHECK(v == dflt[i]);
    }
    int fd = -1;
    len = sizeof fd;
    CHECK(zlink_getsockopt(srv, ZLINK_FD, &fd, &len) == 0 && fd >= 0);

    /* keepalive settings reach the connections without error */
    tu_set_int(cli, ZLINK_TCP_KEEPALIVE, 1);
    tu_set_int(cli, ZLINK_TCP_KEEPALIVE_IDLE, 30);
    tu_set_int(cli, ZLINK_SNDBUF, 65536);
    tu_set_int(cli, ZLINK_RCVBUF, 65536);

    /* a selected id whose connection goes away before the payload */
    unsigned char sidb[4];
    tu_put_be32(sidb, sid);
    CHECK(zlink_send(srv, sidb, 4, ZLINK_SNDMORE) == 4);
    CHECK(tu_stream_send(cli, cid, "", 0, 0) == 0); /* client closes */
    CHECK(tu_stream_event(cli, &id) == 0 && id == cid);
    CHECK(tu_event_errno(cli) == 0); /* a local close */
    CHECK(tu_stream_event(srv, &id) == 0 && id == sid); /* server sees EOF */
    CHECK(tu_event_errno(srv) == 0); /* an orderly end */
    CHECK_ERR(zlink_send(srv, "late", 4, 0), EHOSTUNREACH);
    /* and the next frame is an id frame again */
    CHECK_ERR(zlink_send(srv, sidb, 4, ZLINK_SNDMORE), EHOSTUNREACH);

    /* ids are not reused right away */
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid2, sid2;
    CHECK(tu_stream_event(cli, &cid2) == 1);
    CHECK(tu_stream_event(srv, &sid2) == 1);
    CHECK(cid2 != cid && sid2 != sid);

    /* disconnect by endpoint closes the connections made with it */
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid3, sid3;
    CHECK(tu_stream_event(cli, &cid3) == 1);
    CHECK(tu_stream_event(srv, &sid3) == 1);
    CHECK(zlink_disconnect(cli, ep) == 0);
    int z = 0;
    for (int i = 0; i < 2; i++) {
        CHECK(tu_stream_event(cli, &id) == 0);
        CHECK(id == cid2 || id == cid3);
        z |= id == cid2 ? 1 : 2;
    }
    CHECK(z == 3);
    z = 0;
    for (int i = 0; i < 2; i++) {
        CHECK(tu_stream_event(srv, &id) == 0);
        z |= id == sid2 ? 1 : id == sid3 ? 2 : 4;
    }
    CHECK(z == 3);
    CHECK_ERR(zlink_disconnect(cli, ep), ENOENT);

    CHECK(zlink_close(cli) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
