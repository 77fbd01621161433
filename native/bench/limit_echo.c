/*
 * limit_echo.c - the "limit row" of the compare report: the s0/s1/s2 STREAM echo
 * scenarios on plain non-blocking sockets and level-triggered epoll, one thread per
 * side, no library and no hand-off between threads. It shows what this machine
 * allows at all, next to the .NET stacks.
 *
 *   limit_echo server [--bind-host H] [--port P] [--backlog N] [--sndbuf N] [--rcvbuf N] [--quiet]
 *   limit_echo client [--scenario s0|s1|s2] [--host H] [--port P] [--ccu N] ...
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
 *   version=1
 *   scenario ccu size inflight warmup_s measure_s drain_timeout_s latency_sample_rate
 *       what was run (s0: ccu=1 inflight=1 latency_sample_rate=1)
 *   connected connect_failed connect_timed_out disconnected sent_total received_total
 *   sent_measured received_measured in_flight gating_violations bad_echoes peer_closed
 *   protocol_errors lost
 *       the counters NetZlink.Stress's stacks keep (its LoadTotals), at the end of the run
 *   drain_timeout=0|1 drain_wait=none|settle|drain|echo outstanding=N
 *       whether a wait for outstanding packets ran out, which, and how many were out then
 *   interrupted=0|1 throughput_ns=N cpu_us=N peak_rss_kb=N
 *       SIGINT/SIGTERM; the nanoseconds throughput divides by (the measured phase, the
 *       part of it that ran, or s0's wait for its echo; 0: none); user+system CPU; VmHWM
 *   errors_by_errno=errno:count;...   (empty when none)
 *   latency_ns=value:count,...        (empty when no sample)
 *       the sampled round trips, lowest first, each value cut to its 11 most significant
 *       bits (the lowest value of its HdrHistogram bucket at 3 significant digits, so the
 *       .NET side's histogram is the one it would have recorded from the raw samples)
 *
 * The server prints "READY port=N" once listening and stops on SIGINT/SIGTERM or, when
 * stdin is a pipe, when the pipe reaches end-of-file (the parent went); with
 * NETZLINK_STRESS_SERVER_CHILD=1 it ignores SIGINT, as the .NET server child does.
 */
#include <errno.h>
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
#include <unistd.h>

#include "epoll_common.h"

#define EVENTS 256
#define MAX_ERRNO 200
#define NS 1000000000.0

enum phase { P_CONNECT, P_WARMUP, P_SETTLE, P_MEASURE, P_DRAIN, P_DONE };
static const char *const phase_names[] = {"connect", "warmup", "settle", "measure", "drain", "done"};

enum cstate { C_NEW, C_CONNECTING, C_RETRY_WAIT, C_CONNECTED, C_FAILED, C_CLOSED };

typedef struct conn {
    int fd;
    enum cstate state;
    int attempts;
    uint64_t since_ns; /* attempt start, or when a retry is due */
    int inflight;
    int64_t sent;
    ec_outq_t out;
    unsigned char *rx; /* a packet being reassembled */
    size_t rxlen;
} conn_t;

typedef struct opts {
    const char *scenario, *host, *bind_host, *timeseries_csv;
    int port, ccu, size, inflight, connect_concurrency, connect_retries, connect_retry_delay_ms;
    int backlog, sndbuf, rcvbuf, send_batch, latency_sample_rate, quiet;
    double warmup, measure, drain_timeout, connect_timeout;
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

static int parse_int(const char *flag, const char *v, int lo, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > 1000000000L) {
        char lo_s[32];
        snprintf(lo_s, sizeof lo_s, "%d", lo);
        fprintf(stderr, "error: %s must be a whole number of at least %s (got '%s')\n", flag, lo_s, v);
        return 1;
    }
    *out = (int)x;
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
        INT_FLAG("--port", port, server ? 0 : 1)
        INT_FLAG("--backlog", backlog, 1)
        INT_FLAG("--sndbuf", sndbuf, 0)
        INT_FLAG("--rcvbuf", rcvbuf, 0)
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
            INT_FLAG("--latency-sample-rate", latency_sample_rate, 0)
            SEC_FLAG("--warmup", warmup)
            SEC_FLAG("--measure", measure)
            SEC_FLAG("--drain-timeout", drain_timeout)
            SEC_FLAG("--connect-timeout", connect_timeout)
        }
        return usage_error("unknown flag %s for limit_echo %s", f, server ? "server" : "client");
    }
    if (!server && strcmp(o->scenario, "s0") && strcmp(o->scenario, "s1") && strcmp(o->scenario, "s2"))
        return usage_error("--scenario must be s0, s1 or s2 (got '%s')%s", o->scenario, "");
    return 0;
}

/* ---- server ------------------------------------------------------------ */

static int run_server(const opts_t *o)
{
    /* as NetZlink.Stress's server child: the parent's Ctrl+C must not stop the echo mid-drain */
    const char *child = getenv("NETZLINK_STRESS_SERVER_CHILD");
    if (child && !strcmp(child, "1"))
        signal(SIGINT, SIG_IGN);
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
    int rc = ec_echo_serve(l, watch_stdin ? 0 : -1, o->sndbuf, o->rcvbuf, &g_stop);
    close(l);
    return rc;
}

/* ---- client ------------------------------------------------------------ */

typedef struct client {
    const opts_t *o;
    int ep, ccu, inflight, sample_rate, verify, s0, s1;
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
    uint64_t *samples;
    size_t nsamples, samples_cap;
    int drain_timeout, interrupted;
    const char *drain_wait; /* the wait that ran out: settle, drain or echo */
    int64_t outstanding;    /* packets out when it ran out */
    uint64_t throughput_ns; /* what throughput divides by */
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
    close(k->fd);
    k->state = C_CLOSED;
    k->out.len = 0;
    c->disconnected++;
    if (by_peer)
        c->server_closed++;
    /* whatever it had outstanding (a partial echo included) stays counted as sent, never received */
    c->lost += k->inflight;
    c->inflight_now -= k->inflight;
    k->inflight = 0;
}

static void attempt_failed(client_t *c, conn_t *k, int err, int timed_out, uint64_t now)
{
    close(k->fd);
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
    k->fd = socket(c->addr->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (k->fd < 0) {
        k->state = C_CONNECTING;
        attempt_failed(c, k, errno, 0, now);
        return;
    }
    ec_tune(k->fd, c->o->sndbuf, c->o->rcvbuf);
    if (connect(k->fd, c->addr->ai_addr, c->addr->ai_addrlen) != 0 && errno != EINPROGRESS) {
        k->state = C_CONNECTING;
        attempt_failed(c, k, errno, 0, now);
        return;
    }
    k->state = C_CONNECTING;
    ec_ctl(c->ep, EPOLL_CTL_ADD, k->fd, EPOLLOUT, (uint64_t)idx);
}

/* starts attempts up to --connect-concurrency and times out the slow ones */
static void drive_connects(client_t *c, uint64_t now)
{
    uint64_t timeout = (uint64_t)(c->o->connect_timeout * NS);
    for (int i = 0; i < c->ccu; i++) {
        conn_t *k = &c->conns[i];
        if (k->state == C_CONNECTING && now - k->since_ns >= timeout)
            attempt_failed(c, k, 0, 1, now);
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
        int err = ec_write(c->ep, k->fd, (uint64_t)idx, &k->out, c->scratch, (size_t)n * c->plen);
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

static void record_sample(client_t *c, uint64_t ns)
{
    if (c->nsamples == c->samples_cap) {
        c->samples_cap = c->samples_cap ? c->samples_cap * 2 : 65536;
        c->samples = realloc(c->samples, c->samples_cap * sizeof *c->samples);
        if (!c->samples) {
            fprintf(stderr, "error: out of memory for %zu latency samples\n", c->samples_cap);
            exit(2);
        }
    }
    c->samples[c->nsamples++] = ns;
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
    if (p[4] == 1) {
        int64_t m = ++c->recv_measured;
        if (c->sample_rate > 0 && m % c->sample_rate == 0) {
            uint64_t at;
            memcpy(&at, p + 5, 8);
            record_sample(c, ec_now_ns() - at);
        }
    }
    return 1;
}

static void on_readable(client_t *c, int idx)
{
    static unsigned char buf[EC_RECV_BUF];
    conn_t *k = &c->conns[idx];
    ssize_t r = recv(k->fd, buf, sizeof buf, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN)) {
        disconnect(c, k, r == 0 ? 0 : errno, 1);
        return;
    }
    size_t at = 0, n = r > 0 ? (size_t)r : 0;
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
    top_up(c, idx);
}

static void on_event(client_t *c, int idx, uint32_t events, uint64_t now)
{
    conn_t *k = &c->conns[idx];
    if (k->state == C_CONNECTING) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
            ec_ctl(c->ep, EPOLL_CTL_DEL, k->fd, 0, 0);
            attempt_failed(c, k, err, 0, now);
            return;
        }
        k->state = C_CONNECTED;
        c->connecting--;
        c->resolved++;
        c->connected++;
        ec_ctl(c->ep, EPOLL_CTL_MOD, k->fd, EPOLLIN, (uint64_t)idx);
        top_up(c, idx);
        return;
    }
    if (k->state != C_CONNECTED)
        return;
    if ((events & EPOLLOUT) && k->out.len) {
        int err = ec_flush(c->ep, k->fd, (uint64_t)idx, &k->out);
        if (err) {
            disconnect(c, k, err, 1);
            return;
        }
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        on_readable(c, idx);
}

static void set_phase(client_t *c, enum phase p)
{
    c->phase = p;
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
    struct epoll_event evs[EVENTS];
    for (;;) {
        uint64_t now = ec_now_ns();
        if (c->phase == P_CONNECT)
            drive_connects(c, now);
        tick(c, t, now);
        if (done && done(c))
            return 1;
        if (g_stop) {
            c->interrupted = 1;
            return 0;
        }
        if (deadline && now >= deadline)
            return 0;
        int wait_ms = c->phase == P_CONNECT ? 5 : 50;
        int n = epoll_wait(c->ep, evs, EVENTS, wait_ms);
        now = ec_now_ns();
        for (int i = 0; i < n; i++)
            on_event(c, (int)evs[i].data.u64, evs[i].events, now);
    }
}

static int all_resolved(client_t *c) { return c->resolved == c->ccu; }
static int nothing_outstanding(client_t *c) { return c->inflight_now == 0; }
static int echo_back(client_t *c) { return c->recv_measured >= 1 || c->bad_echoes > 0; }

static uint64_t secs(double s) { return (uint64_t)(s * NS); }

/* a wait for outstanding packets ran out */
static void timed_out(client_t *c, const char *wait)
{
    c->drain_timeout = 1;
    c->drain_wait = wait;
    c->outstanding = c->inflight_now;
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
}

/* ---- the COUNTS line --------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* v with all but its 11 most significant bits cleared: the lowest value of its
 * HdrHistogram bucket at 3 significant digits (2048 sub-buckets) */
static uint64_t bucket_floor(uint64_t v)
{
    int bits = 0;
    for (uint64_t x = v; x; x >>= 1)
        bits++;
    int shift = bits > 11 ? bits - 11 : 0;
    return (v >> shift) << shift;
}

/* user + system CPU of this process, in microseconds */
static long long cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + (long long)ru.ru_stime.tv_sec * 1000000 +
           ru.ru_stime.tv_usec;
}

static void print_counts(client_t *c)
{
    const opts_t *o = c->o;
    printf("COUNTS version=1 scenario=%s ccu=%d size=%d inflight=%d warmup_s=%g measure_s=%g drain_timeout_s=%g "
           "latency_sample_rate=%d",
           o->scenario, c->ccu, o->size, c->inflight, o->warmup, o->measure, o->drain_timeout, c->sample_rate);
    printf(" connected=%lld connect_failed=%lld connect_timed_out=%lld disconnected=%lld sent_total=%lld "
           "received_total=%lld sent_measured=%lld received_measured=%lld in_flight=%lld gating_violations=%lld "
           "bad_echoes=%lld peer_closed=%lld protocol_errors=%lld lost=%lld",
           (long long)c->connected, (long long)c->connect_fail, (long long)c->connect_timeout,
           (long long)c->disconnected, (long long)c->sent_total, (long long)c->recv_total,
           (long long)c->sent_measured, (long long)c->recv_measured, (long long)c->inflight_now,
           (long long)c->gating, (long long)c->bad_echoes, (long long)c->server_closed,
           (long long)c->protocol_errors, (long long)c->lost);
    printf(" drain_timeout=%d drain_wait=%s outstanding=%lld interrupted=%d throughput_ns=%llu cpu_us=%lld "
           "peak_rss_kb=%ld",
           c->drain_timeout, c->drain_wait ? c->drain_wait : "none", (long long)c->outstanding, c->interrupted,
           (unsigned long long)c->throughput_ns, cpu_us(), peak_resident_kb());
    fputs(" errors_by_errno=", stdout);
    int first = 1;
    for (int e = 0; e <= MAX_ERRNO; e++) {
        if (c->errors[e]) {
            printf("%s%d:%lld", first ? "" : ";", e, (long long)c->errors[e]);
            first = 0;
        }
    }
    fputs(" latency_ns=", stdout);
    if (c->nsamples) /* no samples (s1): no array, and qsort's base must not be NULL */
        qsort(c->samples, c->nsamples, sizeof *c->samples, cmp_u64);
    for (size_t i = 0; i < c->nsamples;) {
        uint64_t v = bucket_floor(c->samples[i]);
        size_t n = 0;
        for (; i < c->nsamples && bucket_floor(c->samples[i]) == v; i++)
            n++;
        printf("%s%llu:%zu", i == n ? "" : ",", (unsigned long long)v, n);
    }
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

    c.ep = epoll_create1(0);
    c.conns = calloc((size_t)c.ccu, sizeof *c.conns);
    c.scratch = malloc(c.plen * (size_t)c.batch);
    unsigned char *rx = malloc(c.plen * (size_t)c.ccu);
    if (!c.conns || !c.scratch || !rx) {
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
    for (int i = 0; i < c.ccu; i++) {
        if (c.conns[i].state == C_CONNECTED || c.conns[i].state == C_CONNECTING)
            close(c.conns[i].fd);
        free(c.conns[i].out.q); /* kept across reconnects; allocated once a send had to queue */
    }
    freeaddrinfo(c.addr);
    close(c.ep);
    free(c.samples);
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
    int server = argc >= 2 && !strcmp(argv[1], "server");
    int client = argc >= 2 && !strcmp(argv[1], "client");
    if (!server && !client) {
        fprintf(stderr,
                "usage: limit_echo server [--bind-host H] [--port P] [--backlog N] [--sndbuf N] [--rcvbuf N] [--quiet]\n"
                "       limit_echo client [--scenario s0|s1|s2] [--host H] [--port P] [--ccu N] [--size N]\n"
                "                         [--inflight N] [--warmup S] [--measure S] [--drain-timeout S]\n"
                "                         [--connect-concurrency N] [--connect-timeout S] [--connect-retries N]\n"
                "                         [--connect-retry-delay-ms N] [--sndbuf N] [--rcvbuf N] [--send-batch N]\n"
                "                         [--latency-sample-rate N] [--timeseries-csv PATH] [--quiet]\n"
                "the client prints one COUNTS line of raw counts (see the top of limit_echo.c); NetZlink.Stress\n"
                "judges it: NetZlink.Stress counts [--metrics-csv F] [--summary-json F] [FILE]\n"
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
