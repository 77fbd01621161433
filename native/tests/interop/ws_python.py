"""ws:// and wss:// against a WebSocket implementation nobody here wrote:
Python's `websockets` (Debian's python3-websockets 10.4), as client of
zl_echo serve and as server for zl_echo connect.

- exact echoes of 1 B .. 1 MiB in LENGTH framing (the peer sends
  [u32 BE len][body] in a binary message and expects the same back), ws and
  wss, both directions;
- a 1 MiB message and at once a close (ws, wss; and 4 and 16 MiB in RAW over
  ws): every byte comes back before the close reply, whose code is the
  client's (not 1006);
- close handshakes both ways with the code seen on each side; ping/pong
  both ways, several pings at once.

Run with the python that has websockets (ctest: /usr/bin/python3); exits 77
when it is missing."""
import asyncio
import os
import ssl
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

try:
    import websockets
except ImportError:
    print("python websockets is not installed (Debian: python3-websockets); skipped")
    sys.exit(common.SKIP)

R = common.Results("ws_python")
SIZES = [1, 2, 125, 126, 127, 65535, 65536, 65537, 1 << 20]


def body(n, seed=0):
    return bytes(((i * 31 + seed) ^ (i >> 7)) & 0xFF for i in range(n)) if n < 4096 else \
        (bytes(range(256)) * (n // 256 + 2))[seed % 256: seed % 256 + n]


def client_ssl(certs):
    ctx = ssl.create_default_context(cafile=certs.path("ca.pem"))
    return ctx


def server_ssl(certs):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs.path("srv.pem"), certs.path("srv.key"))
    return ctx


def zl_server(certs, wss, framing="length", *extra):
    scheme = "wss" if wss else "ws"
    args = ["serve", f"{scheme}://127.0.0.1:*/echo", "--framing", framing, "--seconds", "60"]
    if wss:
        args += ["--cert", certs.path("srv.pem"), "--key", certs.path("srv.key")]
    return common.ZlEcho(*args, *extra)


async def recv_bytes(ws, n, timeout=20):
    got = bytearray()
    while len(got) < n:
        m = await asyncio.wait_for(ws.recv(), timeout)
        if not isinstance(m, bytes):
            raise AssertionError("a text message came back")
        got += m
    return bytes(got)


async def echo_sizes(certs, wss):
    srv = zl_server(certs, wss)
    try:
        uri = srv.endpoint
        async with websockets.connect(uri, ssl=client_ssl(certs) if wss else None,
                                      max_size=None) as ws:
            for n in SIZES:
                b = body(n, n)
                pkt = struct.pack(">I", n) + b
                await ws.send(pkt)
                got = await recv_bytes(ws, len(pkt))
                if got != pkt:
                    return f"{n} bytes: echo differs ({len(got)} bytes back)"
            await ws.close(1000)
            if ws.close_code != 1000:
                return f"close code {ws.close_code}"
        return srv.orderly_end()
    finally:
        srv.stop()


async def send_then_close(certs, wss, framing, n, code=1000):
    """one message of n bytes and the close right behind it; the reader
    takes everything until the connection ends"""
    srv = zl_server(certs, wss, framing)
    try:
        async with websockets.connect(srv.endpoint, ssl=client_ssl(certs) if wss else None,
                                      max_size=None, max_queue=None,
                                      close_timeout=30) as ws:
            b = body(n, 7)
            msg = (struct.pack(">I", n) + b) if framing == "length" else b
            got = bytearray()

            async def reader():
                try:
                    async for m in ws:
                        got.extend(m)
                except websockets.ConnectionClosed:
                    pass

            task = asyncio.ensure_future(reader())
            await ws.send(msg)
            await ws.close(code)
            await asyncio.wait_for(task, 30)
            if bytes(got) != msg:
                return f"{len(got)} of {len(msg)} bytes came back before the close"
            if ws.close_code != code:
                return f"close code seen by the client: {ws.close_code}, want {code}"
        return srv.orderly_end()
    finally:
        srv.stop()


async def server_closes(certs, wss):
    """zl_echo closes after echoing 1000 bytes: the client sees 1000"""
    srv = zl_server(certs, wss, "raw", "--close-after", "1000")
    try:
        async with websockets.connect(srv.endpoint, ssl=client_ssl(certs) if wss else None,
                                      max_size=None) as ws:
            b = body(1000, 3)
            await ws.send(b)
            got = await recv_bytes(ws, 1000)
            if got != b:
                return "echo differs"
            try:
                m = await asyncio.wait_for(ws.recv(), 10)
                return f"a message after the echo: {len(m)} bytes"
            except websockets.ConnectionClosedOK:
                pass
            if ws.close_code != 1000:
                return f"close code seen by the client: {ws.close_code}"
        return srv.orderly_end()
    finally:
        srv.stop()


async def pings(certs, wss):
    srv = zl_server(certs, wss, "raw")
    try:
        async with websockets.connect(srv.endpoint, ssl=client_ssl(certs) if wss else None,
                                      max_size=None) as ws:
            waiters = [await ws.ping(bytes([i]) * (i + 1)) for i in range(5)]
            await asyncio.wait_for(asyncio.gather(*waiters), 10)
            # a ping while a large echo is on its way
            b = body(1 << 20, 9)
            await ws.send(b)
            w = await ws.ping(b"during")
            got = await recv_bytes(ws, len(b))
            await asyncio.wait_for(w, 10)
            if got != b:
                return "echo around the ping differs"
    finally:
        srv.stop()
    return None


async def python_server(certs, wss, behaviour):
    """a websockets server on 127.0.0.1:*; behaviour(ws, seen) runs per
    connection and puts what the server saw in seen"""
    seen = {}

    async def handler(ws, path=None):
        try:
            await behaviour(ws, seen)
        except websockets.ConnectionClosed:
            pass
        finally:
            try:
                await ws.wait_closed()
            except Exception:  # noqa: BLE001
                pass
            seen["close_code"] = ws.close_code

    server = await websockets.serve(handler, "127.0.0.1", 0,
                                    ssl=server_ssl(certs) if wss else None, max_size=None)
    port = server.sockets[0].getsockname()[1]
    return server, port, seen


def zl_client(certs, wss, port, n, then):
    """zl_echo connect --send n (LENGTH) --then then, to the python server
    on port (wss: verifying it as localhost)"""
    scheme = "wss" if wss else "ws"
    args = ["connect", f"{scheme}://127.0.0.1:{port}/", "--framing", "length",
            "--send", str(n), "--then", then]
    if wss:
        args += ["--ca", certs.path("ca.pem"), "--hostname", "localhost"]
    return common.ZlEcho(*args)


async def client_echoed(cli, n, seen):
    """None once the zl_echo client exited 0 with its n bytes echoed and an
    orderly end, and the python server saw the close (5 s at most), else
    why not"""
    rc = await asyncio.get_running_loop().run_in_executor(None, cli.wait, 30)
    lines = cli.seen()
    if rc != 0 or f"ECHO OK {n}" not in lines:
        return f"zl_echo exit {rc}: {lines}"
    if not any(x.startswith("DOWN ") and x.endswith(" 0") for x in lines):
        return f"no orderly end: {lines}"
    for _ in range(100):
        if "close_code" in seen:
            break
        await asyncio.sleep(0.05)
    return None


async def zl_client_echo(certs, wss, n):
    """zl_echo connect --send n (LENGTH) against a python echo server, then
    zl_echo closes: the server sees 1000"""
    async def echo(ws, seen):
        async for m in ws:
            await ws.send(m)

    server, port, seen = await python_server(certs, wss, echo)
    cli = zl_client(certs, wss, port, n, "close")
    try:
        why = await client_echoed(cli, n, seen)
        if why:
            return why
        if seen.get("close_code") != 1000:
            return f"close code seen by the python server: {seen.get('close_code')}"
    finally:
        cli.stop()
        server.close()
        await server.wait_closed()
    return None


async def python_server_closes(certs, wss):
    """the python server echoes one message, pings, then closes with 4002
    "done": zl_echo answers the ping, echoes 4002, ends orderly"""
    async def behaviour(ws, seen):
        m = await ws.recv()
        await ws.send(m)
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 5)
        seen["pong"] = True
        await ws.close(4002, "done")

    server, port, seen = await python_server(certs, wss, behaviour)
    cli = zl_client(certs, wss, port, 5000, "wait")
    try:
        why = await client_echoed(cli, 5000, seen)
        if why:
            return why
        if not seen.get("pong"):
            return "no pong"
        if seen.get("close_code") != 4002:
            return f"close code the python server got back: {seen.get('close_code')}"
    finally:
        cli.stop()
        server.close()
        await server.wait_closed()
    return None


def run(coro_fn, *args):
    return asyncio.run(coro_fn(*args))


def main():
    certs = common.Certs()
    try:
        for wss in (False, True):
            t = "wss" if wss else "ws"
            R.run(f"{t}: python client, exact echoes 1 B .. 1 MiB (LENGTH), close 1000",
                  run, echo_sizes, certs, wss)
            R.run(f"{t}: python client sends 1 MiB and closes at once: all bytes, then 1000",
                  run, send_then_close, certs, wss, "length", 1 << 20)
            R.run(f"{t}: python client closes with 4001: 4001 echoed",
                  run, send_then_close, certs, wss, "length", 10, 4001)
            R.run(f"{t}: zlink server closes after the echo: the client sees 1000",
                  run, server_closes, certs, wss)
            R.run(f"{t}: pings (5 at once, one during a 1 MiB echo) all answered",
                  run, pings, certs, wss)
            for n in (1, 65536, 1 << 20):
                R.run(f"{t}: zlink client, python echo server, {n} B exact, zlink closes: 1000",
                      run, zl_client_echo, certs, wss, n)
            R.run(f"{t}: python server pings and closes with 4002: pong, 4002 echoed",
                  run, python_server_closes, certs, wss)
        for n in (4 << 20, 16 << 20):
            R.run(f"ws: python client sends {n >> 20} MiB (RAW) and closes at once: all bytes, "
                  "then 1000", run, send_then_close, certs, False, "raw", n)
    finally:
        certs.cleanup()
    R.exit()


if __name__ == "__main__":
    main()
