"""tls:// against OpenSSL's own command-line peers, `openssl s_client` and
`openssl s_server` (Debian's openssl package), certificates made here with
the same tool.

- TLS-1.2-only and TLS-1.3-only peers, both directions: an exact echo of
  100,000 bytes (zl_echo serve / s_client; zl_echo connect / s_server, whose
  stdout this script writes back to its stdin);
- our client against an expired, a wrong-host and an unknown-CA server
  certificate: HANDSHAKE_FAILED_AUTH with EACCES, the 0x00 with EACCES, and
  ZLINK_TLS_LAST_ERROR / ZLINK_TLS_LAST_VERIFY_RESULT giving the reason;
- our server against a client that does not trust it (the alert's reason),
  expired and unknown-CA client certificates (the verification result), and
  a TLS 1.1 client (refused: PROTOCOL, EPROTO).

Exits 77 when the openssl tool is missing."""
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

if not shutil.which("openssl"):
    print("the openssl command-line tool is not installed (Debian: openssl); skipped")
    sys.exit(common.SKIP)

R = common.Results("tls_openssl")
EACCES, EPROTO = 13, 71
N = 100000
DATA = bytes(((i * 7 + 3) ^ (i >> 8)) & 0xFF for i in range(N))  # zl_echo's pattern


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class SServer:
    """openssl s_server on 127.0.0.1:port, ready when it accepts TCP"""

    def __init__(self, certs, cert, key, *extra):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["openssl", "s_server", "-accept", f"127.0.0.1:{self.port}", "-cert", certs.path(cert),
             "-key", certs.path(key), "-quiet", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        end = time.time() + 10
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("s_server did not come up")

    def relay(self, until):
        """writes what s_server prints back to it (an echo) while until()
        is false; returns the bytes relayed"""
        fd = self.proc.stdout.fileno()
        os.set_blocking(fd, False)
        got = bytearray()
        end = time.time() + 20
        while time.time() < end and not until():
            try:
                d = os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.005)
                continue
            if not d:
                break
            got += d
            self.proc.stdin.write(d)
            self.proc.stdin.flush()
        return bytes(got)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass


def zl_connect(certs, port, *extra):
    return common.ZlEcho("connect", f"tls://127.0.0.1:{port}", "--ca", certs.path("ca.pem"),
                         "--hostname", "localhost", "--seconds", "10", *extra)


def client_echo(certs, version):
    """zl_echo connect against an s_server that speaks only `version`"""
    srv = SServer(certs, "srv.pem", "srv.key", f"-{version}")
    cli = zl_connect(certs, srv.port, "--send", str(N), "--then", "close")
    try:
        got = srv.relay(lambda: cli.proc.poll() is not None)
        rc = cli.wait(10)
        lines = cli.seen()
        if rc != 0 or f"ECHO OK {N}" not in lines:
            return f"zl_echo exit {rc}, {len(got)} bytes relayed: {lines}"
        if got != DATA:
            return "s_server received other bytes"
        if not any(x.startswith("DOWN ") and x.endswith(" 0") for x in lines):
            return f"no orderly end: {lines}"
    finally:
        cli.stop()
        srv.stop()
    return None


def zl_serve(certs, *extra):
    return common.ZlEcho("serve", "tls://127.0.0.1:*", "--cert", certs.path("srv.pem"),
                         "--key", certs.path("srv.key"), "--seconds", "30", *extra)


def s_client(certs, port, *extra):
    return subprocess.Popen(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-quiet", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop_s_client(cl):
    """ends an s_client started by s_client() and closes its pipes"""
    cl.kill()
    cl.wait()
    for f in (cl.stdin, cl.stdout, cl.stderr):
        f.close()


def server_echo(certs, version):
    """s_client speaking only `version`, verifying our server, against
    zl_echo serve: the bytes come back exactly"""
    srv = zl_serve(certs)
    cl = s_client(certs, srv.port(), f"-{version}", "-CAfile", certs.path("ca.pem"),
                  "-verify_return_error", "-verify_hostname", "localhost")
    try:
        cl.stdin.write(DATA)
        cl.stdin.flush()
        got = bytearray()
        fd = cl.stdout.fileno()
        end = time.time() + 20
        while len(got) < N and time.time() < end:
            d = os.read(fd, 65536)
            if not d:
                break
            got += d
        if bytes(got) != DATA:
            err = cl.stderr.read1(4096) if hasattr(cl.stderr, "read1") else b""
            return f"{len(got)} of {N} bytes back; s_client: {err!r}"
        if not srv.expect(r"^UP \d+", 5):
            return f"zl_echo saw no connection: {srv.seen()}"
    finally:
        stop_s_client(cl)
        srv.stop()
    return None


def client_refuses(certs, cert, key, verify, reason):
    """our client against s_server with a certificate it must refuse"""
    srv = SServer(certs, cert, key)
    cli = zl_connect(certs, srv.port, "--send", "10")
    try:
        cli.wait(15)
        lines = cli.seen()
        want = f"HSFAIL AUTH {EACCES} verify={verify} reason={reason}"
        if want not in lines:
            return f"want {want!r}: {lines}"
        if not any(x.startswith("DOWN ") and x.endswith(f" {EACCES}") for x in lines):
            return f"the 0x00 does not carry EACCES: {lines}"
    finally:
        cli.stop()
        srv.stop()
    return None


def server_refuses(certs, zl_extra, client_args, kind, errno, verify, reason):
    """zl_echo serve against an s_client whose handshake must fail; the
    server's HSFAIL line"""
    srv = zl_serve(certs, "--once", *zl_extra)
    cl = s_client(certs, srv.port(), *client_args)
    try:
        cl.stdin.write(b"x")
        cl.stdin.flush()
        want = f"HSFAIL {kind} {errno} verify={verify} reason={reason}"
        m = srv.expect(r"^HSFAIL .*", 10)
        if not m or m.group(0) != want:
            return f"want {want!r}, got {m.group(0) if m else None!r}: {srv.seen()}"
    finally:
        stop_s_client(cl)
        srv.stop()
    return None


def main():
    certs = common.Certs()
    # a client certificate signed by the unknown CA and an expired one
    d = certs.dir
    common.openssl("req", "-new", "-key", "cli.key", "-subj", "/CN=zl client", "-out", "c.csr",
                   cwd=d)
    common.openssl("x509", "-req", "-in", "c.csr", "-CA", "ca2.pem", "-CAkey", "ca2.key",
                   "-CAcreateserial", "-days", "2", "-extfile", "cli.ext", "-out", "cli-rogue.pem",
                   cwd=d)
    common.openssl("x509", "-req", "-in", "c.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                   "-CAcreateserial", "-days", "-1", "-extfile", "cli.ext", "-out",
                   "cli-expired.pem", cwd=d)
    try:
        for v in ("tls1_2", "tls1_3"):
            R.run(f"{v}-only s_server: zlink client echo of {N} bytes, exact", client_echo, certs, v)
            R.run(f"{v}-only s_client: zlink server echo of {N} bytes, exact", server_echo, certs, v)
        R.run("client: expired server certificate -> AUTH, EACCES, 'certificate has expired' (10)",
              client_refuses, certs, "expired.pem", "srv.key", 10, "certificate has expired")
        R.run("client: wrong host -> AUTH, EACCES, 'hostname mismatch' (62)",
              client_refuses, certs, "other.pem", "other.key", 62, "hostname mismatch")
        R.run("client: unknown CA -> AUTH, EACCES, 'unable to get local issuer certificate' (20)",
              client_refuses, certs, "rogue.pem", "rogue.key", 20,
              "unable to get local issuer certificate")
        req = ["--require-client-cert", "--ca", certs.path("ca.pem")]
        for v in ("tls1_2", "tls1_3"):
            R.run(f"server ({v}): a client that does not trust it -> AUTH, EACCES, "
                  "'tlsv1 alert unknown ca'",
                  server_refuses, certs, [], [f"-{v}", "-CAfile", certs.path("ca2.pem"),
                                              "-verify_return_error"],
                  "AUTH", EACCES, 0, "tlsv1 alert unknown ca")
            R.run(f"server ({v}): expired client certificate -> AUTH, EACCES, "
                  "'certificate has expired' (10)",
                  server_refuses, certs, req, [f"-{v}", "-cert", certs.path("cli-expired.pem"),
                                               "-key", certs.path("cli.key")],
                  "AUTH", EACCES, 10, "certificate has expired")
            R.run(f"server ({v}): client certificate of an unknown CA -> AUTH, EACCES, "
                  "'unable to get local issuer certificate' (20)",
                  server_refuses, certs, req, [f"-{v}", "-cert", certs.path("cli-rogue.pem"),
                                               "-key", certs.path("cli.key")],
                  "AUTH", EACCES, 20, "unable to get local issuer certificate")
        R.run("server: a TLS 1.1 client -> PROTOCOL, EPROTO, 'unsupported protocol'",
              server_refuses, certs, [], ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"],
              "PROTOCOL", EPROTO, 0, "unsupported protocol")
    finally:
        certs.cleanup()
    R.exit()


if __name__ == "__main__":
    main()
