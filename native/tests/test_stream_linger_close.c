/* test_stream_linger_close.c - a close with LINGER loses no byte the
 * socket took, even when the peer keeps writing. The closing side sends N
 * bytes (random message sizes, seeded) to a peer that reads slowly (a small
 * receive buffer) and writes to us all the time, then closes: by
 * zlink_close with LINGER 20 s, by [id] + an empty payload with LINGER 20 s
 * (the 0x00 must carry cause 0), by zlink_close with LINGER -1, and by
 * [id] + empty once the peer read everything (nothing of ours left, the
 * peer still writing). The peer must read exactly the N bytes, in order,
 * then the end: with LINGER 20 s a FIN (cause 0), never a reset. Before the
 * half-close (zl_conn_linger) the kernel answered our unread input with a
 * reset that threw away what its send buffer still held, and the peer got
 * fewer. Over tcp://, tls://, ws:// and wss://; ZLINK_TEST_SEED replays. */
#include "tls_testutil.h"
#include "ws_testutil.h"

#include <errno.h>
#include <pthread.h>

static tu_tls_t T;

typedef struct peer {
    void *s;
    uint32_t seed;
    long long got;  /* data bytes read, each checked */
    int bad;        /* offset of the first wrong byte + 1, 0 if none */
    int end_cause;  /* the 0x00's ZLINK_STREAM_EVENT_ERRNO */
} peer_t;

static unsigned char pattern(long long k, uint32_t seed)
{
    return (unsigned char)((k * 131) ^ (k >> 9) ^ seed);
}

/* The peer: writes junk to us whenever it can (never blocking), reads one
 * message per millisecond, and checks every byte against the pattern,
 * until its connection ends. */
static void *peer_run(void *arg)
{
    peer_t *p = arg;
    static unsigned char junk[1024];
    unsigned char *buf = malloc(1 << 16);
    CHECK(buf);
    memset(junk, 'j', sizeof junk);
    uint32_t pid = 0, id;
    int up = 0;
    long long deadline = tu_now_ms() + 60000; /* a hang fails, it does not time anything */
    while (tu_now_ms() < deadline) {
        if (up)
            (void)tu_stream_send(p->s, pid, junk, sizeof junk, ZLINK_DONTWAIT);
        int n = tu_stream_try_recv(p->s, &id, buf, 1 << 16);
        if (n < 0) {
            zlink_pollitem_t it = {p->s, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 1);
            continue;
        }
        int ev = tu_last_event(p->s);
        if (ev == 1) {
            pid = id;
            up = 1;
            continue;
        }
        if (ev == 0) {
            p->end_cause = tu_event_errno(p->s);
            free(buf);
            return NULL;
        }
        for (int i = 0; i < n; i++)
            if (!p->bad && buf[i] != pattern(p->got + i, p->seed))
                p->bad = (int)(p->got + i + 1);
        __atomic_store_n(&p->got, p->got + n, __ATOMIC_RELEASE);
        tu_sleep_ms(1); /* a slow reader: our bytes wait in the kernel */
    }
    fprintf(stderr, "peer: no end within 60 s (got %lld)\n", p->got);
    exit(1);
}

static const char *mode_name[] = {"zlink_close LINGER 20000", "[id]+empty LINGER 20000",
                                  "zlink_close LINGER -1",
                                  "[id]+empty LINGER 20000 once the peer read all"};

static void run(void *ctx, const char *scheme, int mode)
{
    char ep[256];
    int tls = strcmp(scheme, "tls") == 0, wss = strcmp(scheme, "wss") == 0;
    int ws = wss || strcmp(scheme, "ws") == 0;
    tu_tls_framing = ZLINK_STREAM_FRAMING_RAW;
    void *srv;
    if (ws)
        srv = tu_ws_server(ctx, &T, wss, "", ep, sizeof ep);
    else if (tls)
        srv = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    else {
        srv = zlink_socket(ctx, ZLINK_STREAM);
        tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
        tu_bind_tcp(srv, ep, sizeof ep);
    }
    tu_set_int(srv, ZLINK_SNDHWM, 0);
    tu_set_int(srv, ZLINK_LINGER, mode == 2 ? -1 : 20000);

    peer_t p;
    memset(&p, 0, sizeof p);
    p.seed = tu_rnd();
    p.s = (tls || wss) ? tu_tls_client(ctx, T.ca, -1) : zlink_socket(ctx, ZLINK_STREAM);
    tu_set_framing(p.s, ZLINK_STREAM_FRAMING_RAW);
    tu_set_int(p.s, ZLINK_RCVBUF, 4096);
    tu_set_int(p.s, ZLINK_SNDHWM, 64);
    CHECK(zlink_connect(p.s, ep) == 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, peer_run, &p) == 0);

    uint32_t sid, id;
    CHECK(tu_stream_event(srv, &sid) == 1);
    long long n = (1 << 20) + (tu_rnd() % (3u << 20)), off = 0;
    unsigned char *msg = malloc(65536);
    CHECK(msg);
    while (off < n) {
        long long len = 1 + tu_rnd() % 65536;
        if (len > n - off)
            len = n - off;
        for (long long i = 0; i < len; i++)
            msg[i] = pattern(off + i, p.seed);
        CHECK(tu_stream_send(srv, sid, msg, (size_t)len, ZLINK_DONTWAIT) == (int)len);
        off += len;
    }
    free(msg);
    if (mode == 3) { /* nothing queued or unacknowledged: the peer only writes */
        static unsigned char junk[65536];
        while (__atomic_load_n(&p.got, __ATOMIC_ACQUIRE) < n) {
            /* our calls move the queue; the peer's bytes are read and dropped */
            while (tu_stream_recv(srv, &id, junk, sizeof junk, ZLINK_DONTWAIT) >= 0)
                CHECK(id == sid && tu_last_event(srv) < 0);
            zlink_pollitem_t it = {srv, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 1);
        }
    }
    if (mode == 1 || mode == 3) {
        /* the close of one connection: its 0x00 comes once all went out */
        CHECK(tu_stream_send(srv, sid, "", 0, 0) == 0);
        unsigned char b[65536];
        for (;;) {
            int r = tu_stream_recv(srv, &id, b, sizeof b, 0);
            CHECK(r >= 0);
            if (id == sid && tu_last_event(srv) == 0)
                break;
        }
        CHECK(tu_event_errno(srv) == 0);
    }
    zlink_close(srv);
    CHECK(pthread_join(th, NULL) == 0);
    printf("%s, %s: sent %lld, the peer read %lld (end cause %d)\n", scheme,
           mode_name[mode], n, p.got, p.end_cause);
    fflush(stdout);
    CHECK(p.bad == 0);
    CHECK(p.got == n);
    /* with a LINGER above 0 the peer's end is a FIN, never a reset */
    CHECK(mode == 2 || p.end_cause == 0);
    zlink_close(p.s);
}

int main(void)
{
    tu_seed("test_stream_linger_close");
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    const char *schemes[] = {"tcp", "tls", "ws", "wss"};
    for (int s = 0; s < 4; s++)
        for (int mode = 0; mode < 4; mode++)
            run(ctx, schemes[s], mode);
    zlink_ctx_term(ctx);
    tu_tls_cleanup(&T);
    return 0;
}
