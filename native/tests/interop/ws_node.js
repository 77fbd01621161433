// ws:// and wss:// against Node's `ws` package (npm; scripts/setup.sh installs
// it into native/tests/interop/node_modules), as client of zl_echo serve and
// as server for zl_echo connect:
// - exact echoes of 1 B .. 1 MiB in LENGTH framing, ws and wss;
// - a 1 MiB message and at once a close: every byte back, then the close
//   reply with the client's code (1000, and 4001);
// - pings (several at once) answered in order; our server's close seen as
//   1000; a node server's close (4003) echoed by our client.
// Certificates are made with the openssl tool. Exits 77 when `ws` or
// openssl is missing. Prints "PASS ..."/"FAIL ..." lines and a total.
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

let WebSocket;
try {
  WebSocket = require(path.join(__dirname, 'node_modules', 'ws'));
} catch (e) {
  console.log('the ws npm package is not installed here (scripts/setup.sh installs it); skipped');
  process.exit(77);
}
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch (e) {
  console.log('the openssl tool is missing; skipped');
  process.exit(77);
}

const zlEcho = process.env.ZL_ECHO || path.join(__dirname, '..', '..', 'build', 'tests', 'zl_echo');
let passed = 0;
let failed = 0;

function makeCerts() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'zl-node-'));
  const o = (...a) => execFileSync('openssl', a, { cwd: d, stdio: 'ignore' });
  o('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key');
  o('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'srv.key');
  o('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=zl node ca', '-days', '2', '-out', 'ca.pem');
  o('req', '-new', '-key', 'srv.key', '-subj', '/CN=localhost', '-out', 'srv.csr');
  fs.writeFileSync(path.join(d, 'srv.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  o('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-days', '2', '-extfile', 'srv.ext', '-out', 'srv.pem');
  return { dir: d, p: (f) => path.join(d, f) };
}

// zl_echo as a child; lines collected; waitLine(re) resolves with the match
function zl(args) {
  const proc = spawn(zlEcho, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  let buf = '';
  let exited = null;
  const exitWaiters = [];
  proc.stdout.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of waiters.slice()) {
        const m = line.match(w.re);
        if (m) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  });
  // a sanitizer build's report lands in the test's output
  proc.stderr.on('data', (d) => process.stdout.write(`zl_echo stderr: ${d}`));
  // 'close': the process ended and its output was read to the end
  proc.on('close', (code) => {
    exited = code;
    for (const w of exitWaiters) w(code);
  });
  return {
    proc,
    lines,
    waitLine(re, ms = 10000) {
      for (const l of lines) {
        const m = l.match(re);
        if (m) return Promise.resolve(m);
      }
      return new Promise((resolve, reject) => {
        const w = { re, resolve };
        waiters.push(w);
        setTimeout(() => reject(new Error(`no line ${re} in ${JSON.stringify(lines)}`)), ms);
      });
    },
    waitExit(ms = 30000) {
      if (exited !== null) return Promise.resolve(exited);
      return new Promise((resolve, reject) => {
        exitWaiters.push(resolve);
        setTimeout(() => reject(new Error('zl_echo did not exit')), ms);
      });
    },
    stop() {
      if (exited === null) proc.kill('SIGTERM');
    },
  };
}

function body(n, seed) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = ((i * 31 + seed) ^ (i >> 7)) & 0xff;
  return b;
}

function packet(b) {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(b.length, 0);
  return Buffer.concat([h, b]);
}

async function zlServer(certs, wss, framing, extra = []) {
  const args = ['serve', `${wss ? 'wss' : 'ws'}://127.0.0.1:*/echo`, '--framing', framing,
    '--seconds', '60', ...extra];
  if (wss) args.push('--cert', certs.p('srv.pem'), '--key', certs.p('srv.key'));
  const z = zl(args);
  const m = await z.waitLine(/^LISTEN (\S+)/);
  z.endpoint = m[1];
  return z;
}

function open(url, certs) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ca: fs.readFileSync(certs.p('ca.pem')), maxPayload: 0 });
    ws.binaryType = 'nodebuffer';
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

// collects binary data and the close code of a client socket
function collector(ws) {
  const c = { chunks: [], size: 0, code: null, waiters: [] };
  ws.on('message', (d) => {
    c.chunks.push(d);
    c.size += d.length;
    for (const w of c.waiters.slice()) w();
  });
  c.closed = new Promise((resolve) => ws.on('close', (code) => { c.code = code; resolve(code); }));
  c.bytes = () => Buffer.concat(c.chunks);
  c.until = (n, ms = 20000) => new Promise((resolve, reject) => {
    const check = () => {
      if (c.size >= n) {
        c.waiters.splice(c.waiters.indexOf(check), 1);
        resolve();
      }
    };
    c.waiters.push(check);
    check();
    setTimeout(() => reject(new Error(`${c.size} of ${n} bytes`)), ms);
  });
  return c;
}

async function echoSizes(certs, wss) {
  const z = await zlServer(certs, wss, 'length');
  try {
    const ws = await open(z.endpoint, certs);
    const c = collector(ws);
    let want = 0;
    for (const n of [1, 2, 125, 126, 127, 65535, 65536, 65537, 1 << 20]) {
      const p = packet(body(n, n & 0xff));
      ws.send(p);
      want += p.length;
      await c.until(want);
      const got = c.bytes();
      if (!got.subarray(want - p.length).equals(p)) return `${n} bytes: the echo differs`;
    }
    ws.close(1000);
    const code = await c.closed;
    if (code !== 1000) return `close code ${code}`;
    await z.waitLine(/^DOWN \d+ 0$/);
  } finally {
    z.stop();
  }
  return null;
}

async function sendThenClose(certs, wss, n, code) {
  const z = await zlServer(certs, wss, 'length');
  try {
    const ws = await open(z.endpoint, certs);
    const c = collector(ws);
    const p = packet(body(n, 5));
    ws.send(p);
    ws.close(code);
    const got = await Promise.race([c.closed, new Promise((r) => setTimeout(() => r('timeout'), 30000))]);
    if (got === 'timeout') return 'no close';
    if (!c.bytes().equals(p)) return `${c.size} of ${p.length} bytes came back before the close`;
    if (c.code !== code) return `close code ${c.code}, want ${code}`;
    await z.waitLine(/^DOWN \d+ 0$/);
  } finally {
    z.stop();
  }
  return null;
}

// At most one pong waits per connection (RFC 6455 5.5.3 lets an endpoint answer only the latest
// of several pings): the pongs seen must be some of the pings, in ping order, the last one 'dddd'.
async function pings(certs, wss) {
  const z = await zlServer(certs, wss, 'raw');
  try {
    const ws = await open(z.endpoint, certs);
    const seen = [];
    const latest = new Promise((resolve) => ws.on('pong', (d) => {
      seen.push(d.toString());
      if (d.toString() === 'dddd') resolve();
    }));
    const sent = ['a', 'bb', 'ccc', 'dddd'];
    for (const s of sent) ws.ping(Buffer.from(s));
    await Promise.race([latest, new Promise((r) => setTimeout(r, 10000))]);
    await new Promise((r) => setTimeout(r, 200)); // a pong after the latest one would be a fault
    ws.terminate();
    let at = 0;
    for (const p of seen) {
      at = sent.indexOf(p, at);
      if (at < 0) return `pongs out of order or unknown: ${seen.join(',')}`;
      at++;
    }
    if (seen.length === 0 || seen[seen.length - 1] !== 'dddd') return `the latest ping not answered last: ${seen.join(',')}`;
  } finally {
    z.stop();
  }
  return null;
}

async function serverCloses(certs, wss) {
  const z = await zlServer(certs, wss, 'raw', ['--close-after', '3000']);
  try {
    const ws = await open(z.endpoint, certs);
    const c = collector(ws);
    const b = body(3000, 1);
    ws.send(b);
    const code = await Promise.race([c.closed, new Promise((r) => setTimeout(() => r('timeout'), 10000))]);
    if (!c.bytes().equals(b)) return `${c.size} bytes before the close`;
    if (code !== 1000) return `close code ${code}`;
  } finally {
    z.stop();
  }
  return null;
}

// node ws server: echo (then zl closes) or echo + ping + close 4003
async function zlClient(certs, wss, n, nodeCloses) {
  const https = require('https');
  const http = require('http');
  const hs = wss
    ? https.createServer({ cert: fs.readFileSync(certs.p('srv.pem')), key: fs.readFileSync(certs.p('srv.key')) })
    : http.createServer();
  const wsrv = new WebSocket.Server({ server: hs, maxPayload: 0 });
  const seen = {};
  const closed = new Promise((resolve) => {
    wsrv.on('connection', (ws) => {
      ws.on('message', async (m) => {
        ws.send(m, { binary: true });
        if (nodeCloses) {
          ws.ping(Buffer.from('hi'));
          ws.once('pong', () => { seen.pong = true; ws.close(4003, 'done'); });
        }
      });
      ws.on('close', (code) => { seen.code = code; resolve(); });
    });
  });
  await new Promise((r) => hs.listen(0, '127.0.0.1', r));
  const port = hs.address().port;
  const args = ['connect', `${wss ? 'wss' : 'ws'}://127.0.0.1:${port}/`, '--framing', 'length',
    '--send', String(n), '--then', nodeCloses ? 'wait' : 'close'];
  if (wss) args.push('--ca', certs.p('ca.pem'), '--hostname', 'localhost');
  const z = zl(args);
  try {
    const rc = await z.waitExit();
    if (rc !== 0 || !z.lines.includes(`ECHO OK ${n}`)) return `zl_echo exit ${rc}: ${JSON.stringify(z.lines)}`;
    if (!z.lines.some((l) => /^DOWN \d+ 0$/.test(l))) return `no orderly end: ${JSON.stringify(z.lines)}`;
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000))]);
    const want = nodeCloses ? 4003 : 1000;
    if (seen.code !== want) return `close code at the node server: ${seen.code}, want ${want}`;
    if (nodeCloses && !seen.pong) return 'no pong';
  } finally {
    z.stop();
    wsrv.close();
    hs.close();
  }
  return null;
}

async function check(name, fn) {
  let why;
  try {
    why = await fn();
  } catch (e) {
    why = String(e && e.message ? e.message : e);
  }
  if (why == null) {
    passed++;
    console.log(`PASS ws_node: ${name}`);
  } else {
    failed++;
    console.log(`FAIL ws_node: ${name}: ${why}`);
  }
}

(async () => {
  const certs = makeCerts();
  try {
    for (const wss of [false, true]) {
      const t = wss ? 'wss' : 'ws';
      await check(`${t}: node client, exact echoes 1 B .. 1 MiB (LENGTH), close 1000`, () => echoSizes(certs, wss));
      await check(`${t}: node client sends 1 MiB and closes at once: all bytes, then 1000`, () => sendThenClose(certs, wss, 1 << 20, 1000));
      await check(`${t}: node client closes with 4001: 4001 echoed`, () => sendThenClose(certs, wss, 100, 4001));
      await check(`${t}: 4 pings at once: pongs in order, the latest answered`, () => pings(certs, wss));
      await check(`${t}: zlink server closes after the echo: node sees 1000`, () => serverCloses(certs, wss));
      for (const n of [1, 65536, 1 << 20]) {
        await check(`${t}: zlink client, node echo server, ${n} B exact, zlink closes: 1000`, () => zlClient(certs, wss, n, false));
      }
      await check(`${t}: node server pings and closes with 4003: pong, 4003 echoed`, () => zlClient(certs, wss, 5000, true));
    }
  } finally {
    fs.rmSync(certs.dir, { recursive: true, force: true });
  }
  console.log(`ws_node: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
