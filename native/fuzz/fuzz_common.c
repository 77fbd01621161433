/*
 * fuzz_common.c - helpers of the fuzz targets: the per-process context, a
 * STREAM listener the sandbox lets the harness connect to, plain TCP peers
 * and waiting for a connection's 0x01 / 0x00 notification.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void fuzz_fail(const char *file, int line, const char *what)
{
    int e = errno; /* the C library's, for the targets' own socket calls */
    fprintf(stderr, "%s:%d: FUZZ_ASSERT failed: %s (errno %d: %s; zlink_errno %d: %s)\n",
            file, line, what, e, strerror(e), zlink_errno(), zlink_strerror(zlink_errno()));
    abort();
}

void *fuzz_ctx(void)
{
    static void *ctx;
    if (!ctx) {
        ctx = zlink_ctx_new();
        FUZZ_ASSERT(ctx);
    }
    return ctx;
}

void *fuzz_socket(int type)
{
    void *s = zlink_socket(fuzz_ctx(), type);
    for (int i = 0; !s && zlink_errno() == EMFILE && i < 1000; i++) {
        usleep(1000);
        s = zlink_socket(fuzz_ctx(), type);
    }
    FUZZ_ASSERT(s);
    return s;
}

void *fuzz_stream_listener(uint16_t *port)
{
    return fuzz_stream_bind("tcp://127.0.0.1:*", port);
}

void *fuzz_stream_bind(const char *endpoint, uint16_t *port)
{
    void *s = zlink_socket(fuzz_ctx(), ZLINK_STREAM);
    FUZZ_ASSERT(s);
    int zero = 0, raw = ZLINK_STREAM_FRAMING_RAW;
    FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_LINGER, &zero, sizeof zero) == 0);
    FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_STREAM_FRAMING, &raw, sizeof raw) == 0);
    FUZZ_ASSERT(zlink_bind(s, endpoint) == 0);
    char ep[256];
    size_t len = sizeof ep;
    FUZZ_ASSERT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len) == 0);
    const char *colon = strrchr(ep, ':'); /* atoi stops at a ws path */
    FUZZ_ASSERT(colon);
    *port = (uint16_t)atoi(colon + 1);
    FUZZ_ASSERT(*port != 0);
    fuzz_allow_port(*port);
    return s;
}

int fuzz_tcp_connect(uint16_t port)
{
    return fuzz_tcp_connect_rcvbuf(port, 0);
}

int fuzz_tcp_connect_rcvbuf(uint16_t port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_ASSERT(fd >= 0);
    if (rcvbuf > 0)
        FUZZ_ASSERT(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) == 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    /* A target that connects once per input (a few thousand a second) ends
     * each connection itself first, and every one leaves a TIME_WAIT for a
     * minute: from one source address the ephemeral ports run out in under
     * a minute (connect fails, or a 4-tuple still remembered is reused).
     * Each connection therefore comes from the next of 250 loopback source
     * addresses (127.0.0.2 to 127.0.0.251; all of 127/8 is local). */
    static unsigned next_source;
    struct sockaddr_in src;
    memset(&src, 0, sizeof src);
    src.sin_family = AF_INET;
    src.sin_addr.s_addr = htonl(0x7f000002u + next_source++ % 250u);
    /* the port is chosen at connect, knowing the whole 4-tuple */
    int one_ = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one_, sizeof one_);
    FUZZ_ASSERT(bind(fd, (struct sockaddr *)&src, sizeof src) == 0);
    FUZZ_ASSERT(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

long long fuzz_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Next notification or payload; -1 when nothing came within the wait. */
static int recv_one(void *s, uint32_t *id, unsigned char *buf, size_t cap)
{
    unsigned char idb[4];
    if (zlink_recv(s, idb, sizeof idb, 0) != 4)
        return -1;
    *id = tu_be32(idb);
    int n = zlink_recv(s, buf, cap, 0);
    FUZZ_ASSERT(n >= 0);
    return n;
}

static uint32_t wait_event(void *s, uint8_t byte, int match_id, uint32_t want)
{
    int t = 100;
    FUZZ_ASSERT(zlink_setsockopt(s, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    static unsigned char buf[65536];
    long long deadline = fuzz_now_ms() + 10000;
    for (;;) {
        uint32_t id;
        int n = recv_one(s, &id, buf, sizeof buf);
        int ev = -1;
        size_t l = sizeof ev;
        if (n >= 0)
            FUZZ_ASSERT(zlink_getsockopt(s, ZLINK_STREAM_EVENT, &ev, &l) == 0);
        if (ev == byte && (!match_id || id == want))
            return id;
        if (n < 0)
            FUZZ_ASSERT(zlink_errno() == EAGAIN);
        if (fuzz_now_ms() > deadline) {
            fprintf(stderr, "fuzz: notification 0x%02x never came\n", byte);
            abort();
        }
    }
}

uint32_t fuzz_stream_wait_event(void *s, uint8_t byte)
{
    return wait_event(s, byte, 0, 0);
}

void fuzz_stream_wait_closed(void *s, uint32_t id)
{
    wait_event(s, 0x00, 1, id);
}

/* Pipes are not counted: neither this library nor libzmq makes any on
 * Linux (they use eventfds), while the sanitizer runtime starts its
 * symbolizer behind two pipes the first time a leak check (libFuzzer runs
 * an input again under LSan when it allocated more than it freed) has
 * stacks to print, which made every later input look like a leak. */
int fuzz_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    FUZZ_ASSERT(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[300], target[64];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k > 0) {
            target[k] = '\0';
            if (strncmp(target, "pipe:", 5) == 0)
                continue;
        }
        n++;
    }
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

int fuzz_epoll_watches(int epfd)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
    FILE *f = fopen(path, "r");
    FUZZ_ASSERT(f);
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strncmp(line, "tfd:", 4) == 0;
    fclose(f);
    return n;
}

void fuzz_dump_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        fprintf(stderr, "  fd %s -> %s\n", e->d_name, target);
        if (strcmp(target, "anon_inode:[eventpoll]") == 0) {
            /* which descriptors this epoll set watches ("tfd: N" lines) */
            snprintf(path, sizeof path, "/proc/self/fdinfo/%s", e->d_name);
            FILE *f = fopen(path, "r");
            char line[256];
            while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "tfd:", 4) == 0)
                    fprintf(stderr, "      watches %s", line);
            if (f)
                fclose(f);
        }
    }
    closedir(d);
    /* the sockets' addresses and states, to match by inode */
    const char *tables[] = {"/proc/self/net/tcp", "/proc/self/net/tcp6"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(tables[i], "r");
        if (!f)
            continue;
        char line[512];
        while (fgets(line, sizeof line, f))
            fprintf(stderr, "  %s", line);
        fclose(f);
    }
}
