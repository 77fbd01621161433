/*
 * fuzz_sockopt.c - libFuzzer target: zlink_setsockopt / zlink_getsockopt
 * with arbitrary option ids, value bytes and lengths on a STREAM socket
 * (the library's own option table) or a libzmq socket (the zlink-only
 * option filter, then libzmq).
 *
 * Input: [type] then records [flags][opt][len hi][len lo][value bytes].
 * type picks the socket (STREAM, PAIR, PUB, SUB, DEALER, ROUTER, XPUB,
 * XSUB). flags bit 0: get instead of set; bit 1: the option id is the
 * next 4 input bytes (any int) instead of an index into the ABI's option
 * list; bit 2: NULL value pointer; bit 3 (get, STREAM only): NULL length
 * pointer. len is masked to 0..4095. Values are heap copies of exactly
 * len bytes, and get buffers exactly len bytes, so ASan sees any access
 * outside them. libzmq itself dereferences a NULL value whose length is
 * not 0 (its contract: no check), so libzmq sockets get NULL only with
 * length 0. A fresh socket per input keeps inputs independent.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const int types[] = {ZLINK_STREAM, ZLINK_PAIR,   ZLINK_PUB,  ZLINK_SUB,
                            ZLINK_DEALER, ZLINK_ROUTER, ZLINK_XPUB, ZLINK_XSUB};

/* every option the ABI names, zlink-only ones included, plus neighbours */
static const int options[] = {
    0,   1,   4,   5,   6,   7,   8,   9,   11,  12,  13,  14,  15,  16,  17,  18,
    19,  21,  22,  23,  24,  25,  27,  28,  32,  33,  34,  35,  36,  37,  39,  40,
    42,  51,  54,  56,  57,  61,  66,  69,  70,  71,  72,  74,  75,  76,  77,  78,
    79,  80,  89,  92,  95,  96,  97,  98,  99,  100, 101, 102, 108, 116, 117, 118,
    43,  44,  45,  46,  47,  48,  49,  50,  55,  -1,  1000};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_t r = {data, size};
    int type = types[fuzz_u8(&r) % (sizeof types / sizeof types[0])];
    void *s = fuzz_socket(type);
    int is_stream = type == ZLINK_STREAM;
    while (r.n) {
        uint8_t flags = fuzz_u8(&r);
        int opt;
        if (flags & 0x02) {
            uint32_t raw = (uint32_t)fuzz_u16(&r) << 16;
            raw |= fuzz_u16(&r);
            opt = (int)raw;
        } else {
            opt = options[fuzz_u8(&r) % (sizeof options / sizeof options[0])];
        }
        size_t len = fuzz_u16(&r) & 0x0fff;
        int null_value = (flags & 0x04) && (is_stream || len == 0);
        if (flags & 0x01) {
            unsigned char *buf = null_value ? NULL : malloc(len ? len : 1);
            FUZZ_ASSERT(null_value || buf);
            size_t got = len;
            int null_len = (flags & 0x08) && is_stream;
            int rc = zlink_getsockopt(s, opt, buf, null_len ? NULL : &got);
            FUZZ_ASSERT(rc == 0 || (rc == -1 && zlink_errno() != 0));
            /* never claims more than the buffer holds */
            if (rc == 0)
                FUZZ_ASSERT(got <= len);
            free(buf);
        } else {
            size_t got;
            const uint8_t *b = fuzz_bytes(&r, len, &got);
            unsigned char *val = NULL;
            if (!null_value) {
                val = calloc(1, len ? len : 1);
                FUZZ_ASSERT(val);
                memcpy(val, b, got);
            }
            int rc = zlink_setsockopt(s, opt, val, len);
            FUZZ_ASSERT(rc == 0 || (rc == -1 && zlink_errno() != 0));
            /* zlink-only options: the TLS ones are refused on every socket
             * type when the library has no tls:// (every type takes them when
             * it has; a bad value is still EINVAL; 98 set on an XPUB is
             * XPUB_MANUAL_LAST_VALUE, as in zlink); ZMP_METADATA is refused on STREAM and
             * taken by the libzmq types as an int 0 or 1 only; libzmq's
             * security options (PLAIN 44-46, CURVE 47-50, ZAP_DOMAIN 55) are
             * refused on the libzmq types (ZMP has no mechanism) */
            int zmp_ok = 0;
            if (opt == ZLINK_ZMP_METADATA && !is_stream && !null_value && len == sizeof(int)) {
                int iv;
                memcpy(&iv, val, sizeof iv);
                zmp_ok = iv == 0 || iv == 1;
            }
            if (opt == ZLINK_ZMP_METADATA)
                FUZZ_ASSERT(zmp_ok ? rc == 0 : (rc == -1 && zlink_errno() == EINVAL));
            if ((opt >= ZLINK_TLS_CERT && opt <= ZLINK_TLS_PASSWORD) && !zlink_has("tls") &&
                !(opt == 98 && type == ZLINK_XPUB))
                FUZZ_ASSERT(rc == -1 && zlink_errno() == EINVAL);
            if (!is_stream && ((opt >= 44 && opt <= 50) || opt == 55))
                FUZZ_ASSERT(rc == -1 && zlink_errno() == EINVAL);
            free(val);
        }
    }
    FUZZ_ASSERT(zlink_close(s) == 0);
    return 0;
}
