/*
 * fuzz_zmp.c - libFuzzer target: ZMP v1 input as the libzmq socket types'
 * engine receives it. The harness (native/libzmq/zmp_fuzz.cpp, compiled and
 * instrumented with the engine's decoder and protocol rules) feeds the
 * bytes through zmp_decoder_t's own buffers in reads of a chosen size and
 * hands each frame to zmp_proto_t, as zmp_engine_t does: HELLO first,
 * control frames until READY, then data. Input: byte 0 the local socket
 * type (PAIR, PUB, SUB, DEALER, ROUTER, XPUB, XSUB), byte 1 the read size,
 * byte 2 MAXMSGSIZE (0, 1, 16, 300, 70000, 1 MiB), byte 3 the receive buffer
 * (64, 257, 8192); the rest is the wire. Checked: every failure has a known
 * ERROR code and a reason; nothing is delivered before READY or from a
 * control frame; no data frame over MAXMSGSIZE; READY only from a
 * compatible socket type; a HEARTBEAT's answer is well formed; every
 * delivered frame encodes and decodes again unchanged; no crash, leak or
 * undefined behaviour.
 */
#include <stddef.h>
#include <stdint.h>

int netzlink_zmp_fuzz_one(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return netzlink_zmp_fuzz_one(data, size);
}
