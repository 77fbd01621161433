/* test_stream_framing_random.c - randomized: raw peers over tcp://,
 * tls://, ws:// and wss:// each send a stream of [u32 BE len][body]
 * packets of random sizes (1 B to 256 KiB, spread over the powers of two),
 * written in random splits (1 B to 64 KiB; ws: each split one frame), all
 * peers at once, to a STREAM server that receives with buffers of random
 * sizes. LENGTH: every body exact and in order per connection; BATCH: every
 * payload whole packets, their concatenation the stream exactly; RAW: the
 * byte stream exact. Then each peer's FIN gives its disconnect event (0)
 * after its last byte. Prints its seed; ZLINK_TEST_SEED=<seed> replays it. */
#include "framing_testutil.h"

#define MAX_BODY (256 * 1024)
#define NPKT 10

typedef struct wpeer {
    fw_peer_t p;
    unsigned char *wire; /* the whole stream */
    size_t len, sent;    /* stream bytes handed to the transport */
    unsigned char *out;  /* the current split (ws: framed), being written */
    size_t out_len, out_off;
    size_t got;          /* stream bytes the server delivered */
    size_t next_pkt;     /* LENGTH: offset of the next packet expected */
    int ended;
} wpeer_t;

static size_t rnd_pow(size_t max)
{
    /* 1 .. max, about evenly over the powers of two */
    unsigned bits = 0;
    while (((size_t)1 << bits) < max)
        bits++;
    size_t top = (size_t)1 << (tu_rnd() % (bits + 1));
    size_t n = 1 + tu_rnd() % top;
    return n > max ? max : n;
}

/* Moves the peer's stream on without blocking; 1 if anything went. */
static int pump(wpeer_t *w)
{
    int did = 0;
    for (;;) {
        if (w->out_off == w->out_len) {
            if (w->sent == w->len)
                return did;
            size_t k = rnd_pow(65536);
            if (k > w->len - w->sent)
                k = w->len - w->sent;
            if (w->p.kind == FW_WS || w->p.kind == FW_WSS) {
                w->out_len = tu_ws_frame(w->out, 1, 0x2, 1, w->wire + w->sent, k);
            } else {
                memcpy(w->out, w->wire + w->sent, k);
                w->out_len = k;
            }
            w->out_off = 0;
            w->sent += k;
        }
        ssize_t k = fw_raw_write1(&w->p, w->out + w->out_off, w->out_len - w->out_off);
        CHECK(k >= 0);
        if (k == 0)
            return did;
        w->out_off += (size_t)k;
        did = 1;
    }
}

static wpeer_t *by_id(wpeer_t *w, int n, uint32_t id)
{
    for (int i = 0; i < n; i++)
        if (w[i].p.id == id)
            return &w[i];
    return NULL;
}

/* Checks the server's new messages against the streams, then frees them. */
static void check_log(fw_srv_t *v, wpeer_t *w, int n, int framing)
{
    for (size_t i = 0; i < v->nlog; i++) {
        fw_msg_t *m = &v->log[i];
        wpeer_t *p = by_id(w, n, m->id);
        CHECK(p);
        if (m->event == 0) {
            CHECK(!p->ended && p->got == p->len && m->err == 0);
            p->ended = 1;
        } else if (m->event == -1) {
            CHECK(!p->ended);
            if (framing == ZLINK_STREAM_FRAMING_LENGTH) {
                size_t blen = tu_be32(p->wire + p->got);
                if (m->n != blen || memcmp(m->data, p->wire + p->got + 4, blen) != 0) {
                    fprintf(stderr, "conn %u: body at %zu (%zu bytes) came as %zu bytes%s\n",
                            m->id, p->got, blen, m->n, m->n == blen ? ", different" : "");
                    CHECK(!"a body came out wrong");
                }
                p->got += 4 + blen;
            } else {
                CHECK(p->got + m->n <= p->len);
                if (memcmp(m->data, p->wire + p->got, m->n) != 0) {
                    fprintf(stderr, "conn %u: bytes %zu..%zu differ\n", m->id, p->got,
                            p->got + m->n);
                    CHECK(!"the stream came out wrong");
                }
                if (framing == ZLINK_STREAM_FRAMING_BATCH) {
                    /* whole packets */
                    size_t off = 0;
                    while (off < m->n) {
                        CHECK(m->n - off >= 4);
                        off += 4 + (size_t)tu_be32(m->data + off);
                    }
                    CHECK(off == m->n);
                } else {
                    CHECK(m->n > 0);
                }
                p->got += m->n;
            }
        }
        free(m->data);
    }
    v->nlog = 0;
}

static void run(void *ctx, int kind, int framing, int nconn)
{
    fw_srv_t v;
    size_t cap = framing == ZLINK_STREAM_FRAMING_LENGTH ? MAX_BODY
                 : framing == ZLINK_STREAM_FRAMING_RAW ? rnd_pow(70000)
                                                        : 64 + rnd_pow(70000);
    fw_srv_open(&v, ctx, kind, framing, cap);
    wpeer_t *w = calloc((size_t)nconn, sizeof *w);
    CHECK(w);
    size_t total = 0;
    for (int i = 0; i < nconn; i++) {
        fw_peer_open(&w[i].p, &v, kind);
        int npkt = 1 + (int)(tu_rnd() % NPKT);
        size_t cap_w = 0;
        for (int k = 0; k < npkt; k++) {
            size_t b = rnd_pow(MAX_BODY);
            if (w[i].len + 4 + b > cap_w) {
                cap_w = (w[i].len + 4 + b) * 2;
                w[i].wire = realloc(w[i].wire, cap_w);
                CHECK(w[i].wire);
            }
            unsigned char *pk = w[i].wire + w[i].len;
            tu_put_be32(pk, (uint32_t)b);
            for (size_t j = 0; j < b; j++)
                pk[4 + j] = (unsigned char)tu_rnd();
            w[i].len += 4 + b;
        }
        w[i].out = malloc(65536 + 14);
        CHECK(w[i].out);
        total += w[i].len;
    }
    check_log(&v, w, nconn, framing); /* the connect events */
    long long start = tu_now_ms(), moved = start;
    size_t last = 0;
    for (;;) {
        int did = 0;
        for (int i = 0; i < nconn; i++)
            did |= pump(&w[i]);
        did |= fw_step(&v);
        check_log(&v, w, nconn, framing);
        size_t got = 0;
        for (int i = 0; i < nconn; i++)
            got += w[i].got;
        if (got == total)
            break;
        if (got != last) {
            last = got;
            moved = tu_now_ms();
        }
        if (tu_now_ms() - moved > 10000) {
            fprintf(stderr, "test_stream_framing_random: %s framing %d stalled, %zu of %zu\n",
                    fw_names[kind], framing, got, total);
            for (int i = 0; i < nconn; i++)
                if (w[i].got < w[i].len)
                    fprintf(stderr, "  conn %u: sent %zu, got %zu of %zu\n", w[i].p.id,
                            w[i].sent, w[i].got, w[i].len);
            CHECK(!"stalled");
        }
        if (!did) {
            zlink_pollitem_t it = {v.s, 0, ZLINK_POLLIN, 0};
            zlink_poll(&it, 1, 1);
        }
    }
    /* each peer's end comes after its last byte */
    for (int i = 0; i < nconn; i++)
        fw_fin(&w[i].p, &v);
    long long end = tu_now_ms() + 10000;
    for (;;) {
        int ended = 0;
        for (int i = 0; i < nconn; i++)
            ended += w[i].ended;
        if (ended == nconn)
            break;
        CHECK(tu_now_ms() < end);
        fw_idle(&v);
        check_log(&v, w, nconn, framing);
    }
    printf("test_stream_framing_random: %s, framing %d, %d connections, %zu bytes, buffer %zu, %lld retried\n",
           fw_names[kind], framing, nconn, total, v.cap, v.too_small);
    fflush(stdout);
    for (int i = 0; i < nconn; i++) {
        fw_peer_close(&w[i].p);
        free(w[i].wire);
        free(w[i].out);
    }
    free(w);
    fw_srv_close(&v);
}

int main(void)
{
    tu_seed("test_stream_framing_random");
    tu_tls_make(&fw_tls);
    void *ctx = zlink_ctx_new();
    int kinds = zlink_has("ws") ? 4 : zlink_has("tls") ? 2 : 1;
    for (int k = 0; k < kinds; k++) {
        int nconn = k == FW_TCP ? 24 : 8;
        run(ctx, k, ZLINK_STREAM_FRAMING_LENGTH, nconn);
        run(ctx, k, ZLINK_STREAM_FRAMING_BATCH, nconn);
        run(ctx, k, ZLINK_STREAM_FRAMING_RAW, nconn);
    }
    fw_end(ctx);
    puts("ok");
    return 0;
}
