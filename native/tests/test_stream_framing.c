/* test_stream_framing.c - ZLINK_STREAM_FRAMING against raw peers (kernel
 * sockets, an OpenSSL client, a hand-written WebSocket client) over tcp://,
 * tls://, ws:// and wss://:
 * - LENGTH: `00 00 00 05 hello` is the payload `hello`; `00 00 00 02 61`
 *   then `62` 0.3 s later is one payload `ab`, delivered when the `62`
 *   arrives; a one-byte body is delivered; packets split at every byte
 *   boundary come out exact; sending `xyz` writes `00 00 00 03 78 79 7a`;
 *   length 0 and a length over MAXMSGSIZE drop the connection (disconnect
 *   event, ZLINK_STREAM_EVENT_ERRNO EPROTO / EMSGSIZE); a one-byte payload
 *   0x00 closes; the peer's FIN after a body: the body, then the
 *   disconnect (0); zlink_msg_recv gets a whole 100,000-byte body.
 * - RAW: events are zero-length payloads; `abc` then `d` 0.3 s later: `d`
 *   delivered alone when it arrives; the last bytes before the peer's FIN
 *   come before the disconnect event; sending `xyz` writes `xyz`.
 * - BATCH: whole packets, headers included; a first packet larger than
 *   the buffer: nothing consumed, its size returned, the same payload frame
 *   again (RCVMORE 1); send validation (EINVAL for a partial packet or a
 *   zero-length body, nothing sent, nothing selected); packets split at
 *   every byte boundary reassemble exactly; zlink_msg_recv of a packet
 *   over 64 KiB; length 0 drops (EPROTO). */
#include "framing_testutil.h"

#define LENGTH ZLINK_STREAM_FRAMING_LENGTH
#define RAW ZLINK_STREAM_FRAMING_RAW
#define BATCH ZLINK_STREAM_FRAMING_BATCH

static void *ctx;

/* Steps v for ms, checking nothing arrives for id after log index from. */
static void quiet(fw_srv_t *v, size_t from, uint32_t id, int ms)
{
    long long end = tu_now_ms() + ms;
    while (tu_now_ms() < end) {
        fw_idle(v);
        CHECK(fw_find(v, from, id) < 0);
    }
}

/* The data bytes received for id after log index from, concatenated;
 * *ev: the index of its disconnect event there (-1 none). */
static size_t gather(const fw_srv_t *v, size_t from, uint32_t id,
                     unsigned char *out, size_t cap, ssize_t *ev)
{
    size_t n = 0;
    *ev = -1;
    for (size_t i = from; i < v->nlog; i++) {
        const fw_msg_t *m = &v->log[i];
        if (m->id != id)
            continue;
        if (m->event == 0) {
            CHECK(*ev < 0);
            *ev = (ssize_t)i;
            continue;
        }
        CHECK(m->event == -1 && *ev < 0); /* no data after the end */
        CHECK(n + m->n <= cap);
        memcpy(out + n, m->data, m->n);
        n += m->n;
    }
    return n;
}

/* waits until the gathered data for id reaches n bytes */
static void wait_bytes(fw_srv_t *v, size_t from, uint32_t id, size_t n)
{
    static unsigned char tmp[1 << 20];
    ssize_t ev;
    long long end = tu_now_ms() + 10000;
    while (gather(v, from, id, tmp, sizeof tmp, &ev) < n) {
        CHECK(ev < 0 && tu_now_ms() < end);
        fw_idle(v);
    }
}

/* A packet sequence of three bodies (1, 5 and 300 bytes), into out. */
static size_t three_packets(unsigned char *out)
{
    static unsigned char b300[300];
    for (int i = 0; i < 300; i++)
        b300[i] = (unsigned char)(i * 13 + 1);
    size_t n = tu_packet(out, "Z", 1);
    n += tu_packet(out + n, "hello", 5);
    n += tu_packet(out + n, b300, 300);
    return n;
}

/* The peer writes seq split at every byte boundary (two writes each, the
 * server stepped between); LENGTH: three exact bodies each time; BATCH:
 * the payloads concatenated are seq exactly. */
static void split_everywhere(fw_srv_t *v, fw_peer_t *p, int framing)
{
    unsigned char seq[400], got[400];
    size_t len = three_packets(seq);
    for (size_t k = 1; k < len; k++) {
        size_t from = v->nlog;
        fw_write(p, v, seq, k);
        fw_step(v);
        fw_write(p, v, seq + k, len - k);
        if (framing == LENGTH) {
            long long end = tu_now_ms() + 5000;
            size_t bodies = 0;
            while (bodies < 3) {
                CHECK(tu_now_ms() < end);
                fw_idle(v);
                bodies = 0;
                for (size_t i = from; i < v->nlog; i++)
                    bodies += v->log[i].id == p->id;
            }
            size_t at = 0;
            for (size_t i = from; i < v->nlog; i++) {
                const fw_msg_t *m = &v->log[i];
                if (m->id != p->id)
                    continue;
                size_t blen = tu_be32(seq + at);
                CHECK(m->event == -1 && m->n == blen &&
                      memcmp(m->data, seq + at + 4, blen) == 0);
                at += 4 + blen;
            }
            CHECK(at == len);
        } else {
            wait_bytes(v, from, p->id, len);
            ssize_t ev;
            CHECK(gather(v, from, p->id, got, sizeof got, &ev) == len && ev < 0);
            CHECK(memcmp(got, seq, len) == 0);
        }
    }
}

/* a new peer writes bad (a length that drops it): disconnect with err */
static void expect_drop(fw_srv_t *v, int kind, const void *bad, size_t n, int err)
{
    fw_peer_t p;
    fw_peer_open(&p, v, kind);
    size_t from = v->nlog;
    fw_write(&p, v, bad, n);
    size_t i = fw_wait_msg(v, from, p.id, 5000);
    while (v->log[i].event == -1) /* bodies before the bad length */
        i = fw_wait_msg(v, i + 1, p.id, 5000);
    if (v->log[i].event != 0 || v->log[i].err != err)
        fprintf(stderr, "expect_drop: event %d err %d n %zu, want 0 / %d\n",
                v->log[i].event, v->log[i].err, v->log[i].n, err);
    CHECK(v->log[i].event == 0 && v->log[i].err == err);
    fw_expect_end(&p, v);
    fw_peer_close(&p);
}

static void length_cases(int kind)
{
    fw_srv_t v;
    fw_srv_open(&v, ctx, kind, LENGTH, 65536);
    fw_peer_t p;
    fw_peer_open(&p, &v, kind);
    size_t from = v.nlog, i;
    unsigned char b[64];

    fw_write(&p, &v, "\0\0\0\5hello", 9);
    i = fw_wait_msg(&v, from, p.id, 5000);
    CHECK(v.log[i].event == -1 && v.log[i].n == 5 && memcmp(v.log[i].data, "hello", 5) == 0);

    /* the last byte 0.3 s later: nothing before it, the body when it comes */
    from = v.nlog;
    fw_write(&p, &v, "\0\0\0\2a", 5);
    quiet(&v, from, p.id, 300);
    long long t0 = tu_now_ms();
    fw_write(&p, &v, "b", 1);
    i = fw_wait_msg(&v, from, p.id, 5000);
    CHECK(tu_now_ms() - t0 < 200);
    CHECK(v.log[i].n == 2 && memcmp(v.log[i].data, "ab", 2) == 0);

    /* a one-byte body, even 0x01 or 0x00, is data */
    for (int k = 0; k < 3; k++) {
        unsigned char one[5] = {0, 0, 0, 1, (unsigned char)(k == 0 ? 7 : k - 1)};
        from = v.nlog;
        fw_write(&p, &v, one, 5);
        i = fw_wait_msg(&v, from, p.id, 5000);
        CHECK(v.log[i].event == -1 && v.log[i].n == 1 && v.log[i].data[0] == one[4]);
    }

    split_everywhere(&v, &p, LENGTH);

    /* sending xyz writes 00 00 00 03 78 79 7a */
    CHECK(tu_stream_send(v.s, p.id, "xyz", 3, 0) == 3);
    CHECK(fw_read(&p, &v, b, 7) == 0 && memcmp(b, "\0\0\0\3xyz", 7) == 0);
    CHECK(tu_stream_send(v.s, p.id, "\1", 1, 0) == 1);
    CHECK(fw_read(&p, &v, b, 5) == 0 && memcmp(b, "\0\0\0\1\1", 5) == 0);

    /* length 0: EPROTO; over MAXMSGSIZE: EMSGSIZE; at it: a body */
    expect_drop(&v, kind, "\0\0\0\0", 4, EPROTO);
    expect_drop(&v, kind, "\0\0\0\3abc\0\0\0\0", 11, EPROTO);
    int64_t mx = 10;
    CHECK(zlink_setsockopt(v.s, ZLINK_MAXMSGSIZE, &mx, sizeof mx) == 0);
    expect_drop(&v, kind, "\0\0\0\x0b", 4, EMSGSIZE);
    expect_drop(&v, kind, "\xff\xff\xff\xff", 4, EMSGSIZE);
    from = v.nlog;
    fw_write(&p, &v, "\0\0\0\x0a" "0123456789", 14);
    i = fw_wait_msg(&v, from, p.id, 5000);
    CHECK(v.log[i].n == 10 && memcmp(v.log[i].data, "0123456789", 10) == 0);
    /* -1 (the default) and 0 mean zlink 1.3's 8 MiB: a length one byte over
     * it drops the connection as soon as the header is in */
    for (int64_t dflt = -1; dflt <= 0; dflt++) {
        CHECK(zlink_setsockopt(v.s, ZLINK_MAXMSGSIZE, &dflt, sizeof dflt) == 0);
        expect_drop(&v, kind, "\0\x80\0\x01", 4, EMSGSIZE);
        expect_drop(&v, kind, "\xff\xff\xff\xff", 4, EMSGSIZE);
    }
    mx = -1;
    CHECK(zlink_setsockopt(v.s, ZLINK_MAXMSGSIZE, &mx, sizeof mx) == 0);

    /* zlink_msg_recv: a whole 100,000-byte body */
    {
        static unsigned char pkt[100004];
        for (size_t k = 0; k < 100000; k++)
            pkt[4 + k] = (unsigned char)(k * 3 + (k >> 9));
        tu_put_be32(pkt, 100000);
        fw_write(&p, &v, pkt, sizeof pkt);
        zlink_msg_t m;
        zlink_msg_init(&m);
        long long end = tu_now_ms() + 5000;
        while (zlink_msg_recv(&m, v.s, ZLINK_DONTWAIT) < 0) {
            CHECK(zlink_errno() == EAGAIN && tu_now_ms() < end);
            zlink_pollitem_t it = {v.s, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 5);
        }
        CHECK(zlink_msg_size(&m) == 4 && tu_be32(zlink_msg_data(&m)) == p.id);
        CHECK(zlink_msg_recv(&m, v.s, 0) == 100000);
        CHECK(memcmp(zlink_msg_data(&m), pkt + 4, 100000) == 0);
        CHECK(tu_last_event(v.s) == -1);
        zlink_msg_close(&m);
    }

    /* the peer's FIN after a body: the body, then the disconnect (0) */
    {
        fw_peer_t q;
        fw_peer_open(&q, &v, kind);
        from = v.nlog;
        fw_write(&q, &v, "\0\0\0\3end", 7);
        fw_fin(&q, &v);
        long long end = tu_now_ms() + 5000;
        ssize_t ev = -1;
        unsigned char got[16];
        size_t n;
        while ((n = gather(&v, from, q.id, got, sizeof got, &ev)), ev < 0) {
            CHECK(tu_now_ms() < end);
            fw_idle(&v);
        }
        CHECK(n == 3 && memcmp(got, "end", 3) == 0 && v.log[ev].err == 0);
        fw_peer_close(&q);
    }

    /* a one-byte payload 0x00 closes the connection (as zlink) */
    from = v.nlog;
    CHECK(tu_stream_send(v.s, p.id, "\0", 1, 0) == 1);
    fw_expect_end(&p, &v);
    i = fw_wait_msg(&v, from, p.id, 5000);
    CHECK(v.log[i].event == 0 && v.log[i].err == 0);
    CHECK_ERR(tu_stream_send(v.s, p.id, "x", 1, 0), EHOSTUNREACH);
    fw_peer_close(&p);
    fw_srv_close(&v);
}

static void raw_cases(int kind)
{
    fw_srv_t v;
    fw_srv_open(&v, ctx, kind, RAW, 65536);
    fw_peer_t p;
    fw_peer_open(&p, &v, kind);
    /* the connect event: a zero-length payload, EVENT 1 */
    ssize_t c = fw_find(&v, 0, p.id);
    CHECK(c >= 0 && v.log[c].event == 1 && v.log[c].n == 0);
    size_t from = v.nlog;
    unsigned char got[64];
    ssize_t ev;

    fw_write(&p, &v, "abc", 3);
    wait_bytes(&v, from, p.id, 3);
    size_t mark = v.nlog;
    quiet(&v, mark, p.id, 300);
    long long t0 = tu_now_ms();
    fw_write(&p, &v, "d", 1);
    size_t i = fw_wait_msg(&v, mark, p.id, 5000);
    CHECK(tu_now_ms() - t0 < 200);
    /* the lone byte, at once, as data */
    CHECK(v.log[i].event == -1 && v.log[i].n == 1 && v.log[i].data[0] == 'd');
    CHECK(gather(&v, from, p.id, got, sizeof got, &ev) == 4 && ev < 0 &&
          memcmp(got, "abcd", 4) == 0);

    /* sending xyz writes xyz */
    CHECK(tu_stream_send(v.s, p.id, "xyz", 3, 0) == 3);
    CHECK(fw_read(&p, &v, got, 3) == 0 && memcmp(got, "xyz", 3) == 0);
    /* a one-byte payload 0x00 is data in RAW */
    CHECK(tu_stream_send(v.s, p.id, "\0", 1, 0) == 1);
    CHECK(fw_read(&p, &v, got, 1) == 0 && got[0] == 0);

    /* the last bytes before the FIN come before the disconnect event */
    from = v.nlog;
    fw_write(&p, &v, "xy", 2);
    fw_write(&p, &v, "z", 1);
    fw_fin(&p, &v);
    long long end = tu_now_ms() + 5000;
    size_t n;
    while ((n = gather(&v, from, p.id, got, sizeof got, &ev)), ev < 0) {
        CHECK(tu_now_ms() < end);
        fw_idle(&v);
    }
    CHECK(n == 3 && memcmp(got, "xyz", 3) == 0);
    CHECK(v.log[ev].n == 0 && v.log[ev].err == 0);
    fw_peer_close(&p);
    fw_srv_close(&v);
}

/* BATCH: receives the next non-empty payload of v into buf (cap), raw
 * zlink_recv calls; returns its size (which may exceed cap). */
static int batch_next(fw_srv_t *v, uint32_t id, void *buf, size_t cap)
{
    long long end = tu_now_ms() + 5000;
    for (;;) {
        unsigned char idb[4];
        int n = zlink_recv(v->s, idb, 4, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN && tu_now_ms() < end);
            zlink_pollitem_t it = {v->s, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 5);
            continue;
        }
        CHECK(n == 4 && tu_be32(idb) == id);
        n = zlink_recv(v->s, buf, cap, 0);
        CHECK(n >= 0 && tu_last_event(v->s) == -1);
        if (n > 0)
            return n;
    }
}

static void batch_cases(int kind)
{
    fw_srv_t v;
    fw_srv_open(&v, ctx, kind, BATCH, 65536);
    fw_peer_t p;
    fw_peer_open(&p, &v, kind);
    static unsigned char pkt[200], buf[70000];
    for (int k = 0; k < 100; k++)
        pkt[4 + k] = (unsigned char)(k + 1);
    tu_put_be32(pkt, 100);
    tu_packet(pkt + 104, "tail", 4);

    /* the first packet over the buffer: its size, nothing consumed, the
     * same payload frame again */
    fw_write(&p, &v, pkt, 112);
    CHECK(batch_next(&v, p.id, buf, 50) == 104);
    CHECK(tu_get_int(v.s, ZLINK_RCVMORE) == 1);
    CHECK(zlink_recv(v.s, buf, 103, 0) == 104);
    CHECK(tu_get_int(v.s, ZLINK_RCVMORE) == 1);
    int n = zlink_recv(v.s, buf, 104, 0);
    CHECK(n == 104 && memcmp(buf, pkt, 104) == 0);
    CHECK(tu_get_int(v.s, ZLINK_RCVMORE) == 0);
    n = batch_next(&v, p.id, buf, sizeof buf);
    CHECK(n == 8 && memcmp(buf, pkt + 104, 8) == 0);
    /* as many whole packets as fit */
    fw_write(&p, &v, pkt, 112);
    n = batch_next(&v, p.id, buf, sizeof buf);
    if (n == 104) /* the transport may have split them */
        n += batch_next(&v, p.id, buf + 104, sizeof buf - 104);
    CHECK(n == 112 && memcmp(buf, pkt, 112) == 0);

    /* send validation: whole packets with bodies of 1 byte or more */
    CHECK_ERR(tu_stream_send(v.s, p.id, "\0\0\0\5abc", 7, 0), EINVAL);
    CHECK_ERR(zlink_send(v.s, "\0\0\0\1a", 5, 0), EINVAL); /* nothing selected */
    CHECK_ERR(tu_stream_send(v.s, p.id, "\0\0\0\0", 4, 0), EINVAL);
    CHECK_ERR(tu_stream_send(v.s, p.id, "\0\0\0\1a\0\0", 7, 0), EINVAL);
    CHECK_ERR(tu_stream_send(v.s, p.id, "\0\0\0\1a\0\0\0\0", 9, 0), EINVAL);
    CHECK_ERR(tu_stream_send(v.s, p.id, "abc", 3, 0), EINVAL);
    CHECK_ERR(tu_stream_send(v.s, p.id, "\1", 1, 0), EINVAL);
    CHECK(tu_stream_send(v.s, p.id, "\0\0\0\1a\0\0\0\2bc", 11, 0) == 11);
    CHECK(fw_read(&p, &v, buf, 11) == 0 && memcmp(buf, "\0\0\0\1a\0\0\0\2bc", 11) == 0);
    /* nothing of the refused ones went out */
    CHECK(tu_stream_send(v.s, p.id, "\0\0\0\1q", 5, 0) == 5);
    CHECK(fw_read(&p, &v, buf, 5) == 0 && memcmp(buf, "\0\0\0\1q", 5) == 0);

    split_everywhere(&v, &p, BATCH);

    /* zlink_msg_recv: a packet over 64 KiB comes whole */
    {
        static unsigned char big[100004];
        for (size_t k = 0; k < 100000; k++)
            big[4 + k] = (unsigned char)(k * 5 + 1);
        tu_put_be32(big, 100000);
        fw_write(&p, &v, big, sizeof big);
        zlink_msg_t m;
        zlink_msg_init(&m);
        long long end = tu_now_ms() + 5000;
        for (;;) {
            if (zlink_msg_recv(&m, v.s, ZLINK_DONTWAIT) < 0) {
                CHECK(zlink_errno() == EAGAIN && tu_now_ms() < end);
                zlink_pollitem_t it = {v.s, 0, ZLINK_POLLIN, 0};
                zlink_poll(&it, 1, 5);
                continue;
            }
            CHECK(zlink_msg_size(&m) == 4 && tu_be32(zlink_msg_data(&m)) == p.id);
            CHECK(zlink_msg_recv(&m, v.s, 0) >= 0);
            if (zlink_msg_size(&m))
                break;
        }
        CHECK(zlink_msg_size(&m) == sizeof big && memcmp(zlink_msg_data(&m), big, sizeof big) == 0);
        zlink_msg_close(&m);
    }

    expect_drop(&v, kind, "\0\0\0\0", 4, EPROTO);
    int64_t mx = 3;
    CHECK(zlink_setsockopt(v.s, ZLINK_MAXMSGSIZE, &mx, sizeof mx) == 0);
    expect_drop(&v, kind, "\0\0\0\4abcd", 8, EMSGSIZE);
    mx = -1;
    CHECK(zlink_setsockopt(v.s, ZLINK_MAXMSGSIZE, &mx, sizeof mx) == 0);

    /* a one-byte payload 0x00 closes */
    size_t from = v.nlog;
    CHECK(tu_stream_send(v.s, p.id, "\0", 1, 0) == 1);
    fw_expect_end(&p, &v);
    size_t i = fw_wait_msg(&v, from, p.id, 5000);
    CHECK(v.log[i].event == 0 && v.log[i].err == 0);
    fw_peer_close(&p);
    fw_srv_close(&v);
}

int main(void)
{
    tu_tls_make(&fw_tls);
    ctx = zlink_ctx_new();
    int kinds = zlink_has("ws") ? 4 : zlink_has("tls") ? 2 : 1;
    for (int k = 0; k < kinds; k++) {
        length_cases(k);
        raw_cases(k);
        batch_cases(k);
        printf("test_stream_framing: %s ok\n", fw_names[k]);
        fflush(stdout);
    }
    fw_end(ctx);
    puts("ok");
    return 0;
}
