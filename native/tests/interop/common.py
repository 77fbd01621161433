"""Shared parts of the interop tests (native/tests/interop/*.py): certificates
made with the openssl command-line tool, and zl_echo (native/tests/zl_echo.c)
run as a child process whose output lines are collected as they come.

Every test prints one "PASS name" or "FAIL name: why" line per check and exits
1 if any failed, 77 (ctest's skip) when a peer it needs is missing."""
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77


class Results:
    def __init__(self, suite):
        self.suite = suite
        self.failed = 0
        self.passed = 0

    def check(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print(f"PASS {self.suite}: {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {self.suite}: {name}: {why}", flush=True)
        return ok

    def run(self, name, fn, *args):
        """fn(*args) returns None (pass) or a reason string; an exception
        fails the check with its text."""
        try:
            why = fn(*args)
        except Exception as e:  # noqa: BLE001 - any failure is the test's
            why = f"{type(e).__name__}: {e}"
        return self.check(name, why is None, why or "")

    def exit(self):
        print(f"{self.suite}: {self.passed} passed, {self.failed} failed", flush=True)
        sys.exit(1 if self.failed else 0)


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Certs:
    """A CA, a server certificate for localhost and 127.0.0.1 signed by it,
    the same host's certificate expired, one for another host name, one
    from a CA nobody trusts, and a client certificate. PEM paths as
    attributes; everything in a temporary directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="zl-interop-")
        d = self.dir
        for k in ("ca", "ca2", "srv", "other", "cli", "rogue"):
            openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout",
                    "-out", f"{k}.key", cwd=d)
        openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=zl test ca",
                "-days", "2", "-out", "ca.pem", cwd=d)
        openssl("req", "-x509", "-new", "-key", "ca2.key", "-subj", "/CN=zl unknown ca",
                "-days", "2", "-out", "ca2.pem", cwd=d)
        with open(os.path.join(d, "srv.ext"), "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        with open(os.path.join(d, "other.ext"), "w") as f:
            f.write("subjectAltName=DNS:other.example\n")
        with open(os.path.join(d, "cli.ext"), "w") as f:
            f.write("extendedKeyUsage=clientAuth\n")

        def sign(key, cn, ext, ca, out, days):
            openssl("req", "-new", "-key", key, "-subj", f"/CN={cn}", "-out", "tmp.csr", cwd=d)
            openssl("x509", "-req", "-in", "tmp.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                    "-CAcreateserial", "-days", str(days), "-extfile", ext, "-out", out, cwd=d)

        sign("srv.key", "localhost", "srv.ext", "ca", "srv.pem", 2)
        sign("srv.key", "localhost", "srv.ext", "ca", "expired.pem", -1)  # notAfter: yesterday
        sign("other.key", "other.example", "other.ext", "ca", "other.pem", 2)
        sign("rogue.key", "localhost", "srv.ext", "ca2", "rogue.pem", 2)
        sign("cli.key", "zl client", "cli.ext", "ca", "cli.pem", 2)

    def path(self, name):
        return os.path.join(self.dir, name)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def zl_echo_path():
    p = os.environ.get("ZL_ECHO")
    if p and os.access(p, os.X_OK):
        return p
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "build", "tests", "zl_echo"),):
        if os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    print("zl_echo not found (set ZL_ECHO)", flush=True)
    sys.exit(2)


class ZlEcho:
    """zl_echo as a child; lines() collects its stdout as it comes."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([zl_echo_path(), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.q = queue.Queue()
        self.out = []
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()
        self.endpoint = None
        if args[0] == "serve":
            m = self.expect(r"^LISTEN (\S+)", 10)
            self.endpoint = m.group(1) if m else None

    def _pump(self):
        for line in self.proc.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def expect(self, pattern, timeout=10):
        """the first line (seen from now, or earlier and not yet matched)
        matching pattern, or None after timeout or at the end"""
        rx = re.compile(pattern)
        for i, line in enumerate(self.out):
            m = rx.search(line)
            if m:
                del self.out[i]
                return m
        end = time.time() + timeout
        while time.time() < end:
            try:
                line = self.q.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if line is None:
                self.q.put(None)
                break
            m = rx.search(line)
            if m:
                return m
            self.out.append(line)
        return None

    def port(self):
        return int(self.endpoint.rsplit(":", 1)[1].split("/")[0])

    def wait(self, timeout=20):
        """the exit status, once every line it printed was collected"""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.reader.join(5)
        return rc

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        if err.strip():
            # a sanitizer build's report lands in the test's output
            print("zl_echo stderr: " + err.strip().replace("\n", "\nzl_echo stderr: "), flush=True)
        return err

    def orderly_end(self, timeout=10):
        """None once zl_echo printed the orderly end of its connection
        (DOWN <id> 0) within timeout seconds, else why not"""
        if self.expect(r"^DOWN \d+ 0$", timeout):
            return None
        return f"zl_echo saw no orderly end: {self.seen()}"

    def seen(self):
        """the lines not consumed by expect so far, and whatever is queued"""
        while True:
            try:
                line = self.q.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self.q.put(None)
                break
            self.out.append(line)
        return list(self.out)
