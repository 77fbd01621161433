/*
 * epoll_common.c - see epoll_common.h.
 */
#include "epoll_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define EC_EVENTS 256
#define EC_LISTEN_TAG UINT64_MAX
#define EC_STOP_TAG (UINT64_MAX - 1)

uint64_t ec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

long ec_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

void ec_tune(int fd, int sndbuf, int rcvbuf)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
}

void ec_ctl(int ep, int op, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    if (epoll_ctl(ep, op, fd, &ev) != 0 && op != EPOLL_CTL_DEL) {
        fprintf(stderr, "epoll_ctl(op %d, fd %d) failed: %s\n", op, fd, strerror(errno));
        exit(2);
    }
}

int ec_write(int ep, int fd, uint64_t data, ec_outq_t *o, const void *buf, size_t len)
{
    if (!o->len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN)
                return errno;
            n = 0;
        }
        if ((size_t)n == len)
            return 0;
        buf = (const char *)buf + n;
        len -= (size_t)n;
        ec_ctl(ep, EPOLL_CTL_MOD, fd, EPOLLIN | EPOLLOUT, data);
    }
    if (o->len + len > o->cap) {
        size_t cap = (o->len + len) * 2;
        char *q = realloc(o->q, cap);
        if (!q) {
            fprintf(stderr, "out of memory queueing %zu bytes of output\n", o->len + len);
            exit(2);
        }
        o->q = q;
        o->cap = cap;
    }
    memcpy(o->q + o->len, buf, len);
    o->len += len;
    return 0;
}

int ec_flush(int ep, int fd, uint64_t data, ec_outq_t *o)
{
    ssize_t n = send(fd, o->q, o->len, MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN ? 0 : errno;
    memmove(o->q, o->q + n, o->len - (size_t)n);
    o->len -= (size_t)n;
    if (!o->len)
        ec_ctl(ep, EPOLL_CTL_MOD, fd, EPOLLIN, data);
    return 0;
}

int ec_listen(const char *host, int port, int backlog, int *bound)
{
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "cannot listen on %s:%d: %s\n", host, port, gai_strerror(rc));
        return -1;
    }
    int l = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (l < 0 || bind(l, res->ai_addr, res->ai_addrlen) != 0 || listen(l, backlog) != 0) {
        fprintf(stderr, "cannot listen on %s:%d: %s\n", host, port, strerror(errno));
        freeaddrinfo(res);
        if (l >= 0)
            close(l);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(l, (struct sockaddr *)&ss, &sl);
    *bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                            : ((struct sockaddr_in *)&ss)->sin_port);
    return l;
}

int ec_echo_serve(int listen_fd, int stop_fd, int sndbuf, int rcvbuf, volatile int *stop)
{
    int ep = epoll_create1(0);
    /* indexed by descriptor, so sized by the descriptor limit */
    size_t cap = (size_t)ec_raise_nofile();
    if (cap < 1024)
        cap = 1024;
    ec_outq_t *out = calloc(cap, sizeof *out);
    if (!out) {
        fprintf(stderr, "out of memory for %zu connection queues\n", cap);
        close(ep);
        return 2;
    }
    int status = 0;
    static char buf[EC_RECV_BUF];
    struct epoll_event evs[EC_EVENTS];
    ec_ctl(ep, EPOLL_CTL_ADD, listen_fd, EPOLLIN, EC_LISTEN_TAG);
    if (stop_fd >= 0)
        ec_ctl(ep, EPOLL_CTL_ADD, stop_fd, EPOLLIN, EC_STOP_TAG);
    while (!stop || !*stop) {
        int n = epoll_wait(ep, evs, EC_EVENTS, 200);
        if (n < 0 && errno != EINTR) {
            perror("epoll_wait");
            status = 2;
            goto done;
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64;
            if (tag == EC_STOP_TAG) {
                ssize_t r = read(stop_fd, buf, sizeof buf);
                if (r <= 0)
                    goto done;
                continue;
            }
            if (tag == EC_LISTEN_TAG) {
                int fd;
                while ((fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if ((size_t)fd >= cap) {
                        close(fd);
                        continue;
                    }
                    ec_tune(fd, sndbuf, rcvbuf);
                    out[fd].len = 0;
                    ec_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)fd);
                }
                continue;
            }
            int fd = (int)tag;
            ec_outq_t *o = &out[fd];
            int err = 0;
            if ((evs[i].events & EPOLLOUT) && o->len)
                err = ec_flush(ep, fd, tag, o);
            if (!err && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                ssize_t r = recv(fd, buf, sizeof buf, 0);
                if (r == 0 || (r < 0 && errno != EAGAIN))
                    err = r == 0 ? -1 : errno;
                else if (r > 0)
                    err = ec_write(ep, fd, tag, o, buf, (size_t)r);
            }
            if (err) {
                close(fd);
                o->len = 0;
            }
        }
    }
done:
    close(ep);
    for (size_t i = 0; i < cap; i++)
        free(out[i].q);
    free(out);
    return status;
}

void ec_print_result(const char *impl, int ccu, int inflight, int size, int seconds,
                     uint64_t measured)
{
    printf("RESULT impl=%s ccu=%d inflight=%d size=%d seconds=%d "
           "packets=%llu packets_per_s=%.0f\n",
           impl, ccu, inflight, size, seconds, (unsigned long long)measured,
           (double)measured / seconds);
}

int ec_echo_main(int argc, char **argv, int (*server)(int port),
                 int (*client)(const char *host, int port, int ccu, int inflight,
                               int size, int seconds))
{
    ec_raise_nofile();
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return server(atoi(argv[2]));
    if (argc == 8 && strcmp(argv[1], "client") == 0)
        return client(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
                      atoi(argv[6]), atoi(argv[7]));
    fprintf(stderr, "usage: %s server PORT\n"
                    "       %s client HOST PORT CCU INFLIGHT SIZE SECONDS\n",
            argv[0], argv[0]);
    return 2;
}

unsigned char *ec_packets(int size, int count)
{
    size_t psize = (size_t)size + 4;
    unsigned char *packets = malloc(psize * (size_t)count);
    if (!packets) {
        perror("malloc");
        exit(1);
    }
    for (int i = 0; i < count; i++) {
        unsigned char *p = packets + psize * (size_t)i;
        p[0] = (unsigned char)(size >> 24);
        p[1] = (unsigned char)(size >> 16);
        p[2] = (unsigned char)(size >> 8);
        p[3] = (unsigned char)size;
        memset(p + 4, 'x', (size_t)size);
    }
    return packets;
}
