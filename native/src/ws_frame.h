/*
 * ws_frame.h - the WebSocket frame layer (RFC 6455) both ws paths share:
 * the STREAM engine's (stream_ws.c) and the one under the ZMP socket types
 * (zmp_transport.c). Pure C, no I/O and no OpenSSL: frame headers out, an
 * incremental frame decoder in (every rule about what a peer may send:
 * lengths in their shortest form, RSV bits, opcodes, fragmentation,
 * control frames, masking by direction, close codes, UTF-8 of text and of
 * close reasons), so both paths fail a peer for the same things with the
 * same close codes.
 */
#ifndef ZL_WS_FRAME_H
#define ZL_WS_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* frame opcodes (RFC 6455, 5.2) */
enum {
    ZL_WS_OP_CONT = 0x0,
    ZL_WS_OP_TEXT = 0x1,
    ZL_WS_OP_BINARY = 0x2,
    ZL_WS_OP_CLOSE = 0x8,
    ZL_WS_OP_PING = 0x9,
    ZL_WS_OP_PONG = 0xa
};

/* the longest frame header: 2 + 8 (length) + 4 (mask key) */
#define ZL_WS_HDR_MAX 14

/* A close code a peer may send (RFC 6455 7.4 and IANA's registry):
 * 1000-1003, 1007-1014, 3000-4999. */
int zl_ws_close_code_ok(unsigned code);

/* Writes a FIN frame header for opcode and a payload of len bytes into h
 * (ZL_WS_HDR_MAX bytes of room), with key as its mask (NULL: unmasked).
 * Returns the header's length. */
size_t zl_ws_put_header(uint8_t *h, int opcode, uint64_t len,
                        const uint8_t key[4]);

/* n bytes from src to dst, XORed with key starting at phase (payload
 * offset % 4); dst may be src or below it. */
void zl_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n,
                     const uint8_t key[4], uint64_t phase);

/* What the decoder stopped for (zl_wsd_t.event). */
enum {
    ZL_WSD_NONE = 0,
    ZL_WSD_PING,  /* a ping is complete: its payload in ctl/ctl_len */
    ZL_WSD_PONG,  /* a pong is complete (nothing to do) */
    ZL_WSD_CLOSE, /* a valid close: ctl/ctl_len (0 or 2+ bytes) */
    ZL_WSD_FAIL   /* the peer broke a rule: fail the connection with
                     fail_code (1002 protocol, 1007 not UTF-8) */
};

/* The receiving half of a connection: the frame being decoded. Zero it to
 * start; set server (1: frames must be masked, 0: must not be). */
typedef struct zl_wsd {
    uint8_t server;
    uint8_t hdr[ZL_WS_HDR_MAX]; /* a header's bytes so far */
    uint8_t hdr_len;
    uint8_t in_frame; /* a frame's payload is being received */
    uint8_t in_msg;   /* a fragmented data message waits for continuation */
    uint8_t op;
    uint8_t fin;      /* the frame ends its message */
    uint8_t text;     /* the data message being received is text */
    uint8_t masked;
    uint8_t key[4];   /* the frame's mask (all zero when unmasked) */
    uint32_t utf8;    /* text: the UTF-8 validator's state */
    uint64_t left;    /* payload bytes of the frame still to come */
    uint64_t pos;     /* payload bytes of the frame so far (mask phase) */
    uint8_t ctl[125];
    size_t ctl_len;
    uint8_t event;     /* ZL_WSD_*: why decode stopped */
    unsigned fail_code; /* ZL_WSD_FAIL */
} zl_wsd_t;

/* Decodes n input bytes at in: the payload of data frames goes to out,
 * which has room for room bytes and may be in itself or below it (the
 * payload moves down over the headers dropped); control payloads to
 * d->ctl. Stops when out is full, at the end of the input, or when a
 * control frame completes or a rule is broken (d->event set; the caller
 * acts on it, clears it and calls again for the rest; after ZL_WSD_FAIL
 * nothing more is decoded). Returns the input bytes used; *made: the
 * payload bytes out got. A text message's bytes that are not UTF-8 are
 * not delivered (the chunk they are in is held back). */
size_t zl_wsd_decode(zl_wsd_t *d, const uint8_t *in, size_t n, uint8_t *out,
                     size_t room, size_t *made);

#endif
