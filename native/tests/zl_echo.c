/* zl_echo - a STREAM socket on one endpoint, driven from the command line,
 * for the interop and conformance scripts (tests/interop/, scripts/
 * ws-conformance.py) that put peers nobody here wrote (python websockets,
 * node ws, openssl s_client/s_server) or raw-socket scripts against it.
 *
 *   zl_echo serve   ENDPOINT [options]   bind; prints "LISTEN <endpoint>"
 *   zl_echo connect ENDPOINT [options]   connect (no retry)
 *
 * By default every payload received is sent back as it came (an echo).
 * With --send N the program instead sends N bytes (a fixed pattern) once
 * the connection is up, waits for N bytes back, prints "ECHO OK N" (or
 * "ECHO BAD ...") and then, with --then close, closes the connection
 * ([id] + empty payload) or, with --then wait (default), waits for the peer
 * to close it.
 *
 * With --close-after N, the echo closes the connection once it echoed N
 * bytes (counted over the connections, reset at each close).
 *
 * Options: --framing raw|length (raw), --cert F, --key F, --ca F,
 * --require-client-cert, --no-verify, --hostname H, --linger MS,
 * --seconds S (give up after S seconds, 20), --once (exit after the first
 * connection ends or fails its handshake).
 *
 * Lines printed (flushed at once): "UP <id>", "DOWN <id> <errno>",
 * "HSFAIL <AUTH|PROTOCOL|NO_DETAIL> <errno> verify=<n> reason=<text>"
 * (ZLINK_TLS_LAST_VERIFY_RESULT and ZLINK_TLS_LAST_ERROR right after the
 * monitor event), "CLOSE_FAILED <errno>", "TIMEOUT". Exit status 0, or 1
 * when --send did not get its echo, or 2 for a usage error. SIGTERM ends it
 * like --seconds does.
 */
#include <zlink.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SIGTERM and SIGINT end the loop: everything is closed and freed as at a
 * normal exit (a sanitizer build checks for leaks then) */
static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
    (void)sig;
    stop_now = 1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_str(void *s, int opt, const char *v)
{
    if (v && zlink_setsockopt(s, opt, v, strlen(v)) != 0) {
        fprintf(stderr, "zl_echo: option %d: %s\n", opt,
                zlink_strerror(zlink_errno()));
        exit(2);
    }
}

static void set_int(void *s, int opt, int v)
{
    if (zlink_setsockopt(s, opt, &v, sizeof v) != 0) {
        fprintf(stderr, "zl_echo: option %d: %s\n", opt,
                zlink_strerror(zlink_errno()));
        exit(2);
    }
}

static int get_int(void *s, int opt)
{
    int v = 0;
    size_t l = sizeof v;
    zlink_getsockopt(s, opt, &v, &l);
    return v;
}

static unsigned char pattern(size_t i)
{
    return (unsigned char)((i * 7 + 3) ^ (i >> 8));
}

/* [id][payload] to the connection id */
static int send_to(void *s, uint32_t id, const void *p, size_t n)
{
    unsigned char idb[4] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16),
                            (unsigned char)(id >> 8), (unsigned char)id};
    if (zlink_send(s, idb, 4, ZLINK_SNDMORE) != 4)
        return -1;
    return zlink_send(s, p, n, 0);
}

/* prints what the monitor has; 1 if a handshake failed */
static int print_monitor(void *s, void *mon)
{
    int failed = 0;
    zlink_monitor_event_t ev;
    while (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0) {
        const char *kind = NULL;
        if (ev.event == ZLINK_EVENT_HANDSHAKE_FAILED_AUTH)
            kind = "AUTH";
        else if (ev.event == ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL)
            kind = "PROTOCOL";
        else if (ev.event == ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
            kind = "NO_DETAIL";
        if (kind) {
            failed = 1;
            char why[256] = "";
            size_t wl = sizeof why;
            if (zlink_getsockopt(s, ZLINK_TLS_LAST_ERROR, why, &wl) != 0)
                strcpy(why, "-");
            printf("HSFAIL %s %llu verify=%d reason=%s\n", kind,
                   (unsigned long long)ev.value,
                   get_int(s, ZLINK_TLS_LAST_VERIFY_RESULT), why);
        } else if (ev.event == ZLINK_EVENT_CLOSE_FAILED) {
            printf("CLOSE_FAILED %llu\n", (unsigned long long)ev.value);
        }
        fflush(stdout);
    }
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "serve") && strcmp(argv[1], "connect"))) {
        fprintf(stderr, "usage: zl_echo serve|connect ENDPOINT [options]\n");
        return 2;
    }
    int serve = strcmp(argv[1], "serve") == 0;
    const char *ep = argv[2];
    const char *cert = NULL, *key = NULL, *ca = NULL, *host = NULL;
    const char *then = "wait";
    int framing = ZLINK_STREAM_FRAMING_RAW, verify = 1, require = 0, once = 0;
    long long linger = -1, seconds = 20;
    long long send_n = -1, close_after = -1, echoed_bytes = 0;
    /* the options with a value: text, or a whole number */
    const struct {
        const char *name;
        const char **text;
        long long *number;
    } valued[] = {
        {"--cert", &cert, NULL},        {"--key", &key, NULL},
        {"--ca", &ca, NULL},            {"--hostname", &host, NULL},
        {"--then", &then, NULL},        {"--send", NULL, &send_n},
        {"--close-after", NULL, &close_after},
        {"--linger", NULL, &linger},    {"--seconds", NULL, &seconds},
    };
    /* the options without one: each sets its flag to a value */
    const struct {
        const char *name;
        int *flag;
        int value;
    } flags[] = {
        {"--require-client-cert", &require, 1},
        {"--no-verify", &verify, 0},
        {"--once", &once, 1},
    };
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int known = 0;
        if (!strcmp(a, "--framing") && v) {
            framing = !strcmp(v, "length") ? ZLINK_STREAM_FRAMING_LENGTH
                                           : ZLINK_STREAM_FRAMING_RAW;
            known = 1, i++;
        }
        for (size_t k = 0; !known && v && k < sizeof valued / sizeof *valued; k++) {
            if (!strcmp(a, valued[k].name)) {
                if (valued[k].text)
                    *valued[k].text = v;
                else
                    *valued[k].number = atoll(v);
                known = 1, i++;
            }
        }
        for (size_t k = 0; !known && k < sizeof flags / sizeof *flags; k++) {
            if (!strcmp(a, flags[k].name))
                *flags[k].flag = flags[k].value, known = 1;
        }
        if (!known) {
            fprintf(stderr, "zl_echo: unknown option %s\n", a);
            return 2;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    set_int(s, ZLINK_STREAM_FRAMING, framing);
    set_int(s, ZLINK_LINGER, (int)linger);
    set_int(s, ZLINK_RECONNECT_IVL, -1);
    set_str(s, ZLINK_TLS_CERT, cert);
    set_str(s, ZLINK_TLS_KEY, key);
    set_str(s, ZLINK_TLS_CA, ca);
    set_str(s, ZLINK_TLS_HOSTNAME, host);
    if (!verify)
        set_int(s, ZLINK_TLS_VERIFY, 0);
    if (require)
        set_int(s, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
    void *mon = zlink_socket_monitor_open(s, ZLINK_EVENT_ALL);
    int rc = serve ? zlink_bind(s, ep) : zlink_connect(s, ep);
    if (rc != 0) {
        fprintf(stderr, "zl_echo: %s %s: %s\n", argv[1], ep,
                zlink_strerror(zlink_errno()));
        return 2;
    }
    if (serve) {
        char last[512];
        size_t ll = sizeof last;
        zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, last, &ll);
        printf("LISTEN %s\n", last);
        fflush(stdout);
    }
    size_t cap = 16 << 20;
    unsigned char *buf = malloc(cap), *got = NULL;
    size_t ngot = 0;
    int status = 0, done = 0, echoed = 0;
    long long end = now_ms() + seconds * 1000;
    if (send_n >= 0) {
        got = malloc((size_t)send_n + 1);
        status = 1; /* until the echo came back */
    }
    while (!done && !stop_now) {
        if (print_monitor(s, mon) && once)
            break;
        if (now_ms() >= end) {
            printf("TIMEOUT\n");
            fflush(stdout);
            if (send_n >= 0 && !echoed)
                status = 1;
            break;
        }
        zlink_pollitem_t it = {s, 0, ZLINK_POLLIN, 0};
        zlink_poll(&it, 1, 50);
        for (;;) {
            unsigned char idb[4];
            int n = zlink_recv(s, idb, 4, ZLINK_DONTWAIT);
            if (n < 0)
                break;
            uint32_t id = (uint32_t)idb[0] << 24 | (uint32_t)idb[1] << 16 |
                          (uint32_t)idb[2] << 8 | idb[3];
            int r = zlink_recv(s, buf, cap, 0);
            if (r < 0)
                break;
            int event = get_int(s, ZLINK_STREAM_EVENT);
            if (event == 1) {
                printf("UP %u\n", id);
                fflush(stdout);
                if (send_n >= 0) {
                    unsigned char *out = malloc((size_t)send_n + 1);
                    for (long long i = 0; i < send_n; i++)
                        out[i] = pattern((size_t)i);
                    if (send_n > 0 && send_to(s, id, out, (size_t)send_n) < 0)
                        printf("SEND FAILED %d\n", zlink_errno());
                    free(out);
                    if (send_n == 0) {
                        echoed = 1;
                        status = 0;
                    }
                }
            } else if (event == 0) {
                printf("DOWN %u %d\n", id, get_int(s, ZLINK_STREAM_EVENT_ERRNO));
                fflush(stdout);
                print_monitor(s, mon);
                if (once || !serve)
                    done = 1;
            } else if (send_n >= 0) {
                size_t k = (size_t)r;
                if (ngot + k > (size_t)send_n) {
                    printf("ECHO BAD too many bytes (%zu)\n", ngot + k);
                    fflush(stdout);
                    k = (size_t)send_n - ngot;
                }
                memcpy(got + ngot, buf, k);
                ngot += k;
                if (ngot == (size_t)send_n && !echoed) {
                    size_t i = 0;
                    while (i < ngot && got[i] == pattern(i))
                        i++;
                    echoed = 1;
                    status = i == ngot ? 0 : 1;
                    if (i == ngot)
                        printf("ECHO OK %zu\n", ngot);
                    else
                        printf("ECHO BAD byte %zu differs\n", i);
                    fflush(stdout);
                    if (!strcmp(then, "close"))
                        send_to(s, id, "", 0);
                }
            } else {
                send_to(s, id, buf, (size_t)r); /* the echo */
                echoed_bytes += r;
                if (close_after >= 0 && echoed_bytes >= close_after) {
                    send_to(s, id, "", 0); /* a local close */
                    echoed_bytes = 0;
                }
            }
        }
    }
    print_monitor(s, mon);
    free(buf);
    free(got);
    zlink_close(mon);
    set_int(s, ZLINK_LINGER, 0); /* a peer that stopped reading cannot hold it */
    zlink_close(s);
    zlink_ctx_term(ctx);
    return status;
}
