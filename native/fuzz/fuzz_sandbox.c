/*
 * fuzz_sandbox.c - fences the network system calls of a fuzz target (see
 * fuzz_common.h for why). Defined in the executable and exported
 * (-rdynamic), these bind/connect/getaddrinfo take precedence over libc's
 * for the library's code, libzmq's and the harness's alike; they forward
 * to libc's through dlsym(RTLD_NEXT) once the call is made safe.
 */
#include "fuzz_common.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_ALLOWED 64

static _Atomic uint16_t allowed[MAX_ALLOWED];
static atomic_int nallowed;

void fuzz_allow_port(uint16_t port)
{
    int i = atomic_fetch_add(&nallowed, 1);
    if (i >= MAX_ALLOWED) {
        fprintf(stderr, "fuzz_sandbox: more than %d allowed ports\n", MAX_ALLOWED);
        abort();
    }
    atomic_store(&allowed[i], port);
}

static int port_allowed(uint16_t port)
{
    int n = atomic_load(&nallowed);
    for (int i = 0; i < n && i < MAX_ALLOWED; i++)
        if (atomic_load(&allowed[i]) == port)
            return 1;
    return 0;
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "fuzz_sandbox: no libc %s\n", name);
        abort();
    }
    return f;
}

/* The ports this process was given by the rewritten binds, and the
 * descriptor each went to: a bind asking for one of them while that
 * descriptor still holds it fails with EADDRINUSE, as it would without the
 * rewrite (else two listeners could be bound at "the same" endpoint). */
#define MAX_HELD 4096
static struct {
    int fd;
    uint16_t port;
} held[MAX_HELD];
static int nheld;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static uint16_t bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return 0;
}

/* 1 if port is still held by the descriptor it was given to. Forgets the
 * entries whose descriptor was closed or reused since. Caller locks. */
static int port_held(uint16_t port)
{
    int found = 0;
    for (int i = 0; i < nheld;) {
        if (bound_port(held[i].fd) != held[i].port) {
            held[i] = held[--nheld];
            continue;
        }
        found |= held[i].port == port;
        i++;
    }
    return found;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    static int (*real_bind)(int, const struct sockaddr *, socklen_t);
    if (!real_bind)
        real_bind = (int (*)(int, const struct sockaddr *, socklen_t))real("bind");
    struct sockaddr_storage a;
    uint16_t want;
    if (addr && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        memcpy(&a, addr, sizeof(struct sockaddr_in));
        want = ntohs(((struct sockaddr_in *)&a)->sin_port);
        ((struct sockaddr_in *)&a)->sin_port = 0;
    } else if (addr && addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        memcpy(&a, addr, sizeof(struct sockaddr_in6));
        want = ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
        ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    } else if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) {
        errno = EINVAL;
        return -1;
    } else {
        /* AF_UNIX and the rest: the targets never hand libzmq an ipc://
         * path, so nothing of the harness binds in the file system */
        errno = EACCES;
        return -1;
    }
    pthread_mutex_lock(&held_lock);
    int rc;
    if (want && port_held(want)) {
        errno = EADDRINUSE;
        rc = -1;
    } else {
        rc = real_bind(fd, (struct sockaddr *)&a, len);
        uint16_t got = rc == 0 ? bound_port(fd) : 0;
        if (got) {
            if (nheld < MAX_HELD) {
                held[nheld].fd = fd;
                held[nheld].port = got;
                nheld++;
            }
        }
    }
    int e = errno;
    pthread_mutex_unlock(&held_lock);
    errno = e;
    return rc;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    static int (*real_connect)(int, const struct sockaddr *, socklen_t);
    if (!real_connect)
        real_connect = (int (*)(int, const struct sockaddr *, socklen_t))real("connect");
    int ok = 0;
    if (addr && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, addr, sizeof a);
        ok = ntohl(a.sin_addr.s_addr) == INADDR_LOOPBACK && port_allowed(ntohs(a.sin_port));
    } else if (addr && addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        memcpy(&a, addr, sizeof a);
        ok = IN6_IS_ADDR_LOOPBACK(&a.sin6_addr) && port_allowed(ntohs(a.sin6_port));
    }
    if (!ok) {
        errno = ECONNREFUSED;
        return -1;
    }
    return real_connect(fd, addr, len);
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static int (*real_gai)(const char *, const char *, const struct addrinfo *,
                           struct addrinfo **);
    if (!real_gai)
        real_gai = (int (*)(const char *, const char *, const struct addrinfo *,
                            struct addrinfo **))real("getaddrinfo");
    unsigned char buf[sizeof(struct in6_addr)];
    if (node && strcmp(node, "localhost") != 0 && inet_pton(AF_INET, node, buf) != 1 &&
        inet_pton(AF_INET6, node, buf) != 1)
        return EAI_NONAME; /* no DNS query leaves the process */
    return real_gai(node, service, hints, res);
}
