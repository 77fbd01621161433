#!/usr/bin/env python3
# make_corpus.py - writes the committed starting corpus (corpus/<target>/) of the libFuzzer targets.
# The inputs are binary programs in each target's input format (see the header comment of
# fuzz_<target>.c); this script is how they were made and how to change them. Run it from
# anywhere: python3 native/fuzz/make_corpus.py
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def w(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


# endpoint: records [op][len][bytes]; op: 0 bind 1 connect 2 unbind 3 disconnect,
# 0x04 PAIR, 0x08 known endpoint (odd len: the listener), 0x10 flip IPV6, 0x20 len*4
def rec(op, ep=b"", known=False, odd=False):
    if known:
        return bytes([op | 0x08, 1 if odd else 0])
    return bytes([op, len(ep)]) + ep


w("endpoint", "stream-bind-unbind",
  rec(0, b"tcp://127.0.0.1:*") + rec(2, known=True) + rec(2, b"tcp://127.0.0.1:*"))
w("endpoint", "stream-connect-listener",
  rec(1, known=True, odd=True) + rec(3, known=True, odd=True)
  + rec(1, b"tcp://localhost:5555") + rec(3, b"tcp://localhost:5555"))
w("endpoint", "stream-ipv6",
  rec(0x10, b"tcp://[::1]:*") + rec(0, b"tcp://*:0") + rec(1, b"tcp://[::1]:65535")
  + rec(0x10 | 2, b"tcp://*:0"))
w("endpoint", "bad-ports", b"".join(
    rec(op, e) for op in (0, 1, 4, 5, 6, 7)
    for e in (b"tcp://127.0.0.1:99999", b"tcp://127.0.0.1:65536", b"tcp://127.0.0.1:0",
              b"tcp://127.0.0.1:-1")))
w("endpoint", "pair-tcp",
  rec(4, b"tcp://127.0.0.1:*") + rec(4 | 2, known=True) + rec(5, b"tcp://127.0.0.1:1")
  + rec(7, b"tcp://127.0.0.1:1"))
w("endpoint", "pair-inproc",
  rec(4, b"inproc://fuzz") + rec(5, b"inproc://fuzz") + rec(7, b"inproc://fuzz")
  + rec(6, b"inproc://fuzz"))
w("endpoint", "pair-source",
  rec(5, b"tcp://127.0.0.1:0;127.0.0.1:5555") + rec(5, b"tcp://127.0.0.1:99999;127.0.0.1:5555")
  + rec(7, b"tcp://127.0.0.1:0;127.0.0.1:5555"))
w("endpoint", "transports", b"".join(
    rec(op, e) for op in (0, 1, 4, 5)
    for e in (b"ipc:///tmp/x", b"tls://127.0.0.1:1", b"ws://127.0.0.1:1", b"udp://127.0.0.1:1",
              b"tcp://", b"tcp://[::1:5555", b"tcp://:5")))
w("endpoint", "long", bytes([0x20, 80]) + b"tcp://" + b"a" * 300 + b":5555" + b"b" * 9)

# sockopt: [type] then [flags][opt index | 4-byte id][len16][value]; type index:
# 0 STREAM 1 PAIR 2 PUB 3 SUB 4 DEALER 5 ROUTER 6 XPUB 7 XSUB. OPTS is fuzz_sockopt.c's list.
OPTS = [0, 1, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 27, 28,
        32, 33, 34, 35, 36, 37, 39, 40, 42, 51, 54, 56, 57, 61, 66, 69, 70, 71, 72, 74, 75, 76,
        77, 78, 79, 80, 89, 92, 95, 96, 97, 98, 99, 100, 101, 102, 108, 116, 117, 118, -1, 1000]


def oset(opt, val):
    return bytes([0, OPTS.index(opt)]) + struct.pack(">H", len(val)) + val


def oget(opt, n, flags=1):
    return bytes([flags, OPTS.index(opt)]) + struct.pack(">H", n)


def i32(v):
    return struct.pack("<i", v)


w("sockopt", "stream-ints",
  bytes([0]) + oset(23, i32(5)) + oget(23, 4) + oset(17, i32(-1)) + oget(17, 2)
  + oset(18, i32(-2)) + oset(22, struct.pack("<q", 100)) + oget(22, 8))
w("sockopt", "stream-strings",
  bytes([0]) + oget(32, 1) + oget(32, 256) + oset(61, b"\0\0\0\1") + oget(61, 4) + oget(14, 4)
  + oget(15, 4) + oget(16, 3))
w("sockopt", "tls-everywhere",
  bytes([1]) + oset(95, b"cert") + oset(117, b"") + oset(100, b"host") + oget(102, 16))
w("sockopt", "sub-subscribe",
  bytes([3]) + oset(6, b"topic") + oset(7, b"topic") + oset(6, b"") + oget(116, 4))
w("sockopt", "router-id",
  bytes([5]) + oset(5, b"x" * 300) + oset(5, b"peer") + oget(5, 255) + oset(33, i32(1)))
w("sockopt", "raw-ids",
  bytes([0]) + bytes([2]) + struct.pack(">i", -2147483648) + struct.pack(">H", 4) + i32(1)
  + bytes([3]) + struct.pack(">i", 0x7fffffff) + struct.pack(">H", 16))
w("sockopt", "null-values",
  bytes([0]) + bytes([4, OPTS.index(23), 0, 4]) + bytes([5, OPTS.index(32), 0, 64])
  + bytes([13, OPTS.index(23), 0, 4]))


# stream_send: [setup] then [flags][len16][bytes]; flags: 1 DONTWAIT 2 SNDMORE 4 NULL 8 filler,
# bits 4-5 id: 0 live 1 stale 2 four input bytes 3 (len & 7) input bytes
def f(flags, payload=b"", length=None):
    n = len(payload) if length is None else length
    return bytes([flags]) + struct.pack(">H", n) + payload


live = f(0x02)
w("stream_send", "hello", bytes([0]) + live + f(0, b"hello world") + live + f(0, b"second"))
w("stream_send", "close", bytes([0]) + live + f(0, b"bye") + live + f(0) + live + f(0, b"late"))
w("stream_send", "hwm-filler",
  bytes([1]) + b"".join(live + f(0x08 | 0x01, length=60000) for _ in range(6)))
w("stream_send", "hwm-blocking",
  bytes([4 | 2]) + b"".join(live + f(0x08, length=65535) for _ in range(6)))
w("stream_send", "bad-ids",
  bytes([0]) + f(0x00) + f(0x12) + f(0x22, b"\0\0\0\0") + f(0x32, b"abc", 3) + f(0x32, b"", 0)
  + f(0x06) + live + f(0x04, length=5) + f(0, b"ok"))
w("stream_send", "reset",
  bytes([0x08 | 0x20]) + b"".join(live + f(0x08, length=30000) for _ in range(4)))
# the input ends with an id selected while the queue is at SNDHWM: the harness's closing
# payload is refused, which ends the message too
w("stream_send", "hwm-end-refused",
  bytes([1]) + b"".join(live + f(0x08 | 0x01, length=60000) for _ in range(3)) + live)

# stream_multi: [setup] then records [op][operands]; setup: client count, SNDHWM, SNDTIMEO 2 ms,
# SNDMORE on payload frames; op bits 0-2: 0 MSG 1 ID 2 FRAME 3 CLOSE 4 READ 5 VANISH 6 RECV
# 7 EVENTS, bits 3-4 the client, bits 5-7 m (MSG/FRAME: 1 filler 2 DONTWAIT 4 NULL; ID: the
# kind of id; VANISH: 1 reset)
FILL, DW, NUL = 1, 2, 4


def ms(clients=2, hwm=1, timeo=False, more=False):
    return bytes([{2: 0, 3: 1, 4: 2}[clients] | {1: 0, 2: 1, 5: 2, 0: 3}[hwm] << 2
                  | (0x10 if timeo else 0) | (0x20 if more else 0)])


def mop(what, k=0, m=0):
    return bytes([what | k << 3 | m << 5])


def mpayload(what, k, data, m, length):
    n = len(data) if length is None else length
    return mop(what, k, m) + struct.pack(">H", n) + (b"" if m & (FILL | NUL) else data)


def msg(k, data=b"", m=0, length=None):
    return mpayload(0, k, data, m, length)


def mframe(data=b"", m=0, length=None):
    return mpayload(2, 0, data, m, length)


def mid(k, m=0, extra=b""):
    return mop(1, k, m) + extra


def mclose(k):
    return mop(3, k)


def mread(k, n=0):
    return mop(4, k) + bytes([n])


def mvanish(k, reset=False):
    return mop(5, k, 1 if reset else 0)


RECV, EVENTS = mop(6), mop(7)
big = msg(0, m=FILL | DW, length=60000)
w("stream_multi", "two-hello",
  ms(2, 5) + msg(0, b"hello") + msg(1, b"world") + msg(0, b"again") + mread(0) + mread(1))
# connection 0 held at SNDHWM, then another connection's message and a close
w("stream_multi", "hwm-then-other",
  ms(2, 1) + big * 3 + msg(1, b"other") + mread(1) + mclose(1) + mread(0, 4) + big + mread(0))
w("stream_multi", "hwm-then-close",
  ms(3, 2) + msg(0, m=FILL | DW, length=65535) * 4 + mclose(1) + msg(2, b"x" * 100) + mread(2)
  + mread(0, 255) + EVENTS + msg(0, b"tail") + mread(0))
w("stream_multi", "hwm-sndtimeo",
  ms(2, 1, timeo=True) + msg(0, m=FILL, length=65535) * 3 + msg(1, m=FILL, length=30000)
  + mread(0) + EVENTS + msg(0, b"more"))
w("stream_multi", "vanish",
  ms(4, 2) + big * 3 + mvanish(0) + big * 2 + RECV + msg(1, b"after") + msg(2, m=FILL, length=9000)
  + mvanish(2, reset=True) + msg(2, b"x") + RECV + EVENTS + mclose(3) + mread(1) + RECV)
w("stream_multi", "frames",
  ms(2, 1, more=True) + mid(0) + mframe(b"p0") + mid(1, 1) + mid(0, 2) + mid(0, 3, b"\0\0\0\0")
  + mid(0, 4) + mid(0, 5) + mframe(b"abcd") + mid(1) + mframe(m=NUL, length=5) + mid(1)
  + mframe(b"") + mid(1) + mid(0) + mframe(m=FILL | DW, length=60000) + mid(0) + mframe(b"ok"))
w("stream_multi", "interleaved-reads",
  ms(3, 5) + b"".join(msg(k, m=FILL | DW, length=20000) + mread(k, 50) + EVENTS
                      for _ in range(4) for k in range(3)) + mread(1))
w("stream_multi", "unlimited",
  ms(2, 0) + msg(0, m=FILL, length=65535) * 8 + msg(1, m=FILL, length=65535) * 8 + mread(1))

# stream_recv: [mode][8 schedule bytes][bytes]; mode bits 0-1: 0 shutdown 1 close 2 reset
# 3 local close, bit 2 chunked by (mode >> 3) + 1; schedule: bits 0-2 size index
# (0 1 2 3 5 64 4096 65536), 8 msg_recv, 16 DONTWAIT; byte 0 bits 5-6 the framing (0 LENGTH,
# 1 RAW, 2 BATCH), byte 1 bits 5-7 MAXMSGSIZE (-1 0 1 5 64 300 4096 -1)
LEN, RAW, BATCH = 0x00, 0x20, 0x40


def pk(body):
    return struct.pack(">I", len(body)) + body


w("stream_recv", "shutdown", bytes([0]) + bytes([7] * 8) + b"hello, stream")
w("stream_recv", "close-small-buffers",
  bytes([1]) + bytes([0, 1, 2, 3, 4, 5, 6, 7]) + bytes(range(256)) * 4)
w("stream_recv", "reset", bytes([2]) + bytes([0x17, 0x10, 0x08, 2, 0x18, 5, 6, 1]) + b"x" * 3000)
w("stream_recv", "local-close", bytes([3]) + bytes([6] * 8) + b"abcdefgh" * 100)
w("stream_recv", "one-byte-chunks", bytes([0x04]) + bytes([2, 2, 3, 1, 0, 8, 2, 2]) + b"0123456789")
w("stream_recv", "single-byte", bytes([0]) + bytes([6] * 8) + b"z")
w("stream_recv", "empty", bytes([1]) + bytes([6] * 8))
w("stream_recv", "length-packets", bytes([0]) + bytes([7 | LEN] + [6] * 7)
  + pk(b"hello") + pk(b"\x01") + pk(b"x" * 300))
w("stream_recv", "length-chunked-small", bytes([0x04 | (2 << 3)]) + bytes([3 | LEN, 2, 5, 0, 1, 8, 6, 7])
  + pk(b"ab") + pk(b"c" * 70))
w("stream_recv", "length-zero", bytes([0]) + bytes([6 | LEN] + [6] * 7) + pk(b"ok") + b"\0\0\0\0tail")
w("stream_recv", "length-over-max", bytes([1]) + bytes([6 | LEN, 6 | 0x60] + [6] * 6)
  + pk(b"12345") + pk(b"123456"))
w("stream_recv", "batch-packets", bytes([0]) + bytes([5 | BATCH, 4, 3, 6, 7, 5, 2, 1])
  + pk(b"a" * 100) + pk(b"b") + pk(b"c" * 5000))
w("stream_recv", "batch-chunked", bytes([0x04 | (6 << 3)]) + bytes([5 | BATCH, 8, 5, 5, 6, 5, 16, 5])
  + pk(b"0123456789") * 8)
w("stream_recv", "raw-lone-bytes", bytes([0x04]) + bytes([1 | RAW, 1, 2, 1, 0, 1, 7, 1]) + b"abcdef")
w("stream_recv", "raw-fin", bytes([0]) + bytes([5 | RAW] + [5] * 7) + b"last bytes")


# zmp: [type][read size][MAXMSGSIZE][buffer] then the wire (fuzz_zmp.c)
def zf(flags, body):
    return bytes([0x5a, 1, flags, 0]) + struct.pack(">I", len(body)) + body


def hello(t, rid=b""):
    return zf(2, bytes([1, t, len(rid)]) + rid)


READY = zf(2, b"\x04")
w("zmp", "pair-data", bytes([0, 5, 0, 1]) + hello(0, b"peer") + READY
  + zf(1, b"part") + zf(0, b"last") + zf(0, b""))
w("zmp", "router-metadata", bytes([4, 200, 4, 0]) + hello(5, bytes(range(16)))
  + zf(2, b"\x04\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x02D1")
  + zf(1, b"a") + zf(0, b"b" * 400))
w("zmp", "xpub-sub-cancel", bytes([5, 64, 0, 2]) + hello(2) + READY
  + zf(8, b"topic") + zf(0x10, b"topic") + zf(0, b"\x01raw"))
w("zmp", "heartbeats", bytes([0, 3, 0, 0]) + hello(0) + zf(2, b"\x02\x00\x1e\x02cx") + READY
  + zf(2, b"\x02") + zf(2, b"\x03\x02cx") + zf(2, b"\x02\x00\x00\x00"))
w("zmp", "peer-error", bytes([3, 1, 0, 1]) + hello(6) + READY + zf(2, b"\x05\x04\x0dbody too large"))
w("zmp", "zmtp-greeting", bytes([0, 64, 0, 2]) + bytes([0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f]))
w("zmp", "type-mismatch", bytes([1, 64, 0, 2]) + hello(5) + READY)
w("zmp", "too-big", bytes([0, 64, 4, 2]) + hello(0) + READY + zf(0, b"x" * 301))
