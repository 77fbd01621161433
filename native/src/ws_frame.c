/*
 * ws_frame.c - the WebSocket frame layer both ws paths share (ws_frame.h):
 * header encoding, masking, and the decoder that checks every frame a peer
 * sends against RFC 6455.
 */
#include "ws_frame.h"

#include <string.h>

int zl_ws_close_code_ok(unsigned code)
{
    /* 1004 is reserved, 1005, 1006 and 1015 never go on the wire,
     * 1016-2999 are unassigned */
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

size_t zl_ws_put_header(uint8_t *h, int opcode, uint64_t len,
                        const uint8_t key[4])
{
    size_t n = 0;
    uint8_t mbit = key ? 0x80 : 0;
    h[n++] = (uint8_t)(0x80 | (opcode & 0x0f)); /* FIN, no RSV */
    if (len < 126) {
        h[n++] = (uint8_t)(mbit | len);
    } else if (len < 65536) {
        h[n++] = (uint8_t)(mbit | 126);
        h[n++] = (uint8_t)(len >> 8);
        h[n++] = (uint8_t)len;
    } else {
        h[n++] = (uint8_t)(mbit | 127);
        for (int i = 7; i >= 0; i--)
            h[n++] = (uint8_t)(len >> (8 * i));
    }
    if (key) {
        memcpy(h + n, key, 4);
        n += 4;
    }
    return n;
}

void zl_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n,
                     const uint8_t key[4], uint64_t phase)
{
    uint8_t k[8];
    for (int i = 0; i < 8; i++)
        k[i] = key[(phase + (uint64_t)i) & 3];
    uint64_t k64;
    memcpy(&k64, k, 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, 8); /* loaded before the store below */
        v ^= k64;
        memcpy(dst + i, &v, 8);
    }
    for (; i < n; i++)
        dst[i] = src[i] ^ k[i & 7];
}

/* One byte through the incremental UTF-8 validator (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). The state packs the
 * continuation bytes still needed (bits 16-17) and the range the next one
 * must fall in (lo: bits 8-15, hi: bits 0-7); 0 is "between characters".
 * Returns the new state, or UTF8_BAD. */
#define UTF8_BAD 0xffffffffu
static uint32_t utf8_step(uint32_t st, uint8_t b)
{
    uint32_t need = st >> 16;
    if (need) {
        if (b < ((st >> 8) & 0xff) || b > (st & 0xff))
            return UTF8_BAD;
        return need == 1 ? 0 : ((need - 1) << 16 | 0x80u << 8 | 0xbf);
    }
    if (b < 0x80)
        return 0;
    if (b >= 0xc2 && b <= 0xdf)
        return 1u << 16 | 0x80u << 8 | 0xbf;
    if (b == 0xe0)
        return 2u << 16 | 0xa0u << 8 | 0xbf;
    if (b == 0xed) /* no surrogates */
        return 2u << 16 | 0x80u << 8 | 0x9f;
    if (b >= 0xe1 && b <= 0xef)
        return 2u << 16 | 0x80u << 8 | 0xbf;
    if (b == 0xf0)
        return 3u << 16 | 0x90u << 8 | 0xbf;
    if (b >= 0xf1 && b <= 0xf3)
        return 3u << 16 | 0x80u << 8 | 0xbf;
    if (b == 0xf4) /* up to U+10FFFF */
        return 3u << 16 | 0x80u << 8 | 0x8f;
    return UTF8_BAD;
}

/* whether n bytes at p continue the text in *st (ASCII runs skip ahead) */
static int utf8_ok(uint32_t *st, const uint8_t *p, size_t n)
{
    uint32_t v = *st;
    for (size_t i = 0; i < n; i++) {
        if (v == 0 && p[i] < 0x80)
            continue;
        v = utf8_step(v, p[i]);
        if (v == UTF8_BAD)
            return 0;
    }
    *st = v;
    return 1;
}

static void fail(zl_wsd_t *d, unsigned code)
{
    d->event = ZL_WSD_FAIL;
    d->fail_code = code;
}

static int is_ctrl(uint8_t op)
{
    return (op & 0x8) != 0;
}

/* the size of the header whose first two bytes are h */
static size_t hdr_size(const uint8_t *h)
{
    uint8_t l7 = h[1] & 0x7f;
    return 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + ((h[1] & 0x80) ? 4 : 0);
}

/* The header in d->hdr is complete: checks it and starts its frame.
 * 0, or -1 after fail(1002). */
static int frame_start(zl_wsd_t *d)
{
    const uint8_t *h = d->hdr;
    uint8_t fin = h[0] >> 7, op = h[0] & 0x0f, masked = h[1] >> 7;
    uint64_t len = h[1] & 0x7f;
    size_t at = 2;
    int ok;
    if (len == 126) {
        len = (uint64_t)h[2] << 8 | h[3];
        ok = len >= 126; /* only the shortest length form */
        at = 4;
    } else if (len == 127) {
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | h[2 + i];
        ok = len >= 65536 && !(len >> 63);
        at = 10;
    } else {
        ok = 1;
    }
    switch (op) {
    case ZL_WS_OP_CONT:
        ok = ok && d->in_msg;
        break;
    case ZL_WS_OP_TEXT:
    case ZL_WS_OP_BINARY:
        ok = ok && !d->in_msg;
        break;
    case ZL_WS_OP_CLOSE:
    case ZL_WS_OP_PING:
    case ZL_WS_OP_PONG:
        ok = ok && fin && len <= 125;
        break;
    default:
        ok = 0;
        break;
    }
    /* no RSV bits (no extension is negotiated); clients mask, servers
     * do not */
    if (!ok || (h[0] & 0x70) || masked != d->server) {
        fail(d, 1002);
        return -1;
    }
    if (!is_ctrl(op)) {
        d->in_msg = !fin;
        if (op != ZL_WS_OP_CONT) {
            d->text = op == ZL_WS_OP_TEXT;
            d->utf8 = 0;
        }
    }
    d->fin = fin;
    d->op = op;
    d->left = len;
    d->pos = 0;
    d->masked = masked;
    if (masked)
        memcpy(d->key, h + at, 4);
    else
        memset(d->key, 0, 4);
    d->ctl_len = 0;
    d->in_frame = 1;
    return 0;
}

/* a close frame's payload: empty, or a code a peer may send and a UTF-8
 * reason */
static int close_ok(const zl_wsd_t *d)
{
    uint32_t st = 0;
    if (d->ctl_len == 0)
        return 1;
    return d->ctl_len >= 2 &&
           zl_ws_close_code_ok((unsigned)d->ctl[0] << 8 | d->ctl[1]) &&
           utf8_ok(&st, d->ctl + 2, d->ctl_len - 2) && st == 0;
}

static void frame_end(zl_wsd_t *d)
{
    d->in_frame = 0;
    switch (d->op) {
    case ZL_WS_OP_PING:
        d->event = ZL_WSD_PING;
        break;
    case ZL_WS_OP_PONG:
        d->event = ZL_WSD_PONG;
        break;
    case ZL_WS_OP_CLOSE:
        if (close_ok(d))
            d->event = ZL_WSD_CLOSE;
        else
            fail(d, 1002);
        break;
    default:
        if (d->fin && d->text && d->utf8 != 0)
            fail(d, 1007); /* a text message ending inside a character */
        break;
    }
}

size_t zl_wsd_decode(zl_wsd_t *d, const uint8_t *in, size_t n, uint8_t *out,
                     size_t room, size_t *made)
{
    size_t i = 0, o = 0;
    while (i < n && !d->event) {
        if (!d->in_frame) {
            size_t need = d->hdr_len < 2 ? 2 : hdr_size(d->hdr);
            while (d->hdr_len < need && i < n) {
                d->hdr[d->hdr_len++] = in[i++];
                if (d->hdr_len == 2)
                    need = hdr_size(d->hdr);
            }
            if (d->hdr_len < need)
                break;
            d->hdr_len = 0;
            if (frame_start(d) != 0)
                break;
            if (d->left == 0)
                frame_end(d);
            continue;
        }
        size_t k = n - i;
        if (k > d->left)
            k = (size_t)d->left;
        if (is_ctrl(d->op)) {
            zl_ws_mask_copy(d->ctl + d->ctl_len, in + i, k, d->key, d->pos);
            d->ctl_len += k;
        } else {
            if (k > room - o)
                k = room - o;
            if (k == 0)
                break; /* out is full */
            if (d->masked)
                zl_ws_mask_copy(out + o, in + i, k, d->key, d->pos);
            else if (out + o != in + i)
                memmove(out + o, in + i, k);
            if (d->text && !utf8_ok(&d->utf8, out + o, k)) {
                fail(d, 1007); /* not UTF-8: this chunk is not delivered */
                break;
            }
            o += k;
        }
        i += k;
        d->left -= k;
        d->pos += k;
        if (d->left == 0)
            frame_end(d);
    }
    *made = o;
    return i;
}
