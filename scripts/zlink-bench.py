#!/usr/bin/env python3
"""The socket patterns of NetZlink's libzlink.so against another libzlink.so (a real zlink 1.3
build), side by side in one sitting: native/build/bench/zlink_patterns runs each cell once per
library per round, the libraries alternating, and the table gives each library's median and the
ratio of the medians. Latency: one-way microseconds (lower is better). Throughput: messages per
second (higher is better).

  ZLINK_REFERENCE_LIBRARY=/path/to/zlink/libzlink.so python3 scripts/zlink-bench.py [--rounds N]
      [--quick] [--out FILE.md]

--quick measures a small subset (a smoke run of the script itself). Needs native/build (bash
scripts/setup.sh). The reference library is never built or fetched by this script.
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "native", "build", "bench", "zlink_patterns")
OURS = os.path.join(ROOT, "native", "build", "libzlink.so")

LATENCY = [(p, t, s) for p in ("pair", "dealer-router") for t in ("tcp", "ipc") for s in (64, 1024)]
THROUGHPUT = [(p, t, s)
              for p in ("pair", "pubsub", "dealer-router", "router-router")
              for t in ("tcp", "inproc")
              for s in (64, 1024, 8192, 65536)]
QUICK_LATENCY = [("pair", "tcp", 64)]
QUICK_THROUGHPUT = [("pair", "inproc", 64)]


def run(lib, mode, pattern, transport, size):
    count = []
    if mode == "latency":
        count = ["10000"]
    cmd = [BENCH, lib, mode, pattern, transport, str(size)] + count
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"zlink-bench: timed out: {' '.join(cmd)}\n")
        return None
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            fields = dict(kv.split("=", 1) for kv in line.split()[1:])
            return float(fields["value"])
    sys.stderr.write(f"zlink-bench: no result from {' '.join(cmd)}: {out.stderr.strip()}\n")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    ref = os.environ.get("ZLINK_REFERENCE_LIBRARY")
    if not ref or not os.path.isfile(ref):
        sys.stderr.write("zlink-bench: set ZLINK_REFERENCE_LIBRARY to a real zlink libzlink.so\n")
        return 2
    if not os.path.isfile(BENCH):
        sys.stderr.write(f"zlink-bench: {BENCH} is missing; run bash scripts/setup.sh\n")
        return 2
    cells = [("latency",) + c for c in (QUICK_LATENCY if args.quick else LATENCY)]
    cells += [("throughput",) + c for c in (QUICK_THROUGHPUT if args.quick else THROUGHPUT)]
    results = {}
    for r in range(args.rounds):
        for i, cell in enumerate(cells):
            # alternate which library goes first, round by round
            order = (OURS, ref) if (r + i) % 2 == 0 else (ref, OURS)
            for lib in order:
                v = run(lib, *cell)
                if v is not None:
                    results.setdefault((lib, cell), []).append(v)
            sys.stderr.write(f"zlink-bench: round {r + 1}/{args.rounds}, cell {i + 1}/{len(cells)}\r")
    sys.stderr.write("\n")
    lines = ["| mode | pattern | transport | size | netzlink | zlink | netzlink / zlink | better |",
             "|---|---|---|---|---|---|---|---|"]
    wins = 0
    for cell in cells:
        a = results.get((OURS, cell))
        b = results.get((ref, cell))
        if not a or not b:
            lines.append(f"| {' | '.join(map(str, cell))} | n/a | n/a | n/a | |")
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        ratio = ma / mb if mb else float("nan")
        lower_better = cell[0] == "latency"
        ours_better = ma <= mb if lower_better else ma >= mb
        wins += ours_better
        fmt = (lambda v: f"{v:.1f} µs") if lower_better else (lambda v: f"{v:,.0f}/s")
        lines.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {cell[3]} | {fmt(ma)} | {fmt(mb)} | "
                     f"{ratio:.2f} | {'netzlink' if ours_better else 'zlink'} |")
    lines.append("")
    lines.append(f"netzlink at or better than zlink in {wins} of {len(cells)} cells "
                 f"(medians of {args.rounds} rounds, libraries alternating).")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
