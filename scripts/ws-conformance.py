#!/usr/bin/env python3
"""WebSocket conformance of NetZlink's ws:// (RFC 6455), in the shape of
Autobahn|Testsuite's case groups (1 framing, 2 ping/pong, 3 reserved bits,
4 opcodes, 5 fragmentation, 6 UTF-8, 7 close, 9 limits, 10 misc), plus the
cases that apply to our ws client (group C). The cases are written here from
the published case descriptions, over raw sockets, with no WebSocket library:
this script is the peer.

The server under test is zl_echo (native/tests/zl_echo.c): a STREAM socket
in RAW framing bound to ws://127.0.0.1:*/ that sends back every payload it
receives. A STREAM socket carries bytes, not messages: the echo comes back as
binary messages of its own sizes, so echo cases compare the bytes. The
client cases run `zl_echo connect` against a raw server in this script.

Each case is OK, BY DESIGN (a difference docs/websocket-conformance.md
explains) or FAILED.

  scripts/ws-conformance.py            run, compare with the table in
                                       docs/websocket-conformance.md; exit 1
                                       on a FAILED row or a stale table
  scripts/ws-conformance.py --write    run and rewrite that table

ZL_ECHO names the zl_echo binary (default native/build/tests/zl_echo)."""
import base64
import hashlib
import os
import re
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "websocket-conformance.md")
BEGIN, END = "<!-- table: begin -->", "<!-- table: end -->"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OK, DESIGN, FAILED = "OK", "BY DESIGN", "FAILED"
WAIT = 5.0  # seconds a case waits for an answer it expects

# op codes
CONT, TEXT, BIN, CLOSE, PING, PONG = 0, 1, 2, 8, 9, 10


def zl_echo():
    p = os.environ.get("ZL_ECHO") or os.path.join(ROOT, "native", "build", "tests", "zl_echo")
    if not os.access(p, os.X_OK):
        print(f"ws-conformance: no zl_echo at {p} (build native/ first or set ZL_ECHO)")
        sys.exit(2)
    return p


def xor_mask(data, key):
    if not data:
        return b""
    n = len(data)
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big")


def frame(op, payload=b"", fin=True, rsv=0, mask=True, length=None):
    """one frame; length overrides the length field (for bad lengths)"""
    n = len(payload) if length is None else length
    h = bytes([(0x80 if fin else 0) | (rsv << 4) | op])
    m = 0x80 if mask else 0
    if n < 126:
        h += bytes([m | n])
    elif n < 65536:
        h += bytes([m | 126]) + n.to_bytes(2, "big")
    else:
        h += bytes([m | 127]) + n.to_bytes(8, "big")
    if mask:
        key = os.urandom(4)
        return h + key + xor_mask(payload, key)
    return h + payload


def close_payload(code, reason=b""):
    return code.to_bytes(2, "big") + reason


class Peer:
    """a raw WebSocket peer on a connected socket: sends frames, reads
    what comes back as events"""

    def __init__(self, sock, server_side=False):
        self.s = sock
        self.buf = b""
        self.server_side = server_side  # then frames we get must be masked
        self.events = []
        self.closed = False

    def send(self, data, chop=None):
        try:
            if not chop:
                self.s.sendall(data)
                return
            for i in range(0, len(data), chop):
                self.s.sendall(data[i:i + chop])
                time.sleep(0.0005)
        except OSError:
            pass

    def _fill(self, deadline):
        while True:
            t = deadline - time.time()
            if t <= 0:
                return False
            self.s.settimeout(t)
            try:
                d = self.s.recv(1 << 20)
            except socket.timeout:
                return False
            except OSError:
                d = b""
            if not d:
                self.closed = True
                return False
            self.buf += d
            return True

    def next_event(self, timeout=WAIT):
        """('data', op, payload, fin, masked) / ('ping', p) / ('pong', p) /
        ('close', code or None, reason, masked) / ('bad', text) / ('tcpclose',)
        / None on timeout"""
        deadline = time.time() + timeout
        while True:
            ev = self._parse()
            if ev:
                self.events.append(ev)
                return ev
            if self.closed:
                return ("tcpclose",)
            if not self._fill(deadline):
                if self.closed:
                    continue
                return None

    def _parse(self):
        b = self.buf
        if len(b) < 2:
            return None
        fin, rsv, op = b[0] >> 7, (b[0] >> 4) & 7, b[0] & 15
        masked, n = b[1] >> 7, b[1] & 127
        at = 2
        if n == 126:
            if len(b) < 4:
                return None
            n, at = int.from_bytes(b[2:4], "big"), 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, at = int.from_bytes(b[2:10], "big"), 10
        key = b""
        if masked:
            if len(b) < at + 4:
                return None
            key, at = b[at:at + 4], at + 4
        if len(b) < at + n:
            return None
        p = b[at:at + n]
        if masked:
            p = xor_mask(p, key)
        self.buf = b[at + n:]
        if rsv or op not in (CONT, TEXT, BIN, CLOSE, PING, PONG):
            return ("bad", f"rsv {rsv} op {op}")
        if op == PING:
            return ("ping", p, masked)
        if op == PONG:
            return ("pong", p, masked)
        if op == CLOSE:
            code = int.from_bytes(p[:2], "big") if len(p) >= 2 else None
            return ("close", code, p[2:], masked)
        return ("data", op, p, fin, masked)

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def client_handshake(port, path="/"):
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16))
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\nSec-WebSocket-Key: " + key +
              b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d:
            raise RuntimeError("no handshake answer")
        head += d
    head, rest = head.split(b"\r\n\r\n", 1)
    want = base64.b64encode(hashlib.sha1(key + GUID).digest())
    if not head.startswith(b"HTTP/1.1 101") or b"Sec-WebSocket-Accept: " + want not in head:
        raise RuntimeError(f"bad handshake answer {head!r}")
    p = Peer(s)
    p.buf = rest
    return p


# ---- what a case expects -------------------------------------------------


def run_exchange(peer, echo_len, pings, close_after=True):
    """collects events: the echoed bytes (until echo_len), the pongs (until
    the one for the last of pings, the payloads of the pings sent), then
    sends close 1000 if close_after and waits for the end; returns a summary
    dict"""
    last = pings[-1] if pings else None
    got = bytearray()
    pongs = []
    text_echo = False
    bad = None
    close = None
    tcp = False
    deadline = time.time() + WAIT + echo_len / 5e6
    while (len(got) < echo_len or (pings and (not pongs or pongs[-1] != last))) and \
            time.time() < deadline:
        ev = peer.next_event(max(0.05, deadline - time.time()))
        if ev is None:
            break
        if ev[0] == "data":
            got += ev[2]
            text_echo |= ev[1] == TEXT
        elif ev[0] == "pong":
            pongs.append(ev[1])
        elif ev[0] == "close":
            close = ev
            break
        elif ev[0] == "bad":
            bad = ev[1]
            break
        elif ev[0] == "tcpclose":
            tcp = True
            break
    if close_after and close is None and not tcp and bad is None:
        peer.send(frame(CLOSE, close_payload(1000)))
        while True:
            ev = peer.next_event(WAIT)
            if ev is None or ev[0] == "tcpclose":
                tcp = ev is not None
                break
            if ev[0] == "close":
                close = ev
            elif ev[0] == "data":
                got += ev[2]
            elif ev[0] == "pong":
                pongs.append(ev[1])
    return {"got": bytes(got), "pongs": pongs, "close": close, "tcp": tcp, "bad": bad}


def expect_fail(peer, code=1002, before=b""):
    """the connection is failed: a close with code (or none) and the TCP
    close; bytes before it may be echoed"""
    got = bytearray()
    close = None
    while True:
        ev = peer.next_event(WAIT)
        if ev is None:
            return FAILED, "the connection stayed open"
        if ev[0] == "data":
            got += ev[2]
        elif ev[0] == "close":
            close = ev
        elif ev[0] == "tcpclose":
            break
        elif ev[0] == "pong":
            continue
        elif ev[0] == "bad":
            return FAILED, f"bad frame from the server: {ev[1]}"
    if bytes(got) != before[:len(got)]:
        return FAILED, "other bytes before the failure"
    if close is None:
        return FAILED, "TCP closed without a close frame"
    if close[1] != code:
        return FAILED, f"close {close[1]}, want {code}"
    return OK, f"close {code}, TCP closed"


def verdict_echo(r, data, pings=(), text=False):
    """text: True a text message, False binary (or no message), None a
    message that has no bytes"""
    if r["bad"]:
        return FAILED, f"bad frame: {r['bad']}"
    if r["got"] != data:
        return FAILED, f"{len(r['got'])} of {len(data)} bytes echoed"
    # every pong answers a ping, in the pings' order, and the last ping is
    # answered; a pong may answer only the latest of several pings that came
    # before it could go (RFC 6455 5.5.3; B4)
    it = iter(pings)
    if (pings and (not r["pongs"] or r["pongs"][-1] != pings[-1])) or \
            not all(any(q == x for x in it) for q in r["pongs"]):
        return FAILED, f"pongs {r['pongs']!r}, want {list(pings)!r} or the latest ones in order"
    # several pings: how many pongs depends on how the reads fell, so the
    # verdict does not (Autobahn wants one pong per ping)
    several = len(pings) > 1
    if not r["close"] or r["close"][1] != 1000 or not r["tcp"]:
        return FAILED, f"no clean close (close {r['close'] and r['close'][1]}, tcp {r['tcp']})"
    if text is None or (text and not data):
        return DESIGN, "an empty message has no bytes to echo (B2)"
    pong_note = ", pongs in order, the last ping answered (B4)" if several else ", pong"
    if text:
        return DESIGN, "bytes echoed exactly, as binary (B1)" + (pong_note if pings else "")
    note = "bytes echoed exactly" if data else "clean close"
    if pings:
        note += pong_note
    return (DESIGN if several else OK), note


# ---- the server cases -------------------------------------------------------

CASES = []  # (id, group, description, fn(port) -> (result, note))


def case(cid, desc):
    def deco(fn):
        CASES.append((cid, desc, fn))
        return fn
    return deco


def echo_case(cid, desc, frames, data, text, pings=(), chop=None):
    def fn(port):
        p = client_handshake(port)
        try:
            p.send(b"".join(frames), chop)
            return verdict_echo(run_exchange(p, len(data), list(pings)), data, pings, text)
        finally:
            p.close()
    CASES.append((cid, desc, fn))


def fail_case(cid, desc, frames, before=b"", code=1002, chop=None):
    def fn(port):
        p = client_handshake(port)
        try:
            p.send(b"".join(frames), chop)
            return expect_fail(p, code, before)
        finally:
            p.close()
    CASES.append((cid, desc, fn))


def payload(n, seed=1):
    return bytes(((i * 37 + seed) ^ (i >> 6)) & 0xFF for i in range(n)) if n < 70000 else \
        (bytes(range(251)) * (n // 251 + 1))[:n]


def text_payload(n):
    return (b"*" * n)


def build_cases():
    # 1 framing
    for i, n in enumerate([0, 125, 126, 127, 128, 65535, 65536], 1):
        echo_case(f"1.1.{i}", f"text message, payload {n} bytes", [frame(TEXT, text_payload(n))],
                  text_payload(n), True)
    echo_case("1.1.8", "text message, payload 65536 bytes, sent in chunks of 997 octets",
              [frame(TEXT, text_payload(65536))], text_payload(65536), True, chop=997)
    for i, n in enumerate([0, 125, 126, 127, 128, 65535, 65536], 1):
        echo_case(f"1.2.{i}", f"binary message, payload {n} bytes", [frame(BIN, payload(n))],
                  payload(n), False if n else None)
    echo_case("1.2.8", "binary message, payload 65536 bytes, sent in chunks of 997 octets",
              [frame(BIN, payload(65536))], payload(65536), False, chop=997)

    # 2 ping/pong
    echo_case("2.1", "ping without payload: pong without payload", [frame(PING)], b"", False,
              pings=[b""])
    echo_case("2.2", "ping with a small text payload: pong with it",
              [frame(PING, b"Hello, world!")], b"", False, pings=[b"Hello, world!"])
    echo_case("2.3", "ping with a small binary payload: pong with it",
              [frame(PING, bytes([0, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0, 0xff]))], b"", False,
              pings=[bytes([0, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0, 0xff])])
    echo_case("2.4", "ping with a 125-byte payload: pong with it", [frame(PING, b"\xfe" * 125)],
              b"", False, pings=[b"\xfe" * 125])
    fail_case("2.5", "ping with a 126-byte payload: failed", [frame(PING, b"\xfe" * 126)])
    echo_case("2.6", "ping with a 125-byte payload sent a byte at a time: pong",
              [frame(PING, b"\xfe" * 125)], b"", False, pings=[b"\xfe" * 125], chop=1)
    echo_case("2.7", "unsolicited pong without payload: ignored", [frame(PONG)], b"", False)
    echo_case("2.8", "unsolicited pong with payload: ignored", [frame(PONG, b"unsolicited")],
              b"", False)
    echo_case("2.9", "unsolicited pong, then ping: one pong, for the ping",
              [frame(PONG, b"unsolicited"), frame(PING, b"ping!")], b"", False, pings=[b"ping!"])
    tp = [f"payload-{i}".encode() for i in range(10)]
    echo_case("2.10", "10 pings at once: pongs in order, the last one answered", [frame(PING, x) for x in tp], b"",
              False, pings=tp)
    echo_case("2.11", "10 pings sent a byte at a time: pongs in order, the last one answered",
              [frame(PING, x) for x in tp], b"", False, pings=tp, chop=1)

    # 3 reserved bits
    fail_case("3.1", "text message with RSV1 set: failed", [frame(TEXT, b"Hello", rsv=1)])
    fail_case("3.2", "text, text with RSV2, ping: the first echoed, then failed",
              [frame(TEXT, b"Hello"), frame(TEXT, b"Hello", rsv=2), frame(PING)], before=b"Hello")
    fail_case("3.3", "text, text with RSV1+RSV2, ping, sent per frame: failed",
              [frame(TEXT, b"Hello"), frame(TEXT, b"Hello", rsv=3), frame(PING)], before=b"Hello")
    fail_case("3.4", "text, text with RSV3, ping, sent a byte at a time: failed",
              [frame(TEXT, b"Hello"), frame(TEXT, b"Hello", rsv=4), frame(PING)], before=b"Hello",
              chop=1)
    fail_case("3.5", "binary message with RSV1+RSV3: failed", [frame(BIN, b"\xff" * 8, rsv=5)])
    fail_case("3.6", "ping with RSV2+RSV3: failed", [frame(PING, b"Hello", rsv=6)])
    fail_case("3.7", "close with RSV1+RSV2+RSV3: failed", [frame(CLOSE, close_payload(1000), rsv=7)])

    # 4 opcodes
    for group, kind, ops in (("4.1", "data", [3, 4, 5, 6, 7]), ("4.2", "control", [11, 12, 13, 14, 15])):
        for i, op in enumerate(ops, 1):
            pre = [frame(TEXT, b"Hello")] if i >= 3 else []
            fail_case(f"{group}.{i}", f"reserved {kind} opcode {op}" + (" after a text message" if pre else "") +
                      (" with payload" if i % 2 == 0 else "") + ": failed",
                      pre + [frame(op, b"reserved" if i % 2 == 0 else b"")],
                      before=b"Hello" if pre else b"")

    # 5 fragmentation
    fail_case("5.1", "ping in 2 fragments: failed",
              [frame(PING, b"frag1", fin=False), frame(CONT, b"frag2")])
    fail_case("5.2", "pong in 2 fragments: failed",
              [frame(PONG, b"frag1", fin=False), frame(CONT, b"frag2")])
    two = [frame(TEXT, b"fragment1", fin=False), frame(CONT, b"fragment2")]
    echo_case("5.3", "text message in 2 fragments", two, b"fragment1fragment2", True)
    echo_case("5.4", "text message in 2 fragments, sent a byte at a time", two,
              b"fragment1fragment2", True, chop=1)
    echo_case("5.5", "text message in 2 fragments, sent in chunks of 3 octets", two,
              b"fragment1fragment2", True, chop=3)
    withping = [frame(TEXT, b"fragment1", fin=False), frame(PING, b"ping payload"),
                frame(CONT, b"fragment2")]
    echo_case("5.6", "text in 2 fragments, a ping between: pong, text echoed", withping,
              b"fragment1fragment2", True, pings=[b"ping payload"])
    echo_case("5.7", "the same sent in chunks of 5 octets", withping, b"fragment1fragment2", True,
              pings=[b"ping payload"], chop=5)
    echo_case("5.8", "the same sent a byte at a time", withping, b"fragment1fragment2", True,
              pings=[b"ping payload"], chop=1)
    for i, (fin, chop) in enumerate([(True, None), (True, 5), (True, 1), (False, None), (False, 5),
                                     (False, 1)], 9):
        fail_case(f"5.{i}", f"continuation {'with' if fin else 'without'} FIN and no message to "
                  f"continue{', in chunks of %d' % chop if chop else ''}, then a text message: failed",
                  [frame(CONT, b"non-continuation payload", fin=fin), frame(TEXT, b"Hello, world!")],
                  chop=chop)
    fail_case("5.15", "text in 2 fragments, then a continuation and a text: first echoed, then "
              "failed", [frame(TEXT, b"fragment1", fin=False), frame(CONT, b"fragment2"),
                         frame(CONT, b"fragment3", fin=False), frame(TEXT, b"fragment4")],
              before=b"fragment1fragment2")
    fail_case("5.16", "continuation, text, continuation (twice): failed",
              [frame(CONT, b"fragment1", fin=False), frame(TEXT, b"fragment2", fin=False),
               frame(CONT, b"fragment3")] * 2)
    fail_case("5.17", "the same with FIN on the first continuation: failed",
              [frame(CONT, b"fragment1"), frame(TEXT, b"fragment2", fin=False),
               frame(CONT, b"fragment3")] * 2)
    fail_case("5.18", "text fragment, then a new text message inside it: failed",
              [frame(TEXT, b"fragment1", fin=False), frame(TEXT, b"fragment2")],
              before=b"fragment1")
    five = [frame(TEXT, b"fragment1", fin=False), frame(CONT, b"fragment2", fin=False),
            frame(PING, b"pongme 1!"), frame(CONT, b"fragment3", fin=False),
            frame(PING, b"pongme 2!"), frame(CONT, b"fragment4", fin=False),
            frame(CONT, b"fragment5")]
    echo_case("5.19", "text in 5 fragments, 2 pings between: pongs in order, text echoed", five,
              b"fragment1fragment2fragment3fragment4fragment5", True,
              pings=[b"pongme 1!", b"pongme 2!"])
    echo_case("5.20", "the same sent a byte at a time", five,
              b"fragment1fragment2fragment3fragment4fragment5", True,
              pings=[b"pongme 1!", b"pongme 2!"], chop=1)

    # 6 UTF-8 (the validity of each sequence is what Python's strict codec
    # says, not our validator)
    def utf8_case(cid, desc, data, frames=None, chop=None):
        try:
            data.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        frames = frames or [frame(TEXT, data)]
        if valid:
            echo_case(cid, desc + ": echoed", frames, data, True if data else None, chop=chop)
        else:
            fail_case(cid, desc + ": failed (1007)", frames, code=1007,
                      before=data, chop=chop)

    echo_case("6.1.1", "empty text message", [frame(TEXT)], b"", None)
    echo_case("6.1.2", "empty text message in 3 empty fragments",
              [frame(TEXT, fin=False), frame(CONT, fin=False), frame(CONT)], b"", None)
    echo_case("6.1.3", "text message: empty fragment, 'middle frame', empty fragment",
              [frame(TEXT, fin=False), frame(CONT, b"middle frame", fin=False), frame(CONT)],
              b"middle frame", True)
    hello = "Hello-µ@ßöäüàá-UTF-8!!".encode()
    utf8_case("6.2.1", "valid UTF-8 with 2-byte characters in one frame", hello)
    utf8_case("6.2.2", "the same, split at a character boundary", hello,
              [frame(TEXT, hello[:12], fin=False), frame(CONT, hello[12:])])
    utf8_case("6.2.3", "the same, one byte per frame", hello,
              [frame(TEXT if i == 0 else CONT, hello[i:i + 1], fin=i == len(hello) - 1)
               for i in range(len(hello))])
    kosme = "κόσμε".encode()
    bad = b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64"
    utf8_case("6.3.1", "'κόσμε' followed by a surrogate (ED A0 80)", bad)
    utf8_case("6.3.2", "the same, one byte per frame", bad,
              [frame(TEXT if i == 0 else CONT, bad[i:i + 1], fin=i == len(bad) - 1)
               for i in range(len(bad))])
    ff = b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80\x65\x64\x69\x74\x65\x64"
    utf8_case("6.4.1", "fail fast: 'κόσμε', F4 90 80 80 (above U+10FFFF), more, in 3 fragments",
              ff, [frame(TEXT, ff[:12], fin=False), frame(CONT, ff[12:15], fin=False),
                   frame(CONT, ff[15:])])
    utf8_case("6.4.2", "fail fast: the same, split inside the bad sequence", ff,
              [frame(TEXT, ff[:11], fin=False), frame(CONT, ff[11:12], fin=False),
               frame(CONT, ff[12:])])
    utf8_case("6.5.1", "'κόσμε'", kosme)
    for i in range(1, len(kosme) + 1):
        utf8_case(f"6.6.{i}", f"the first {i} byte(s) of 'κόσμε'", kosme[:i])
    seqs = [
        ("6.7", "first sequence of each length",
         [b"\x00", b"\xc2\x80", b"\xe0\xa0\x80", b"\xf0\x90\x80\x80"]),
        ("6.8", "first impossible sequence of each length",
         [b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80"]),
        ("6.9", "last sequence of each length",
         [b"\x7f", b"\xdf\xbf", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf"]),
        ("6.10", "last impossible sequence of each length",
         [b"\xf7\xbf\xbf\xbf", b"\xfb\xbf\xbf\xbf\xbf", b"\xfd\xbf\xbf\xbf\xbf\xbf"]),
        ("6.11", "other boundaries",
         [b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbd", b"\xf4\x8f\xbf\xbf",
          b"\xf4\x90\x80\x80"]),
        ("6.12", "unexpected continuation bytes",
         [b"\x80", b"\xbf", b"\x80\xbf", b"\x80\xbf\x80", b"\x80\xbf\x80\xbf",
          b"\x80\xbf\x80\xbf\x80", b"\x80\xbf\x80\xbf\x80\xbf", bytes(range(0x80, 0xc0))]),
        ("6.13", "lonely start bytes",
         [bytes(x for c in range(0xc0, 0xe0) for x in (c, 0x20)),
          bytes(x for c in range(0xe0, 0xf0) for x in (c, 0x20)),
          bytes(x for c in range(0xf0, 0xf8) for x in (c, 0x20)),
          bytes(x for c in range(0xf8, 0xfc) for x in (c, 0x20)), b"\xfc\x20\xfd\x20"]),
        ("6.14", "sequences with the last byte missing",
         [b"\xc0", b"\xe0\x80", b"\xf0\x80\x80", b"\xf8\x80\x80\x80", b"\xfc\x80\x80\x80\x80",
          b"\xdf", b"\xef\xbf", b"\xf7\xbf\xbf", b"\xfb\xbf\xbf\xbf", b"\xfd\xbf\xbf\xbf\xbf"]),
        ("6.15", "incomplete sequences concatenated",
         [b"\xc0\xe0\x80\xf0\x80\x80\xf8\x80\x80\x80\xfc\x80\x80\x80\x80\xdf\xef\xbf\xf7\xbf\xbf"
          b"\xfb\xbf\xbf\xbf\xfd\xbf\xbf\xbf\xbf"]),
        ("6.16", "impossible bytes", [b"\xfe", b"\xff", b"\xfe\xfe\xff\xff"]),
        ("6.17", "overlong ASCII '/'",
         [b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xf8\x80\x80\x80\xaf",
          b"\xfc\x80\x80\x80\x80\xaf"]),
        ("6.18", "maximum overlong sequences",
         [b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf", b"\xf8\x87\xbf\xbf\xbf",
          b"\xfc\x83\xbf\xbf\xbf\xbf"]),
        ("6.19", "overlong NUL",
         [b"\xc0\x80", b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xf8\x80\x80\x80\x80",
          b"\xfc\x80\x80\x80\x80\x80"]),
        ("6.20", "single UTF-16 surrogates",
         [b"\xed\xa0\x80", b"\xed\xad\xbf", b"\xed\xae\x80", b"\xed\xaf\xbf", b"\xed\xb0\x80",
          b"\xed\xbe\x80", b"\xed\xbf\xbf"]),
        ("6.21", "paired UTF-16 surrogates",
         [b"\xed\xa0\x80\xed\xb0\x80", b"\xed\xa0\x80\xed\xbf\xbf", b"\xed\xad\xbf\xed\xb0\x80",
          b"\xed\xad\xbf\xed\xbf\xbf", b"\xed\xae\x80\xed\xb0\x80", b"\xed\xae\x80\xed\xbf\xbf",
          b"\xed\xaf\xbf\xed\xb0\x80", b"\xed\xaf\xbf\xed\xbf\xbf"]),
        ("6.22", "noncharacters (valid UTF-8)",
         [b"\xef\xbf\xbe", b"\xef\xbf\xbf", b"\xf0\x9f\xbf\xbe", b"\xf0\x9f\xbf\xbf",
          b"\xf4\x8f\xbf\xbe", b"\xf4\x8f\xbf\xbf", b"\xef\xb7\x90", b"\xef\xb7\xaf"]),
        ("6.23", "special characters",
         [b"\xef\xbb\xbf", b"\xef\xbf\xbd", b"\x00", b"\xc2\xa0"]),
    ]
    for group, desc, items in seqs:
        for i, d in enumerate(items, 1):
            utf8_case(f"{group}.{i}", f"{desc}: {d[:12].hex(' ')}{' ...' if len(d) > 12 else ''}",
                      d)

    # 7 close
    def close_case(cid, desc, frames, want, chop=None, echo=b"", note_design=None):
        def fn(port):
            p = client_handshake(port)
            try:
                p.send(b"".join(frames), chop)
                got = bytearray()
                closes = []
                pongs = 0
                while True:
                    ev = p.next_event(WAIT + len(echo) / 5e6)
                    if ev is None:
                        return FAILED, "the connection stayed open"
                    if ev[0] == "data":
                        got += ev[2]
                    elif ev[0] == "pong":
                        pongs += 1
                    elif ev[0] == "close":
                        closes.append(ev)
                    elif ev[0] == "bad":
                        return FAILED, f"bad frame: {ev[1]}"
                    elif ev[0] == "tcpclose":
                        break
                if len(closes) != 1:
                    return FAILED, f"{len(closes)} close frames"
                code = closes[0][1]
                if code != want:
                    return FAILED, f"close {code}, want {want}"
                if pongs:
                    return FAILED, "a pong after the close"
                if bytes(got) != echo:
                    if note_design and bytes(got) == note_design[0]:
                        return DESIGN, note_design[1]
                    return FAILED, f"{len(got)} bytes echoed, want {len(echo)}"
                return OK, (f"{len(echo)} bytes echoed, then " if echo else "") + \
                    (f"close {want}" if want else "empty close") + " echoed, TCP closed"
            finally:
                p.close()
        CASES.append((cid, desc, fn))

    c1000 = frame(CLOSE, close_payload(1000))
    close_case("7.1.1", "text message, then close: echoed, then close 1000",
               [frame(TEXT, b"Hello World!"), c1000], 1000, echo=b"Hello World!")
    close_case("7.1.2", "close twice: one reply", [c1000, c1000], 1000)
    close_case("7.1.3", "close, then ping: no pong", [c1000, frame(PING, b"Hello")], 1000)
    close_case("7.1.4", "close, then text: not echoed", [c1000, frame(TEXT, b"Hello")], 1000)
    close_case("7.1.5", "text fragment, close, fragment: no echo of the unfinished message",
               [frame(TEXT, b"fragment1", fin=False), c1000, frame(CONT, b"fragment2")], 1000,
               note_design=(b"fragment1", "the first fragment's bytes are echoed before the "
                                          "close reply (B3)"))
    big = payload(256 * 1024)
    close_case("7.1.6", "256 KiB text message, close, ping: all echoed before the close reply",
               [frame(BIN, big), c1000, frame(PING, b"Hello")], 1000, echo=big)
    close_case("7.3.1", "close without payload: close without payload", [frame(CLOSE)], None)
    fail_case("7.3.2", "close with a 1-byte payload: failed", [frame(CLOSE, b"\x03")])
    close_case("7.3.3", "close 1000 without reason", [c1000], 1000)
    close_case("7.3.4", "close 1000 with a reason", [frame(CLOSE, close_payload(1000, b"Hello"))],
               1000)
    close_case("7.3.5", "close 1000 with a 123-byte reason",
               [frame(CLOSE, close_payload(1000, b"*" * 123))], 1000)
    fail_case("7.3.6", "close 1000 with a 124-byte reason (payload over 125): failed",
              [frame(CLOSE, close_payload(1000, b"*" * 124))])
    fail_case("7.5.1", "close 1000 with a reason that is not UTF-8: failed",
              [frame(CLOSE, close_payload(1000, bad))])
    for i, code in enumerate([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013,
                              1014, 3000, 3999, 4000, 4999], 1):
        close_case(f"7.7.{i}", f"close {code} (valid): echoed",
                   [frame(CLOSE, close_payload(code, b"reason"))], code)
    for i, code in enumerate([0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999], 1):
        fail_case(f"7.9.{i}", f"close {code} (invalid): failed with 1002",
                  [frame(CLOSE, close_payload(code))])
    for i, code in enumerate([5000, 65535], 1):
        fail_case(f"7.13.{i}", f"close {code} (out of range): failed with 1002",
                  [frame(CLOSE, close_payload(code))])

    # 9 limits (sizes; all binary except 9.1, whose text is echoed as binary)
    sizes = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20]
    for i, n in enumerate(sizes, 1):
        echo_case(f"9.1.{i}", f"text message of {n >> 10} KiB", [frame(TEXT, b"*" * n)],
                  b"*" * n, True)
    for i, n in enumerate(sizes, 1):
        echo_case(f"9.2.{i}", f"binary message of {n >> 10} KiB", [frame(BIN, payload(n))],
                  payload(n), False)
    data4 = payload(4 << 20, 3)
    for i, fs in enumerate([64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20], 1):
        frs = [frame(BIN if k == 0 else CONT, data4[k:k + fs], fin=k + fs >= len(data4))
               for k in range(0, len(data4), fs)]
        echo_case(f"9.4.{i}", f"4 MiB binary message in fragments of {fs} bytes", frs, data4,
                  False)
    data1 = payload(1 << 20, 5)
    for i, ch in enumerate([64, 128, 256, 512, 1024, 2048], 1):
        echo_case(f"9.6.{i}", f"1 MiB binary message sent in chunks of {ch} octets",
                  [frame(BIN, data1)], data1, False, chop=ch)
    small = [payload(16, k) for k in range(1000)]
    echo_case("9.7.1", "1000 text messages of 16 bytes at once",
              [frame(TEXT, b"0123456789abcdef")] * 1000, b"0123456789abcdef" * 1000, True)
    echo_case("9.8.1", "1000 binary messages of 16 bytes at once",
              [frame(BIN, x) for x in small], b"".join(small), False)

    # 10 misc
    msg = b"*" * 65536
    echo_case("10.1.1", "64 KiB text message in 1300-byte fragments",
              [frame(TEXT if k == 0 else CONT, msg[k:k + 1300], fin=k + 1300 >= len(msg))
               for k in range(0, len(msg), 1300)], msg, True)


# ---- the client cases (zl_echo connect against this script) ---------------


def client_cases():
    """(id, description, fn) for our ws client: fn(conn) gets a Peer on
    the accepted connection after the upgrade (or the raw request head)"""
    out = []

    def add(cid, desc):
        def deco(fn):
            out.append((cid, desc, fn))
            return fn
        return deco

    @add("C.1", "the upgrade request: GET, Host, Upgrade, Connection, a 16-byte key, version 13")
    def _(ctx):
        h = ctx["head"].decode("latin-1")
        lines = h.split("\r\n")
        fields = {ln.split(":", 1)[0].lower(): ln.split(":", 1)[1].strip() for ln in lines[1:] if ":" in ln}
        ok = (re.match(r"GET /\S* HTTP/1\.1$", lines[0]) and "host" in fields and
              fields.get("upgrade", "").lower() == "websocket" and
              "upgrade" in fields.get("connection", "").lower() and
              len(base64.b64decode(fields.get("sec-websocket-key", ""))) == 16 and
              fields.get("sec-websocket-version") == "13")
        return (OK, "well-formed") if ok else (FAILED, h)

    @add("C.2", "client frames are masked, with a new key per frame")
    def _(ctx):
        p = ctx["peer"]
        p.send(frame(BIN, b"one", mask=False) + frame(BIN, b"two", mask=False))
        keys = []
        got = b""
        raw_before = len(p.buf)
        while len(got) < 6:
            ev = p.next_event()
            if ev is None or ev[0] != "data":
                return FAILED, f"no echo: {ev}"
            if not ev[4]:
                return FAILED, "an unmasked client frame"
            got += ev[2]
        del raw_before, keys
        return (OK, "masked") if got == b"onetwo" else (FAILED, repr(got))

    @add("C.3", "a masked server frame: failed with 1002")
    def _(ctx):
        ctx["peer"].send(frame(BIN, b"masked", mask=True))
        return expect_fail(ctx["peer"])

    @add("C.4", "a server ping: a masked pong with its payload")
    def _(ctx):
        p = ctx["peer"]
        p.send(frame(PING, b"client ping", mask=False))
        ev = p.next_event()
        if ev and ev[0] == "pong" and ev[1] == b"client ping" and ev[2]:
            return OK, "pong"
        return FAILED, repr(ev)

    @add("C.5", "a server close 1000: the client echoes it and closes TCP")
    def _(ctx):
        p = ctx["peer"]
        p.send(frame(CLOSE, close_payload(1000), mask=False))
        ev = p.next_event()
        if not (ev and ev[0] == "close" and ev[1] == 1000 and ev[3]):
            return FAILED, repr(ev)
        ev = p.next_event()
        return (OK, "close 1000 echoed, TCP closed") if ev and ev[0] == "tcpclose" else (FAILED, repr(ev))

    @add("C.6", "a reserved opcode from the server: failed with 1002")
    def _(ctx):
        ctx["peer"].send(frame(3, b"x", mask=False))
        return expect_fail(ctx["peer"])

    @add("C.7", "an invalid close code from the server (1005): failed with 1002")
    def _(ctx):
        ctx["peer"].send(frame(CLOSE, close_payload(1005), mask=False))
        return expect_fail(ctx["peer"])

    @add("C.8", "text that is not UTF-8 from the server: failed with 1007")
    def _(ctx):
        ctx["peer"].send(frame(TEXT, b"ok\xff", mask=False))
        return expect_fail(ctx["peer"], 1007)

    @add("C.9", "1 MiB binary message from the server: echoed exactly")
    def _(ctx):
        p = ctx["peer"]
        d = payload(1 << 20, 9)
        p.send(frame(BIN, d, mask=False))
        got = bytearray()
        while len(got) < len(d):
            ev = p.next_event()
            if ev is None or ev[0] != "data":
                return FAILED, f"{len(got)} bytes, then {ev}"
            got += ev[2]
        return (OK, "bytes echoed exactly") if bytes(got) == d else (FAILED, "the echo differs")

    @add("C.10", "a 101 with a wrong Sec-WebSocket-Accept: the client gives up (PROTOCOL)")
    def _(ctx):
        return ctx["wrong_accept"]

    return out


def run_client_case(fn, wrong_accept=False):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    proc = subprocess.Popen([zl_echo(), "connect", f"ws://127.0.0.1:{port}/", "--framing", "raw",
                             "--seconds", "15"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        ls.settimeout(10)
        s, _ = ls.accept()
        s.settimeout(10)
        head = b""
        while b"\r\n\r\n" not in head:
            d = s.recv(4096)
            if not d:
                return FAILED, "no request"
            head += d
        head = head.split(b"\r\n\r\n", 1)[0]
        key = re.search(rb"(?i)sec-websocket-key:\s*(\S+)", head).group(1)
        acc = base64.b64encode(hashlib.sha1((b"x" if wrong_accept else b"") + key + GUID).digest())
        s.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + acc + b"\r\n\r\n")
        ctx = {"head": head, "peer": Peer(s, server_side=True)}
        if wrong_accept:
            out = finish_zl_echo(proc)
            ok = re.search(r"^HSFAIL PROTOCOL 71", out, re.M) is not None
            ctx["wrong_accept"] = (OK, "HANDSHAKE_FAILED_PROTOCOL, EPROTO") if ok else (FAILED, out)
        res = fn(ctx)
        s.close()
        return res
    finally:
        ls.close()
        if not wrong_accept:
            if proc.poll() is None:
                proc.terminate()
            finish_zl_echo(proc)


def finish_zl_echo(proc):
    """waits for a zl_echo that was asked to end (killed after 10 s), prints
    what it wrote to stderr, and returns what it wrote to stdout"""
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    if err.strip():
        print("zl_echo stderr: " + err.strip(), flush=True)
    return out


# ---- main -------------------------------------------------------------------

GROUPS = [("1", "Framing"), ("2", "Pings/Pongs"), ("3", "Reserved bits"), ("4", "Opcodes"),
          ("5", "Fragmentation"), ("6", "UTF-8 handling"), ("7", "Close handling"),
          ("9", "Limits/performance"), ("10", "Miscellaneous"), ("C", "Our ws client")]


def main():
    write = "--write" in sys.argv
    build_cases()
    srv = subprocess.Popen([zl_echo(), "serve", "ws://127.0.0.1:*/", "--framing", "raw",
                            "--seconds", "3600"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    line = srv.stdout.readline()
    m = re.match(r"LISTEN ws://127\.0\.0\.1:(\d+)", line)
    if not m:
        print(f"ws-conformance: zl_echo did not start: {line!r}")
        return 2
    port = int(m.group(1))
    # the server's output must be read, or its pipe fills
    threading.Thread(target=lambda: [None for _ in srv.stdout], daemon=True).start()
    rows = []
    try:
        for cid, desc, fn in CASES:
            try:
                res, note = fn(port)
            except Exception as e:  # noqa: BLE001
                res, note = FAILED, f"{type(e).__name__}: {e}"
            rows.append((cid, desc, res, note))
            print(f"{'PASS' if res != FAILED else 'FAIL'} ws-conformance {cid}: {res}: {note}",
                  flush=True)
    finally:
        srv.terminate()
        finish_zl_echo(srv)
    for cid, desc, fn in client_cases():
        try:
            res, note = run_client_case(fn, wrong_accept=cid == "C.10")
        except Exception as e:  # noqa: BLE001
            res, note = FAILED, f"{type(e).__name__}: {e}"
        rows.append((cid, desc, res, note))
        print(f"{'PASS' if res != FAILED else 'FAIL'} ws-conformance {cid}: {res}: {note}",
              flush=True)

    table = render(rows)
    failed = sum(1 for r in rows if r[2] == FAILED)
    counts = {k: sum(1 for r in rows if r[2] == k) for k in (OK, DESIGN, FAILED)}
    print(f"ws-conformance: {len(rows)} cases: {counts[OK]} OK, {counts[DESIGN]} BY DESIGN, "
          f"{counts[FAILED]} FAILED")
    doc = open(DOC).read() if os.path.exists(DOC) else ""
    if BEGIN not in doc or END not in doc:
        print(f"ws-conformance: {DOC} has no table markers")
        return 1
    cur = doc[doc.index(BEGIN) + len(BEGIN):doc.index(END)]
    if write:
        with open(DOC, "w") as f:
            f.write(doc[:doc.index(BEGIN) + len(BEGIN)] + table + doc[doc.index(END):])
        print(f"ws-conformance: wrote {DOC}")
    elif cur != table:
        print("ws-conformance: docs/websocket-conformance.md is stale "
              "(run scripts/ws-conformance.py --write)")
        return 1
    return 1 if failed else 0


def render(rows):
    out = ["", ""]
    counts = {}
    for g, _ in GROUPS:
        rs = [r for r in rows if r[0].split(".")[0] == g]
        counts[g] = (len(rs), sum(r[2] == OK for r in rs), sum(r[2] == DESIGN for r in rs),
                     sum(r[2] == FAILED for r in rs))
    out.append("| group | cases | OK | BY DESIGN | FAILED |")
    out.append("|---|---|---|---|---|")
    for g, name in GROUPS:
        c = counts[g]
        out.append(f"| {g} {name} | {c[0]} | {c[1]} | {c[2]} | {c[3]} |")
    tot = [sum(counts[g][i] for g, _ in GROUPS) for i in range(4)]
    out.append(f"| all | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} |")
    for g, name in GROUPS:
        out += ["", f"### {g} {name}", "", "| case | what is sent | result | seen |",
                "|---|---|---|---|"]
        for cid, desc, res, note in rows:
            if cid.split(".")[0] == g:
                out.append(f"| {cid} | {desc.replace('|', '/')} | {res} | {note.replace('|', '/')} |")
    out += ["", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
