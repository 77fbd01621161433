# Sourced by the scripts that run an echo server in the background while a client measures
# (scripts/soak.sh, benchmarks/syscall-profile.sh); not run on its own.
#
# echo_server_start LOG CMD...  starts CMD with its stdin a fifo this shell holds open on fd 9
#                               (closing it, or SIGTERM, stops the server: limit_echo always, a
#                               NetZlink.Stress --role server only with --exit-on-stdin-eof, which
#                               CMD must then carry, so that the server never outlives this shell),
#                               waits up to 10 s for the server's READY line in LOG and
#                               sets echo_server_pid; when the server exits or stays silent it
#                               prints LOG and returns 2.
# echo_server_stop              closes the fifo, stops the server and reaps it; safe to call twice.

echo_server_start() {
  local log=$1
  shift
  echo_server_fifo=$(mktemp -u "${TMPDIR:-/tmp}/echo-server-stdin.XXXXXX")
  mkfifo "$echo_server_fifo"
  "$@" <"$echo_server_fifo" >"$log" 2>&1 &
  echo_server_pid=$!
  exec 9>"$echo_server_fifo"
  for _ in $(seq 100); do
    grep -q '^READY' "$log" 2>/dev/null && return 0
    kill -0 "$echo_server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "the echo server did not start ($*):" >&2
  cat "$log" >&2
  return 2
}

echo_server_stop() {
  [ -n "${echo_server_pid:-}" ] || return 0
  exec 9>&-
  kill "$echo_server_pid" 2>/dev/null || true
  wait "$echo_server_pid" 2>/dev/null || true
  rm -f "$echo_server_fifo"
  echo_server_pid=
}
