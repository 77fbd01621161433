#!/usr/bin/env bash
# ZMP interop against a real zlink 1.3 (opt-in; CI has no zlink and never runs this).
#
#   ZLINK_REFERENCE_LIBRARY=/path/to/zlink/libzlink.so bash scripts/interop-zlink.sh
#
# Runs native/build/tests/zmp_peer (built with native/build) as two processes, one on each
# library: NetZlink's native/build/libzlink.so, and the reference, loaded through
# LD_LIBRARY_PATH from a temporary directory holding a copy of it under the name zmp_peer
# links against (libzlink.so) and under its own SONAME. Every check runs both ways (the
# server on one library, the client on the other) over tcp://, ipc://, tls://, ws:// and
# wss://, and one line of the matrix is printed per check; the script exits 1 if any failed.
# Roles: see zmp_peer.c. For tls:// and wss:// the script makes a CA and a server certificate
# for localhost and 127.0.0.1 with the openssl tool in its temporary directory (zmp_peer's
# ZMP_PEER_TLS_DIR); ZMP_INTEROP_TRANSPORTS="tcp tls" picks transports.
# Nothing here downloads or builds zlink.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ref=${ZLINK_REFERENCE_LIBRARY:-}
if [ -z "$ref" ] || [ ! -f "$ref" ]; then
  echo "interop-zlink: set ZLINK_REFERENCE_LIBRARY to a real zlink 1.3 libzlink.so" >&2
  exit 2
fi
peer=$root/native/build/tests/zmp_peer
ours=$root/native/build/libzlink.so
if [ ! -x "$peer" ] || [ ! -f "$ours" ]; then
  echo "interop-zlink: build native/build first (cmake --build native/build)" >&2
  exit 2
fi

work=$(mktemp -d /tmp/zmp-interop.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ref"
soname=$(readelf -d "$ref" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
cp "$ref" "$work/ref/libzlink.so"
[ -n "$soname" ] && [ "$soname" != libzlink.so ] && cp "$ref" "$work/ref/$soname"

# run LIB ROLE ENDPOINT [ROUNDS]: zmp_peer on one library (ours: its RUNPATH; ref: the copy)
run() {
  local lib=$1; shift
  if [ "$lib" = ref ]; then
    LD_LIBRARY_PATH="$work/ref" timeout 30 "$peer" "$@"
  else
    LD_LIBRARY_PATH= timeout 30 "$peer" "$@"
  fi
}

# a free loopback port, and an ipc path
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
endpoint() {
  case $1 in
    tcp) echo "tcp://127.0.0.1:$(free_port)" ;;
    ipc) echo "ipc://$work/ipc-$RANDOM-$RANDOM" ;;
    *) echo "$1://127.0.0.1:$(free_port)" ;;
  esac
}

# tls:// and wss://: a CA and a server certificate (localhost, 127.0.0.1) it signs
tls_dir=$work/tls
make_certs() {
  mkdir -p "$tls_dir"
  (cd "$tls_dir" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
      -out ca.pem -days 2 -subj "/CN=zmp interop CA" &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
      -out server.csr -subj "/CN=localhost" &&
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -out server.pem -days 2 -extfile ext.cnf) >"$work/openssl.log" 2>&1
}
transports=${ZMP_INTEROP_TRANSPORTS:-tcp ipc tls ws wss}
case " $transports " in
  *" tls "* | *" wss "*)
    make_certs || { cat "$work/openssl.log" >&2; echo "interop-zlink: openssl failed" >&2; exit 2; }
    export ZMP_PEER_TLS_DIR=$tls_dir ;;
esac

pass=0; failed=0
lines=()
record() { # name server-lib client-lib transport rc detail
  local verdict=PASS
  [ "$5" = 0 ] || verdict=FAIL
  [ "$verdict" = PASS ] && pass=$((pass + 1)) || failed=$((failed + 1))
  local line
  line=$(printf '%-34s %-8s %-8s %-4s %s' "$1" "$2" "$3" "$4" "$verdict")
  [ "$verdict" = FAIL ] && line="$line  $6"
  lines+=("$line")
  echo "$line"
}

# pair_check NAME SERVER-ROLE CLIENT-ROLE SERVER-LIB CLIENT-LIB TRANSPORT
pair_check() {
  local ep out rc_s rc_c
  ep=$(endpoint "$6")
  out=$work/out.$RANDOM
  run "$4" "$2" "$ep" >"$out.s" 2>&1 &
  local spid=$!
  sleep 0.3
  run "$5" "$3" "$ep" >"$out.c" 2>&1
  rc_c=$?
  wait $spid
  rc_s=$?
  local rc=0
  [ $rc_s = 0 ] && [ $rc_c = 0 ] || rc=1
  record "$1" "$4" "$5" "$6" $rc "$(grep -h FAIL "$out.s" "$out.c" | tr '\n' ' ')"
}

# reconnect: a DEALER (CLIENT-LIB) keeps running while its ROUTER (SERVER-LIB) exits and
# another ROUTER process of the same library binds the same endpoint
reconnect_check() {
  local ep out rc1 rc2 rc_c
  ep=$(endpoint "$3")
  out=$work/out.$RANDOM
  run "$1" router-server "$ep" >"$out.s1" 2>&1 &
  local s1=$!
  sleep 0.3
  run "$2" dealer-client "$ep" 2 >"$out.c" 2>&1 &
  local c=$!
  wait $s1; rc1=$?
  run "$1" router-again "$ep" >"$out.s2" 2>&1; rc2=$?
  wait $c; rc_c=$?
  local rc=0
  [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc_c = 0 ] || rc=1
  record "DEALER->ROUTER reconnect" "$1" "$2" "$3" $rc "$(grep -h FAIL "$out.s1" "$out.s2" "$out.c" | tr '\n' ' ')"
}

# heartbeat: a DEALER with heartbeats (CLIENT-LIB) stays connected to a ROUTER (SERVER-LIB) that
# answers them, then declares it dead once the script stops its process (SIGSTOP: the connection
# stays open, nothing answers) with reason TRANSPORT_ERROR. Run with the client on NetZlink's
# library only: a zlink 1.3 client (same settings) did not declare a stopped server dead within
# 10 s (docs/zlink-abi.md, differences), though it answers heartbeats and reports a server that is
# killed (DISCONNECTED, TRANSPORT_ERROR)
heartbeat_check() {
  local ep out rc_c spid pid
  ep=$(endpoint "$3")
  out=$work/out.$RANDOM
  run "$1" hb-server "$ep" >"$out.s" 2>&1 &
  spid=$!
  sleep 0.3
  run "$2" hb-client "$ep" >"$out.c" 2>&1 &
  local c=$!
  for _ in $(seq 100); do
    grep -q STALL-ME "$out.c" && break
    kill -0 $c 2>/dev/null || break
    sleep 0.1
  done
  pid=$(sed -n 's/^PID \([0-9]*\)$/\1/p' "$out.s")
  [ -n "$pid" ] && grep -q STALL-ME "$out.c" && kill -STOP "$pid"
  wait $c; rc_c=$?
  [ -n "$pid" ] && kill -CONT "$pid" && kill "$pid" 2>/dev/null
  wait $spid 2>/dev/null
  record "heartbeat: a stalled peer is dead" "$1" "$2" "$3" $rc_c "$(grep -h FAIL "$out.s" "$out.c" | tr '\n' ' ')"
}

echo "ZMP interop: NetZlink $ours vs reference $ref${soname:+ (SONAME $soname)}"
printf '%-34s %-8s %-8s %-4s %s\n' "check" "server" "client" "via" "result"
for transport in $transports; do
  for dir in "ours ref" "ref ours"; do
    set -- $dir
    pair_check "PAIR<->PAIR (3x5 parts, 100 KB)" pair-server pair-client "$1" "$2" $transport
    pair_check "PUB->SUB (subscribe, cancel)" pub-server sub-client "$1" "$2" $transport
    pair_check "XPUB sees SUB's \\1A \\0A \\1Z" xpub-server xsub-watch "$1" "$2" $transport
    pair_check "DEALER<->ROUTER (2 ids, 3x3 parts)" router-server dealer-client "$1" "$2" $transport
    pair_check "ROUTER<->ROUTER (by id both ways)" rr-server rr-client "$1" "$2" $transport
    reconnect_check "$1" "$2" $transport
    [ "$2" = ours ] && heartbeat_check "$1" "$2" $transport
  done
done
echo "interop-zlink: $pass passed, $failed failed"
[ $failed = 0 ]
