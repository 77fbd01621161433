/*
 * limit_echo.c - the "limit rows" of the compare report: the s0/s1/s2 STREAM echo
 * scenarios on plain non-blocking sockets, one thread per side, no library and no
 * hand-off between threads. It shows what this machine allows at all, next to the .NET
 * stacks. --io picks the I/O layer (limit_io.h), the same on both sides: epoll
 * (level-triggered, recv/send on readiness; the c-epoll row, the default) or uring
 * (io_uring completions without readiness polling, limit_uring.c; the c-uring row). When
 * io_uring is refused, --io uring says so in one line on stderr and runs on epoll;
 * `limit_echo probe --io uring` asks beforehand (exit 0 yes, 2 no with the reason).
 *
 *   limit_echo server [--io epoll|uring] [--bind-host H] [--port P] [--backlog N] [--sndbuf N] ...
 *   limit_echo client [--io epoll|uring] [--scenario s0|s1|s2] [--host H] [--port P] [--ccu N] ...
 *
 * The client follows NetZlink.Stress (Scenarios/ScenarioRunner.cs, LoadPlan.cs and
 * EchoLoadHandler.cs): the same flags, [u32 BE length][body] packets (body byte 0
 * phase, bytes 1..8 send time in ns little-endian, filler after) and the phases
 * connect / warm-up / settle / measure / drain. It counts and prints raw counts only:
 * one COUNTS line (below). It does not judge: NetZlink.Stress reads that line
 * (Compare/LimitEchoCounts.cs; `NetZlink.Stress counts` by hand) and applies the pass
 * rules and the output writers of the .NET stacks, so every stack is judged and
 * formatted by the same code. Exit codes: 0 counted (whatever the verdict), 1 bad
 * usage, 2 could not run.
 *
 * The COUNTS line, on stdout after the run: "COUNTS" then space-separated name=value
 * pairs, values never containing spaces, in this order:
 *   version=4
 *   scenario ccu size inflight warmup_s measure_s drain_timeout_s latency_sample_rate rate
 *       what was run (s0: ccu=1 inflight=1 latency_sample_rate=1; rate 0: closed loop)
 *   io=epoll|uring
 *       the I/O layer that ran (uring only when --io uring was asked for and not refused);
 *       a reader takes a line without it (older builds) as epoll
 *   connected connect_failed connect_timed_out disconnected sent_total received_total
 *   sent_measured received_measured in_flight gating_violation bad_echoes peer_closed
 *   protocol_errors lost late
 *       the counters NetZlink.Stress's stacks keep (its LoadTotals), at the end of the run
 *   drain_timeout=0|1 drain_wait=none|settle|drain|echo outstanding=N unsent=N
 *       whether a wait for outstanding packets ran out, which, how many were out then, and
 *       (open model) how many measured packets were due but still not sent
 *   interrupted=0|1 throughput_ns=N cpu_us=N peak_rss_kb=N
 *       SIGINT/SIGTERM; the nanoseconds throughput divides by (the measured phase, the
 *       part of it that ran, or s0's wait for its echo; 0: none); user+system CPU; VmHWM
 *   startup_to_connected_ns=N startup_to_first_echo_ns=N
 *       from this process's start to its first connection up and to its first echo (warm-up
 *       or measured); 0: none. The start is NETZLINK_STRESS_LAUNCHED_AT (Unix seconds with
 *       decimals, set by the launcher just before it started this process) when set, else
 *       the kernel's start time of the process (/proc/self/stat, 10 ms steps)
 *   errors_by_errno=errno:count;...   (empty when none)
 *   first_n_ns=value:count,...
 *       the round trips of the run's first 100 echoes (warm-up or measured, all timed)
 *   latency_ns=value:count,...        (empty when no sample)
 *       the sampled round trips of measured echoes
 *   Both lists are lowest first, each value cut to its 11 most significant bits (the lowest
 *   value of its HdrHistogram bucket at 3 significant digits, so the .NET side's histogram is
 *   the one it would have recorded from the raw values). Version 3 added the startup and
 *   first_n fields; version 4 spells gating_violation as the result field does
 *   (gating_violations before). NetZlink.Stress keeps the names in LimitEchoCounts.Names, and its
 *   tests check this printf against them and against the result schema.
 *
 * --rate N (s2 only) is the open model of NetZlink.Stress (Scenarios/OpenSchedule.cs): N
 * packets a second over all connections, packet n of a sending phase due at its start +
 * n/N and owned by connection n mod ccu; a packet carries its due time, not its send time,
 * so its round trip counts from when it should have left. --inflight stays a cap: a due
 * packet the cap or a full socket holds back is sent as soon as it can be (late counts the
 * measured ones); measured packets still held when the measured phase ends go out during
 * the drain; warm-up packets still held when the warm-up ends are dropped with it.
 *
 * The server prints "READY port=N" once listening and stops on SIGINT/SIGTERM or, when
 * stdin is a pipe, when the pipe reaches end-of-file (the parent went); with
 * NETZLINK_STRESS_SERVER_CHILD=1 it ignores SIGINT, as the .NET server child does. It times
 * its own work as NetZlink.Stress's servers do (Latency/ServerTimes.cs): every
 * --latency-sample-rate-th read of a connection (its first included), from recv() returning
 * to the echo handed to send() (or queued for it), and prints them when it stops as one line:
 *   SERVER_TIME version=1 samples=N time_ns=value:count,...   (the list as latency_ns)
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "epoll_common.h"
#include "limit_io.h"

#define EVENTS 256
#define MAX_ERRNO 200
#define NS 1000000000.0
#define FIRST_N 100 /* the first echoes timed for first_n_ns (ColdStartProbe.FirstEchoCount) */

enum phase { P_CONNECT, P_WARMUP, P_SETTLE, P_MEASURE, P_DRAIN, P_DONE };
static const char *const phase_names[] = {"connect", "warmup", "settle", "measure", "drain", "done"};

enum cstate { C_NEW, C_CONNECTING, C_RETRY_WAIT, C_CONNECTED, C_FAILED, C_CLOSED };

typedef struct conn {
    enum cstate state;
    int attempts;
    uint64_t since_ns; /* attempt start, or when a retry is due */
    int inflight;
    int64_t sent;
    int64_t owed; /* open model: packets due and not sent yet */
    int64_t held; /* of those, the ones already passed over once (late when sent) */
    int64_t next; /* open model: this connection's next packet of the phase (its j) */
    unsigned char *rx; /* a packet being reassembled */
    size_t rxlen;
} conn_t;

typedef struct opts {
    const char *scenario, *host, *bind_host, *timeseries_csv;
    int port, ccu, size, inflight, connect_concurrency, connect_retries, connect_retry_delay_ms;
    int backlog, sndbuf, rcvbuf, send_batch, latency_sample_rate, quiet, uring;
    double warmup, measure, drain_timeout, connect_timeout, rate;
} opts_t;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* ---- command line ------------------------------------------------------ */

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "error: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (limit_echo server|client --help)\n");
    return 1;
}

static int parse_int_range(const char *flag, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi) {
        fprintf(stderr, "error: %s must be a whole number from %ld to %ld (got '%s')\n", flag, lo, hi, v);
        return 1;
    }
    *out = (int)x;
    return 0;
}

static int parse_int(const char *flag, const char *v, int lo, int *out)
{
    return parse_int_range(flag, v, lo, 1000000000L, out);
}

static int parse_rate(const char *flag, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || end == v || !(x == 0 || (x >= 0.001 && x <= 1e9))) {
        fprintf(stderr, "error: %s must be 0 (closed loop) or 0.001..1000000000 packets per second (got '%s')\n", flag,
                v);
        return 1;
    }
    *out = x;
    return 0;
}

static int parse_seconds(const char *flag, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || end == v || !(x >= 0) || x > 1e6) {
        fprintf(stderr, "error: %s must be a number of seconds, 0 or more (got '%s')\n", flag, v);
        return 1;
    }
    *out = x;
    return 0;
}

#define INT_FLAG(name, field, lo) \
    if (!strcmp(f, name)) { if (parse_int(f, v, lo, &o->field)) return 1; continue; }
#define SEC_FLAG(name, field) \
    if (!strcmp(f, name)) { if (parse_seconds(f, v, &o->field)) return 1; continue; }
#define STR_FLAG(name, field) \
    if (!strcmp(f, name)) { o->field = v; continue; }

static int parse(int argc, char **argv, opts_t *o, int server)
{
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (strncmp(f, "--", 2) != 0)
            return usage_error("unexpected word '%s'%s", f, "");
        if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))
            return usage_error("%s needs a value%s", f, "");
        const char *v = argv[++i];
        STR_FLAG("--bind-host", bind_host)
        if (!strcmp(f, "--port")) { /* a port is 16 bits: 70000 is an error, not 4464 */
            if (parse_int_range(f, v, server ? 0 : 1, 65535, &o->port))
                return 1;
            continue;
        }
        INT_FLAG("--backlog", backlog, 1)
        INT_FLAG("--sndbuf", sndbuf, 0)
        INT_FLAG("--rcvbuf", rcvbuf, 0)
        INT_FLAG("--latency-sample-rate", latency_sample_rate, 0)
        if (!strcmp(f, "--io")) {
            if (strcmp(v, "epoll") && strcmp(v, "uring"))
                return usage_error("--io must be epoll or uring (got '%s')%s", v, "");
            o->uring = !strcmp(v, "uring");
            continue;
        }
        if (!server) {
            STR_FLAG("--scenario", scenario)
            STR_FLAG("--host", host)
            STR_FLAG("--timeseries-csv", timeseries_csv)
            INT_FLAG("--ccu", ccu, 1)
            INT_FLAG("--size", size, 9)
            INT_FLAG("--inflight", inflight, 1)
            INT_FLAG("--connect-concurrency", connect_concurrency, 1)
            INT_FLAG("--connect-retries", connect_retries, 0)
            INT_FLAG("--connect-retry-delay-ms", connect_retry_delay_ms, 0)
            INT_FLAG("--send-batch", send_batch, 1)
            SEC_FLAG("--warmup", warmup)
            SEC_FLAG("--measure", measure)
            SEC_FLAG("--drain-timeout", drain_timeout)
            SEC_FLAG("--connect-timeout", connect_timeout)
            if (!strcmp(f, "--rate")) {
                if (parse_rate(f, v, &o->rate))
                    return 1;
                continue;
            }
        }
        return usage_error("unknown flag %s for limit_echo %s", f, server ? "server" : "client");
    }
    if (!server && strcmp(o->scenario, "s0") && strcmp(o->scenario, "s1") && strcmp(o->scenario, "s2"))
        return usage_error("--scenario must be s0, s1 or s2 (got '%s')%s", o->scenario, "");
    if (!server && o->rate > 0 && strcmp(o->scenario, "s2") != 0)
        return usage_error("--rate paces the s2 load only; %s has none to pace%s", o->scenario, "");
    return 0;
}

/* ---- times: an HdrHistogram-shaped count array, and the process's start -- */

/* values up to 2^40 - 1 ns, 2048 sub-buckets (3 significant digits): values below 2048 each
 * have their own count; above, a value keeps its 11 most significant bits */
#define H_MAX ((1ull << 40) - 1)
#define H_BUCKETS (2048 + 29 * 1024)

typedef struct hist {
    uint64_t *counts; /* H_BUCKETS, allocated once */
    uint64_t total;
} hist_t;

static int hist_init(hist_t *h)
{
    h->total = 0;
    h->counts = calloc(H_BUCKETS, sizeof *h->counts);
    return h->counts != NULL;
}

static void hist_record(hist_t *h, uint64_t v)
{
    if (v > H_MAX)
        v = H_MAX;
    int bits = 0;
    for (uint64_t x = v; x; x >>= 1)
        bits++;
    size_t idx = bits <= 11 ? (size_t)v : 2048 + (size_t)(bits - 12) * 1024 + (size_t)((v >> (bits - 11)) - 1024);
    h->counts[idx]++;
    h->total++;
}

/* the lowest value of bucket idx */
static uint64_t hist_value(size_t idx)
{
    if (idx < 2048)
        return idx;
    size_t shift = (idx - 2048) / 1024 + 1;
    return (uint64_t)((idx - 2048) % 1024 + 1024) << shift;
}

/* " name=value:count,..." lowest first (empty list when nothing was recorded) */
static void hist_print(const hist_t *h, const char *name)
{
    printf(" %s=", name);
    int first = 1;
    for (size_t i = 0; h->counts && i < H_BUCKETS; i++) {
        if (h->counts[i]) {
            printf("%s%llu:%llu", first ? "" : ",", (unsigned long long)hist_value(i), (unsigned long long)h->counts[i]);
            first = 0;
        }
    }
}

/* this process's start on ec_now_ns()'s clock: NETZLINK_STRESS_LAUNCHED_AT (Unix seconds from the
 * launcher) when set, else /proc/self/stat's start time against CLOCK_BOOTTIME; 0 when unknown */
static uint64_t process_start_ns(void)
{
    uint64_t now = ec_now_ns();
    const char *at = getenv("NETZLINK_STRESS_LAUNCHED_AT");
    if (at && *at) {
        char *end;
        double launched = strtod(at, &end);
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        double age = (double)rt.tv_sec + (double)rt.tv_nsec / NS - launched;
        if (!*end && launched > 0 && age >= -1) {
            uint64_t age_ns = age > 0 ? (uint64_t)(age * NS) : 0;
            return age_ns < now ? now - age_ns : 0;
        }
    }
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    unsigned long long ticks = 0;
    /* after ')': field 3 (state) ... field 22 (starttime) */
    p += 2;
    for (int field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    if (!p || sscanf(p, "%llu", &ticks) != 1)
        return 0;
    struct timespec bt;
    clock_gettime(CLOCK_BOOTTIME, &bt);
    uint64_t boot = (uint64_t)bt.tv_sec * 1000000000ull + (uint64_t)bt.tv_nsec;
    uint64_t started = ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
    uint64_t age_ns = boot > started ? boot - started : 0;
    return age_ns < now ? now - age_ns : 0;
}

/* ---- server ------------------------------------------------------------ */

/* the echo loop of ec_echo_serve (epoll_common.c) with the server's own times: every
 * sample_rate-th read of a connection (its first included) from recv() returning to the echo
 * handed to the kernel or queued for it. Returns when stop_fd ends or *stop is set. */
static int serve_timed(int l, int stop_fd, const opts_t *o, hist_t *times)
{
    int ep = epoll_create1(0);
    size_t cap = (size_t)ec_raise_nofile(); /* indexed by descriptor */
    if (cap < 1024)
        cap = 1024;
    ec_outq_t *out = calloc(cap, sizeof *out);
    uint64_t *reads = calloc(cap, sizeof *reads);
    if (!out || !reads) {
        fprintf(stderr, "out of memory for %zu connections\n", cap);
        return 2;
    }
    static char buf[EC_RECV_BUF];
    struct epoll_event evs[EVENTS];
    ec_ctl(ep, EPOLL_CTL_ADD, l, EPOLLIN, UINT64_MAX);
    if (stop_fd >= 0)
        ec_ctl(ep, EPOLL_CTL_ADD, stop_fd, EPOLLIN, UINT64_MAX - 1);
    int status = 0;
    while (!g_stop && status == 0) {
        int n = epoll_wait(ep, evs, EVENTS, 200);
        if (n < 0 && errno != EINTR) {
            perror("epoll_wait");
            status = 2;
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64;
            if (tag == UINT64_MAX - 1) {
                if (read(stop_fd, buf, sizeof buf) <= 0)
                    status = -1;
                continue;
            }
            if (tag == UINT64_MAX) {
                int fd;
                while ((fd = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if ((size_t)fd >= cap) {
                        close(fd);
                        continue;
                    }
                    ec_tune(fd, o->sndbuf, o->rcvbuf);
                    out[fd].len = 0;
                    reads[fd] = 0;
                    ec_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)fd);
                }
                continue;
            }
            int fd = (int)tag, err = 0;
            if ((evs[i].events & EPOLLOUT) && out[fd].len)
                err = ec_flush(ep, fd, tag, &out[fd]);
            if (!err && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                ssize_t r = recv(fd, buf, sizeof buf, 0);
                int timed = r > 0 && o->latency_sample_rate > 0 && reads[fd] % (uint64_t)o->latency_sample_rate == 0;
                uint64_t read_at = timed ? ec_now_ns() : 0;
                if (r == 0 || (r < 0 && errno != EAGAIN))
                    err = r == 0 ? -1 : errno;
                else if (r > 0) {
                    reads[fd]++;
                    err = ec_write(ep, fd, tag, &out[fd], buf, (size_t)r);
                    if (timed)
                        hist_record(times, ec_now_ns() - read_at);
                }
            }
            if (err) {
                close(fd);
                out[fd].len = 0;
            }
        }
    }
    close(ep);
    for (size_t i = 0; i < cap; i++)
        free(out[i].q);
    free(out);
    free(reads);
    return status > 0 ? status : 0;
}

static void record_time(void *times, uint64_t ns) { hist_record(times, ns); }

static int run_server(const opts_t *o)
{
    /* as NetZlink.Stress's server child: the parent's Ctrl+C must not stop the echo mid-drain */
    const char *child = getenv("NETZLINK_STRESS_SERVER_CHILD");
    if (child && !strcmp(child, "1"))
        signal(SIGINT, SIG_IGN);
    hist_t times;
    if (!hist_init(&times)) {
        fprintf(stderr, "error: out of memory for the server's times\n");
        return 2;
    }
    int port;
    int l = ec_listen(o->bind_host, o->port, o->backlog, &port);
    if (l < 0)
        return 2;
    printf("READY port=%d\n", port);
    fflush(stdout);
    if (!o->quiet)
        fprintf(stderr, "limit_echo server listening on %s:%d\n", o->bind_host, port);
    struct stat st;
    int watch_stdin = fstat(0, &st) == 0 && S_ISFIFO(st.st_mode);
    int rc = 3;
    if (o->uring) {
        const char *why = NULL;
        rc = lio_uring_serve(l, watch_stdin ? 0 : -1, o->sndbuf, o->rcvbuf, o->latency_sample_rate, &g_stop,
                             record_time, &times, &why);
        if (rc == 3)
            fprintf(stderr, "limit_echo: --io uring refused (%s); serving on epoll\n", why);
    }
    if (rc == 3)
        rc = serve_timed(l, watch_stdin ? 0 : -1, o, &times);
    close(l);
    printf("SERVER_TIME version=1 samples=%llu", (unsigned long long)times.total);
    hist_print(&times, "time_ns");
    fputc('\n', stdout);
    fflush(stdout);
    free(times.counts);
    return rc;
}

/* ---- client ------------------------------------------------------------ */

typedef struct client {
    const opts_t *o;
    lio_t *io;
    int ccu, inflight, sample_rate, verify, s0, s1;
    int64_t per_conn; /* packets each connection sends in all */
    size_t plen;      /* 4 + size */
    int batch;        /* packets per send */
    unsigned char *scratch;
    conn_t *conns;
    struct addrinfo *addr;
    enum phase phase;
    int next_new, connecting, resolved;
    int64_t connected, connect_fail, connect_timeout, disconnected;
    int64_t protocol_errors, server_closed, lost; /* as NetZlink.Stress counts them */
    int64_t sent_total, recv_total, sent_measured, recv_measured, inflight_now;
    int64_t gating, bad_echoes;
    int64_t errors[MAX_ERRNO + 1];
    hist_t latency;              /* sampled round trips of measured echoes */
    hist_t first;                /* round trips of the run's first FIRST_N echoes */
    uint64_t start_ns;           /* this process's start (process_start_ns), 0 unknown */
    uint64_t first_connected_ns; /* when the first connection came up, 0 none */
    uint64_t first_echo_ns;      /* when the first echo came back, 0 none */
    int drain_timeout, interrupted;
    const char *drain_wait; /* the wait that ran out: settle, drain or echo */
    int64_t outstanding;    /* packets out when it ran out */
    uint64_t throughput_ns; /* what throughput divides by */
    /* open model (--rate): the current phase's schedule */
    int open;
    uint64_t sched_start;     /* when packet 0 of the phase is due */
    double sched_interval;    /* ns between packets, all connections together */
    int64_t sched_total;      /* packets in the phase */
    int64_t sched_pos;        /* packets of the phase that fell due so far */
    int sched_measured;       /* the phase's packets are measured ones */
    int64_t owed_total, late, unsent;
    uint64_t last_measured_echo_ns;
} client_t;

static int sending(enum phase p) { return p == P_WARMUP || p == P_MEASURE; }

static unsigned char filler(size_t offset) { return (unsigned char)(offset * 31 + 7); }

static void count_error(client_t *c, int err)
{
    c->errors[err > 0 && err <= MAX_ERRNO ? err : 0]++;
}

/* by_peer: the server closed or reset it (disconnects=), not the client on a bad echo */
static void disconnect(client_t *c, conn_t *k, int err, int by_peer)
{
    if (k->state != C_CONNECTED)
        return;
    if (err > 0)
        count_error(c, err);
    c->io->close(c->io, (int)(k - c->conns));
    k->state = C_CLOSED;
    /* its open-model packets still owed are never sent: they are not in sent= either */
    c->owed_total -= k->owed;
    k->owed = k->held = 0;
    c->disconnected++;
    if (by_peer)
        c->server_closed++;
    /* whatever it had outstanding (a partial echo included) stays counted as sent, never received */
    c->lost += k->inflight;
    c->inflight_now -= k->inflight;
    k->inflight = 0;
}

/* opened: the attempt has a socket for the layer to close */
static void attempt_failed(client_t *c, conn_t *k, int err, int timed_out, int opened, uint64_t now)
{
    if (opened)
        c->io->close(c->io, (int)(k - c->conns));
    c->connecting--;
    count_error(c, timed_out ? ETIMEDOUT : err);
    if (k->attempts <= c->o->connect_retries) {
        k->state = C_RETRY_WAIT;
        k->since_ns = now + (uint64_t)c->o->connect_retry_delay_ms * 1000000ull;
        return;
    }
    k->state = C_FAILED;
    c->resolved++;
    if (timed_out)
        c->connect_timeout++;
    else
        c->connect_fail++;
}

static void start_attempt(client_t *c, int idx, uint64_t now)
{
    conn_t *k = &c->conns[idx];
    k->attempts++;
    k->since_ns = now;
    c->connecting++;
    k->state = C_CONNECTING;
    int err = c->io->connect(c->io, idx, c->addr->ai_addr, c->addr->ai_addrlen);
    if (err)
        attempt_failed(c, k, err, 0, 0, now);
}

/* starts attempts up to --connect-concurrency and times out the slow ones */
static void drive_connects(client_t *c, uint64_t now)
{
    uint64_t timeout = (uint64_t)(c->o->connect_timeout * NS);
    for (int i = 0; i < c->ccu; i++) {
        conn_t *k = &c->conns[i];
        if (k->state == C_CONNECTING && now - k->since_ns >= timeout)
            attempt_failed(c, k, 0, 1, 1, now);
        if (k->state == C_RETRY_WAIT && now >= k->since_ns && c->connecting < c->o->connect_concurrency)
            start_attempt(c, i, now);
    }
    while (c->next_new < c->ccu && c->connecting < c->o->connect_concurrency)
        start_attempt(c, c->next_new++, now);
}

/* keeps up to --inflight packets outstanding on connection idx */
static void top_up(client_t *c, int idx)
{
    conn_t *k = &c->conns[idx];
    if (k->state != C_CONNECTED || !sending(c->phase))
        return;
    int64_t want = c->inflight - k->inflight;
    if (c->per_conn - k->sent < want)
        want = c->per_conn - k->sent;
    int measured = c->phase == P_MEASURE;
    while (want > 0) {
        int n = want < c->batch ? (int)want : c->batch;
        uint64_t now = ec_now_ns();
        for (int p = 0; p < n; p++) {
            unsigned char *body = c->scratch + (size_t)p * c->plen + 4;
            body[0] = (unsigned char)measured;
            memcpy(body + 1, &now, 8); /* little-endian host */
        }
        int err = c->io->write(c->io, idx, c->scratch, (size_t)n * c->plen);
        if (err) {
            disconnect(c, k, err, 1);
            return;
        }
        k->inflight += n;
        k->sent += n;
        c->inflight_now += n;
        c->sent_total += n;
        if (measured)
            c->sent_measured += n;
        want -= n;
    }
}

/* ---- the open model (--rate) ------------------------------------------- */

/* when packet n of the current phase is due */
static uint64_t due_at(const client_t *c, int64_t n) { return c->sched_start + (uint64_t)((double)n * c->sched_interval); }

/* starts a sending phase's schedule: its packets fall due from now for `seconds` */
static void sched_begin(client_t *c, double seconds, int measured)
{
    c->sched_start = ec_now_ns();
    c->sched_interval = NS / c->o->rate;
    c->sched_total = (int64_t)ceil(seconds * c->o->rate);
    c->sched_pos = 0;
    c->sched_measured = measured;
    for (int i = 0; i < c->ccu; i++)
        c->conns[i].next = 0;
}

/* the warm-up ended: what it still owes is dropped with it, and nothing more falls due */
static void drop_owed(client_t *c)
{
    for (int i = 0; i < c->ccu; i++)
        c->conns[i].owed = c->conns[i].held = 0;
    c->owed_total = 0;
    c->sched_pos = c->sched_total;
}

/* sends connection idx's owed packets, oldest first, while --inflight and its socket allow,
 * each stamped with the time it was due */
static void send_owed(client_t *c, int idx)
{
    conn_t *k = &c->conns[idx];
    while (k->state == C_CONNECTED && k->owed > 0 && k->inflight < c->inflight && !c->io->held(c->io, idx)) {
        int64_t n = k->owed;
        if (n > c->inflight - k->inflight)
            n = c->inflight - k->inflight;
        if (n > c->batch)
            n = c->batch;
        for (int64_t p = 0; p < n; p++) {
            unsigned char *body = c->scratch + (size_t)p * c->plen + 4;
            uint64_t due = due_at(c, (k->next + p) * c->ccu + idx);
            body[0] = (unsigned char)c->sched_measured;
            memcpy(body + 1, &due, 8); /* little-endian host */
        }
        int err = c->io->write(c->io, idx, c->scratch, (size_t)n * c->plen);
        if (err) {
            disconnect(c, k, err, 1);
            return;
        }
        int64_t late = n < k->held ? n : k->held;
        k->held -= late;
        k->inflight += (int)n;
        k->sent += n;
        k->next += n;
        k->owed -= n;
        c->owed_total -= n;
        c->inflight_now += n;
        c->sent_total += n;
        if (c->sched_measured) {
            c->sent_measured += n;
            c->late += late;
        }
    }
}

/* hands every packet that fell due since the last look to its connection and sends what the
 * cap allows; what stays owed is held back, and late when it goes */
static void pace(client_t *c, uint64_t now)
{
    if (c->sched_pos >= c->sched_total || now < c->sched_start)
        return;
    int64_t due = (int64_t)floor((double)(now - c->sched_start) / c->sched_interval) + 1;
    if (due > c->sched_total)
        due = c->sched_total;
    for (int64_t n = c->sched_pos; n < due; n++) {
        conn_t *k = &c->conns[n % c->ccu];
        if (k->state == C_CONNECTED) {
            k->owed++;
            c->owed_total++;
        } else {
            k->next++; /* a closed connection's packets are never sent */
        }
    }
    int64_t touched = due - c->sched_pos < c->ccu ? due - c->sched_pos : c->ccu;
    for (int64_t n = c->sched_pos; n < c->sched_pos + touched; n++) {
        int idx = (int)(n % c->ccu);
        send_owed(c, idx);
        c->conns[idx].held = c->conns[idx].owed;
    }
    c->sched_pos = due;
}

/* the echo path: closed loop tops up, the open model sends what it owes */
static void refill(client_t *c, int idx)
{
    if (c->open)
        send_owed(c, idx);
    else
        top_up(c, idx);
}

/* one whole echoed packet; returns 0 if the connection must close */
static int on_packet(client_t *c, conn_t *k, const unsigned char *p)
{
    uint32_t len = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    if (len != (uint32_t)c->o->size) {
        c->protocol_errors++;
        return 0;
    }
    int bad = 0;
    for (size_t i = 9; c->verify && !bad && i < (size_t)c->o->size; i++)
        bad = p[4 + i] != filler(i);
    if (bad) {
        c->bad_echoes++;
        return 0;
    }
    if (k->inflight == 0) {
        c->gating++;
    } else {
        k->inflight--;
        c->inflight_now--;
    }
    c->recv_total++;
    if (c->first.total < FIRST_N) {
        uint64_t now = ec_now_ns(), at;
        memcpy(&at, p + 5, 8);
        if (!c->first_echo_ns)
            c->first_echo_ns = now;
        hist_record(&c->first, now > at ? now - at : 0);
    }
    if (p[4] == 1) {
        int64_t m = ++c->recv_measured;
        if (c->open)
            c->last_measured_echo_ns = ec_now_ns();
        if (c->sample_rate > 0 && m % c->sample_rate == 0) {
            uint64_t at;
            memcpy(&at, p + 5, 8);
            uint64_t now = ec_now_ns();
            hist_record(&c->latency, now > at ? now - at : 0);
        }
    }
    return 1;
}

/* ---- what an I/O layer reports (limit_io.h) ----------------------------- */

void lc_data(client_t *c, int idx, const unsigned char *buf, size_t n)
{
    conn_t *k = &c->conns[idx];
    if (k->state != C_CONNECTED)
        return;
    size_t at = 0;
    while (at < n) {
        const unsigned char *p;
        if (k->rxlen == 0 && n - at >= c->plen) {
            p = buf + at;
            at += c->plen;
        } else {
            size_t take = c->plen - k->rxlen < n - at ? c->plen - k->rxlen : n - at;
            memcpy(k->rx + k->rxlen, buf + at, take);
            k->rxlen += take;
            at += take;
            if (k->rxlen < c->plen)
                break;
            k->rxlen = 0;
            p = k->rx;
        }
        if (!on_packet(c, k, p)) {
            disconnect(c, k, 0, 0);
            return;
        }
    }
    refill(c, idx);
}

void lc_closed(client_t *c, int idx, int err) { disconnect(c, &c->conns[idx], err, 1); }

void lc_connected(client_t *c, int idx, int err, uint64_t now)
{
    conn_t *k = &c->conns[idx];
    if (k->state != C_CONNECTING)
        return;
    if (err) {
        attempt_failed(c, k, err, 0, 1, now);
        return;
    }
    k->state = C_CONNECTED;
    if (!c->first_connected_ns)
        c->first_connected_ns = now;
    c->connecting--;
    c->resolved++;
    c->connected++;
    refill(c, idx);
}

void lc_drained(client_t *c, int idx)
{
    if (c->open)
        send_owed(c, idx); /* the full socket was what held them */
}

/* ---- the epoll layer (--io epoll, the c-epoll row) ---------------------- */

typedef struct ep_layer {
    lio_t io; /* first: the layer's handle */
    int ep, sndbuf, rcvbuf, nfds;
    int *fds;           /* per connection, -1 when closed */
    unsigned char *connecting;
    ec_outq_t *out;     /* what a full socket held back */
} ep_layer_t;

static ep_layer_t *as_ep(lio_t *io) { return (ep_layer_t *)io; }

static int ep_connect(lio_t *io, int idx, const struct sockaddr *addr, socklen_t len)
{
    ep_layer_t *e = as_ep(io);
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errno;
    ec_tune(fd, e->sndbuf, e->rcvbuf);
    if (connect(fd, addr, len) != 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        return err;
    }
    e->fds[idx] = fd;
    e->connecting[idx] = 1;
    e->out[idx].len = 0;
    ec_ctl(e->ep, EPOLL_CTL_ADD, fd, EPOLLOUT, (uint64_t)idx);
    return 0;
}

static int ep_write(lio_t *io, int idx, const void *buf, size_t len)
{
    ep_layer_t *e = as_ep(io);
    return ec_write(e->ep, e->fds[idx], (uint64_t)idx, &e->out[idx], buf, len);
}

static int ep_held(lio_t *io, int idx) { return as_ep(io)->out[idx].len != 0; }

static void ep_close(lio_t *io, int idx)
{
    ep_layer_t *e = as_ep(io);
    if (e->fds[idx] < 0)
        return;
    close(e->fds[idx]); /* leaves the epoll set with it */
    e->fds[idx] = -1;
    e->out[idx].len = 0;
}

static void ep_readable(ep_layer_t *e, client_t *c, int idx)
{
    static unsigned char buf[EC_RECV_BUF];
    ssize_t r = recv(e->fds[idx], buf, sizeof buf, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN))
        lc_closed(c, idx, r == 0 ? 0 : errno);
    else if (r > 0)
        lc_data(c, idx, buf, (size_t)r);
}

static void ep_event(ep_layer_t *e, client_t *c, int idx, uint32_t events, uint64_t now)
{
    int fd = e->fds[idx];
    if (fd < 0)
        return; /* closed earlier in this batch */
    if (e->connecting[idx]) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        e->connecting[idx] = 0;
        if (!err)
            ec_ctl(e->ep, EPOLL_CTL_MOD, fd, EPOLLIN, (uint64_t)idx);
        lc_connected(c, idx, err, now);
        return;
    }
    if ((events & EPOLLOUT) && e->out[idx].len) {
        int err = ec_flush(e->ep, fd, (uint64_t)idx, &e->out[idx]);
        if (err) {
            lc_closed(c, idx, err);
            return;
        }
        if (e->out[idx].len == 0)
            lc_drained(c, idx);
    }
    if (e->fds[idx] >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        ep_readable(e, c, idx);
}

/* epoll_pwait2 (a nanosecond timeout: the open model's due times) where the kernel has it;
 * where it does not (ENOSYS: kernels before 5.11, qemu-user 7.2), epoll_wait with the timeout
 * rounded up to a millisecond. An error used to be taken for "no events", so without
 * epoll_pwait2 the client spun until every connect attempt timed out. */
static int ep_wait(lio_t *io, client_t *c, uint64_t ns)
{
    static int no_pwait2;
    ep_layer_t *e = as_ep(io);
    struct epoll_event evs[EVENTS];
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    int n = no_pwait2 ? -1 : epoll_pwait2(e->ep, evs, EVENTS, &ts, NULL);
    if (n < 0 && (no_pwait2 || errno == ENOSYS)) {
        no_pwait2 = 1;
        uint64_t ms = (ns + 999999ull) / 1000000ull;
        n = epoll_wait(e->ep, evs, EVENTS, ms > INT_MAX ? INT_MAX : (int)ms);
    }
    if (n < 0) {
        if (errno == EINTR)
            return 0;
        perror("epoll_wait");
        return -1;
    }
    uint64_t now = ec_now_ns();
    for (int i = 0; i < n; i++)
        ep_event(e, c, (int)evs[i].data.u64, evs[i].events, now);
    return 0;
}

static void ep_destroy(lio_t *io)
{
    ep_layer_t *e = as_ep(io);
    for (int i = 0; e->fds && e->out && i < e->nfds; i++) {
        ep_close(io, i);
        free(e->out[i].q); /* kept across reconnects; allocated once a send had to queue */
    }
    close(e->ep);
    free(e->fds);
    free(e->connecting);
    free(e->out);
    free(e);
}

static lio_t *ep_layer(int ccu, int sndbuf, int rcvbuf)
{
    ep_layer_t *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->ep = epoll_create1(0);
    e->nfds = ccu;
    e->sndbuf = sndbuf;
    e->rcvbuf = rcvbuf;
    e->fds = malloc((size_t)ccu * sizeof *e->fds);
    e->connecting = calloc((size_t)ccu, 1);
    e->out = calloc((size_t)ccu, sizeof *e->out);
    e->io = (lio_t){.name = "epoll", .connect = ep_connect, .write = ep_write, .held = ep_held, .close = ep_close,
                    .wait = ep_wait, .destroy = ep_destroy};
    if (e->ep < 0 || !e->fds || !e->connecting || !e->out) {
        ep_destroy(&e->io);
        return NULL;
    }
    for (int i = 0; i < ccu; i++)
        e->fds[i] = -1;
    return &e->io;
}

static void set_phase(client_t *c, enum phase p)
{
    enum phase was = c->phase;
    c->phase = p;
    if (c->open) {
        if (was == P_WARMUP)
            drop_owed(c);
        if (sending(p))
            sched_begin(c, p == P_WARMUP ? c->o->warmup : c->o->measure, p == P_MEASURE);
        return;
    }
    if (sending(p))
        for (int i = 0; i < c->ccu; i++)
            top_up(c, i);
}

/* VmRSS in MB from /proc/self/statm (resident pages), 0 when it cannot be read */
static double resident_mb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* VmHWM in kB from /proc/self/status: the peak of this program's own memory.
 * getrusage's ru_maxrss is not: Linux carries it across execve, so a client
 * started by a .NET parent would report the parent's size. 0 when unreadable. */
static long peak_resident_kb(void)
{
    char line[256];
    long kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* the progress line and the time series, once a second */
typedef struct ticker {
    uint64_t start, last;
    int64_t last_sent, last_recv;
    FILE *series;
} ticker_t;

static void tick(client_t *c, ticker_t *t, uint64_t now)
{
    if (now - t->last < 1000000000ull)
        return;
    double dt = (double)(now - t->last) / NS;
    if (dt <= 0)
        return;
    double elapsed = (double)(now - t->start) / NS;
    double sps = (double)(c->sent_total - t->last_sent) / dt;
    double rps = (double)(c->recv_total - t->last_recv) / dt;
    const char *ph = c->s0 && c->phase == P_MEASURE ? "echo" : phase_names[c->phase];
    if (!c->o->quiet)
        fprintf(stderr, "[%5.1fs] phase=%s conns=%lld sent/s=%.0f recv/s=%.0f inflight=%lld\n", elapsed, ph,
                (long long)(c->connected - c->disconnected), sps, rps, (long long)c->inflight_now);
    if (t->series) {
        fprintf(t->series, "%.3f,%s,%.2f,%.2f,%lld,%.1f,\n", elapsed, ph, sps, rps, (long long)c->inflight_now,
                resident_mb());
        fflush(t->series);
    }
    t->last = now;
    t->last_sent = c->sent_total;
    t->last_recv = c->recv_total;
}

/* runs the loop until done() says so or the deadline passes; returns 1 if done() held */
static int run_until(client_t *c, ticker_t *t, int (*done)(client_t *), uint64_t deadline)
{
    for (;;) {
        uint64_t now = ec_now_ns();
        if (c->phase == P_CONNECT)
            drive_connects(c, now);
        if (c->open)
            pace(c, now);
        tick(c, t, now);
        if (done && done(c))
            return 1;
        if (g_stop) {
            c->interrupted = 1;
            return 0;
        }
        if (deadline && now >= deadline)
            return 0;
        uint64_t wait_ns = c->phase == P_CONNECT ? 5000000ull : 50000000ull;
        if (c->open && c->sched_pos < c->sched_total) {
            /* sleep until the next packet falls due, no longer */
            uint64_t next = due_at(c, c->sched_pos);
            uint64_t until = next > now ? next - now : 0;
            if (until < wait_ns)
                wait_ns = until;
        }
        if (c->io->wait(c->io, c, wait_ns) < 0)
            exit(2); /* the layer printed why */
    }
}

static int all_resolved(client_t *c) { return c->resolved == c->ccu; }
static int nothing_outstanding(client_t *c) { return c->inflight_now == 0 && c->owed_total == 0; }
static int echo_back(client_t *c) { return c->recv_measured >= 1 || c->bad_echoes > 0; }

static uint64_t secs(double s) { return (uint64_t)(s * NS); }

/* a wait for outstanding packets ran out */
static void timed_out(client_t *c, const char *wait)
{
    c->drain_timeout = 1;
    c->drain_wait = wait;
    c->outstanding = c->inflight_now;
    c->unsent = c->owed_total;
}

static void run_phases(client_t *c, ticker_t *t)
{
    const opts_t *o = c->o;
    if (!run_until(c, t, all_resolved, 0) || c->s1 || c->connected == 0)
        return;
    if (c->s0) {
        uint64_t start = ec_now_ns();
        set_phase(c, P_MEASURE);
        run_until(c, t, echo_back, start + secs(o->drain_timeout > 1 ? o->drain_timeout : 1));
        set_phase(c, P_DRAIN);
        if (c->inflight_now > 0)
            timed_out(c, "echo");
        c->throughput_ns = ec_now_ns() - start;
        return;
    }
    if (o->warmup > 0) {
        set_phase(c, P_WARMUP);
        if (!run_until(c, t, NULL, ec_now_ns() + secs(o->warmup)) && c->interrupted)
            return;
        set_phase(c, P_SETTLE);
        if (!run_until(c, t, nothing_outstanding, ec_now_ns() + secs(o->drain_timeout))) {
            if (c->interrupted)
                return;
            timed_out(c, "settle");
        }
    }
    set_phase(c, P_MEASURE);
    uint64_t measuring = ec_now_ns();
    if (!run_until(c, t, NULL, measuring + secs(o->measure)) && c->interrupted) {
        c->throughput_ns = ec_now_ns() - measuring; /* cut short: the part that ran */
        return;
    }
    set_phase(c, P_DRAIN);
    if (!run_until(c, t, nothing_outstanding, ec_now_ns() + secs(o->drain_timeout)) && !c->interrupted)
        timed_out(c, "drain");
    c->throughput_ns = secs(o->measure);
    /* open model: the drain sends what the measured phase held back, so a run that fell behind its
     * rate divides by the time to its last measured echo and reports what it sustained */
    if (c->open && c->last_measured_echo_ns > measuring && c->last_measured_echo_ns - measuring > c->throughput_ns)
        c->throughput_ns = c->last_measured_echo_ns - measuring;
}

/* ---- the COUNTS line --------------------------------------------------- */

/* user + system CPU of this process, in microseconds */
static long long cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + (long long)ru.ru_stime.tv_sec * 1000000 +
           ru.ru_stime.tv_usec;
}

/* ns from the process's start to t; 0 when either is unknown */
static uint64_t since_start(const client_t *c, uint64_t t)
{
    return t && c->start_ns && t > c->start_ns ? t - c->start_ns : 0;
}

static void print_counts(client_t *c)
{
    const opts_t *o = c->o;
    printf("COUNTS version=4 scenario=%s ccu=%d size=%d inflight=%d warmup_s=%g measure_s=%g drain_timeout_s=%g "
           "latency_sample_rate=%d rate=%.17g io=%s",
           o->scenario, c->ccu, o->size, c->inflight, o->warmup, o->measure, o->drain_timeout, c->sample_rate,
           c->open ? o->rate : 0.0, c->io->name);
    printf(" connected=%lld connect_failed=%lld connect_timed_out=%lld disconnected=%lld sent_total=%lld "
           "received_total=%lld sent_measured=%lld received_measured=%lld in_flight=%lld gating_violation=%lld "
           "bad_echoes=%lld peer_closed=%lld protocol_errors=%lld lost=%lld late=%lld",
           (long long)c->connected, (long long)c->connect_fail, (long long)c->connect_timeout,
           (long long)c->disconnected, (long long)c->sent_total, (long long)c->recv_total,
           (long long)c->sent_measured, (long long)c->recv_measured, (long long)c->inflight_now,
           (long long)c->gating, (long long)c->bad_echoes, (long long)c->server_closed,
           (long long)c->protocol_errors, (long long)c->lost, (long long)c->late);
    printf(" drain_timeout=%d drain_wait=%s outstanding=%lld unsent=%lld interrupted=%d throughput_ns=%llu cpu_us=%lld "
           "peak_rss_kb=%ld",
           c->drain_timeout, c->drain_wait ? c->drain_wait : "none", (long long)c->outstanding, (long long)c->unsent,
           c->interrupted,
           (unsigned long long)c->throughput_ns, cpu_us(), peak_resident_kb());
    printf(" startup_to_connected_ns=%llu startup_to_first_echo_ns=%llu", (unsigned long long)since_start(c, c->first_connected_ns),
           (unsigned long long)since_start(c, c->first_echo_ns));
    fputs(" errors_by_errno=", stdout);
    int first = 1;
    for (int e = 0; e <= MAX_ERRNO; e++) {
        if (c->errors[e]) {
            printf("%s%d:%lld", first ? "" : ";", e, (long long)c->errors[e]);
            first = 0;
        }
    }
    hist_print(&c->first, "first_n_ns");
    hist_print(&c->latency, "latency_ns");
    fputc('\n', stdout);
    fflush(stdout);
}

static int run_client(const opts_t *o)
{
    client_t c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.s0 = !strcmp(o->scenario, "s0");
    c.s1 = !strcmp(o->scenario, "s1");
    c.ccu = c.s0 ? 1 : o->ccu;
    c.inflight = c.s0 ? 1 : o->inflight;
    c.sample_rate = c.s0 ? 1 : o->latency_sample_rate;
    c.per_conn = c.s0 ? 1 : INT64_MAX;
    c.verify = c.s0;
    c.plen = (size_t)o->size + 4;
    c.batch = o->send_batch;
    c.open = o->rate > 0;
    c.start_ns = process_start_ns();
    if (!hist_init(&c.latency) || !hist_init(&c.first)) {
        fprintf(stderr, "error: out of memory for the latency histograms\n");
        return 2;
    }

    long limit = ec_raise_nofile();
    if (limit >= 0 && (long)c.ccu + 32 > limit) {
        fprintf(stderr, "error: %d connections need about %d descriptors, but this process may open only %ld "
                        "(RLIMIT_NOFILE hard limit); lower --ccu\n", c.ccu, c.ccu + 32, limit);
        return 2;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", o->port);
    int rc = getaddrinfo(o->host, ps, &hints, &c.addr);
    if (rc != 0) {
        fprintf(stderr, "error: cannot resolve --host %s: %s\n", o->host, gai_strerror(rc));
        return 2;
    }
    ticker_t t;
    memset(&t, 0, sizeof t);
    if (o->timeseries_csv) {
        t.series = fopen(o->timeseries_csv, "w");
        if (!t.series) {
            fprintf(stderr, "error: --timeseries-csv %s cannot be written: %s\n", o->timeseries_csv,
                    strerror(errno));
            return 2;
        }
        /* the .NET stacks' header; gc_heap_mb stays empty: there is no managed heap here */
        fputs("elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb\n", t.series);
    }

    const char *why = NULL;
    c.io = o->uring ? lio_uring_client(c.ccu, o->sndbuf, o->rcvbuf, &why) : NULL;
    if (o->uring && !c.io)
        fprintf(stderr, "limit_echo: --io uring refused (%s); running on epoll\n", why);
    if (!c.io)
        c.io = ep_layer(c.ccu, o->sndbuf, o->rcvbuf);
    c.conns = calloc((size_t)c.ccu, sizeof *c.conns);
    c.scratch = malloc(c.plen * (size_t)c.batch);
    unsigned char *rx = malloc(c.plen * (size_t)c.ccu);
    if (!c.io || !c.conns || !c.scratch || !rx) {
        fprintf(stderr, "error: out of memory for %d connections of %zu-byte packets\n", c.ccu, c.plen);
        return 2;
    }
    for (int i = 0; i < c.ccu; i++)
        c.conns[i].rx = rx + c.plen * (size_t)i;
    for (int p = 0; p < c.batch; p++) {
        unsigned char *pk = c.scratch + (size_t)p * c.plen;
        uint32_t size = (uint32_t)o->size;
        pk[0] = (unsigned char)(size >> 24);
        pk[1] = (unsigned char)(size >> 16);
        pk[2] = (unsigned char)(size >> 8);
        pk[3] = (unsigned char)size;
        for (size_t i = 9; i < (size_t)o->size; i++)
            pk[4 + i] = filler(i);
    }

    t.start = t.last = ec_now_ns();
    c.phase = P_CONNECT;
    run_phases(&c, &t);
    c.phase = P_DONE;
    if (t.series)
        fclose(t.series);

    print_counts(&c);
    c.io->destroy(c.io); /* closes what is still open */
    freeaddrinfo(c.addr);
    free(c.latency.counts);
    free(c.first.counts);
    free(c.scratch);
    free(c.conns);
    free(rx);
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o = {
        .scenario = "s2", .host = "127.0.0.1", .bind_host = "127.0.0.1",
        .port = 27110, .ccu = 10000, .size = 1024, .inflight = 30,
        .connect_concurrency = 256, .connect_retries = 3, .connect_retry_delay_ms = 100,
        .backlog = 32768, .sndbuf = 262144, .rcvbuf = 262144, .send_batch = 30,
        .latency_sample_rate = 16, .warmup = 3, .measure = 10, .drain_timeout = 10, .connect_timeout = 10,
    };
    if (argc == 4 && !strcmp(argv[1], "probe") && !strcmp(argv[2], "--io") && !strcmp(argv[3], "uring")) {
        /* whether --io uring would run here (compare skips c-uring with the reason when not) */
        const char *why = NULL;
        lio_t *io = lio_uring_client(1, 0, 0, &why);
        if (!io) {
            printf("io=uring refused: %s\n", why);
            return 2;
        }
        io->destroy(io);
        printf("io=uring ok\n");
        return 0;
    }
    int server = argc >= 2 && !strcmp(argv[1], "server");
    int client = argc >= 2 && !strcmp(argv[1], "client");
    if (!server && !client) {
        fprintf(stderr,
                "usage: limit_echo server [--io epoll|uring] [--bind-host H] [--port P] [--backlog N] [--sndbuf N] [--rcvbuf N] [--quiet]\n"
                "       limit_echo client [--io epoll|uring] [--scenario s0|s1|s2] [--host H] [--port P] [--ccu N] [--size N]\n"
                "                         [--inflight N] [--warmup S] [--measure S] [--drain-timeout S]\n"
                "                         [--connect-concurrency N] [--connect-timeout S] [--connect-retries N]\n"
                "                         [--connect-retry-delay-ms N] [--sndbuf N] [--rcvbuf N] [--send-batch N]\n"
                "                         [--latency-sample-rate N] [--rate N] [--timeseries-csv PATH] [--quiet]\n"
                "the client prints one COUNTS line of raw counts (see the top of limit_echo.c); NetZlink.Stress\n"
                "judges it: NetZlink.Stress counts [--metrics-csv F] [--summary-json F] [FILE]\n"
                "       limit_echo probe --io uring   (exit 0: io_uring runs here; 2: refused, and why)\n"
                "exit codes: 0 counted, 1 bad usage, 2 could not run\n");
        return 1;
    }
    if (parse(argc, argv, &o, server))
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return server ? run_server(&o) : run_client(&o);
}
