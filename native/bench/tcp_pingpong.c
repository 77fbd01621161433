/*
 * tcp_pingpong.c - the floor under every one-way latency figure on this machine: two threads of
 * one process ping-pong a message over a loopback TCP connection with plain send()/recv(), no
 * library at all. Two ways of waiting for the reply:
 *
 *   block  recv() sleeps until data arrives (what a thread blocked in libzmq, or in poll(),
 *          pays: the kernel has to wake it up)
 *   spin   recv(MSG_DONTWAIT) in a loop (the thread never sleeps; it burns its core instead)
 *
 *   tcp_pingpong [block|spin|both] [size] [round_trips]
 *
 * Prints one line per mode and round (three rounds), the one-way latency being half the mean
 * round trip. Exit 0, or 2 when the connection could not be made.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int g_size = 64;
static int g_round_trips = 20000;
static int g_spin;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* reads exactly n bytes, sleeping in recv() or spinning on MSG_DONTWAIT */
static int read_all(int fd, char *buf, int n)
{
    int got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, (size_t)(n - got), g_spin ? MSG_DONTWAIT : 0);
        if (r > 0) {
            got += (int)r;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            continue;
        } else {
            return -1;
        }
    }
    return 0;
}

static int write_all(int fd, const char *buf, int n)
{
    int put = 0;
    while (put < n) {
        ssize_t r = send(fd, buf + put, (size_t)(n - put), MSG_NOSIGNAL);
        if (r > 0)
            put += (int)r;
        else if (r < 0 && errno == EINTR)
            continue;
        else if (r < 0 && errno == EAGAIN)
            continue;
        else
            return -1;
    }
    return 0;
}

static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void *echo_side(void *arg)
{
    int fd = *(int *)arg;
    char *buf = calloc(1, (size_t)g_size);
    for (int i = 0; buf && i < g_round_trips; i++)
        if (read_all(fd, buf, g_size) != 0 || write_all(fd, buf, g_size) != 0)
            break;
    free(buf);
    return NULL;
}

/* a connected loopback pair: out[0] the pinging end, out[1] the echoing end */
static int connected_pair(int out[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&sa, &sl) != 0)
        return -1;
    out[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (out[0] < 0 || connect(out[0], (struct sockaddr *)&sa, sizeof sa) != 0)
        return -1;
    out[1] = accept(l, NULL, NULL);
    close(l);
    if (out[1] < 0)
        return -1;
    no_delay(out[0]);
    no_delay(out[1]);
    return 0;
}

static int run(const char *mode, int round)
{
    int fds[2];
    if (connected_pair(fds) != 0) {
        perror("tcp_pingpong: loopback connection");
        return 2;
    }
    pthread_t echo;
    pthread_create(&echo, NULL, echo_side, &fds[1]);
    char *buf = calloc(1, (size_t)g_size);
    double t0 = now_s();
    int done = 0;
    for (; buf && done < g_round_trips; done++)
        if (write_all(fds[0], buf, g_size) != 0 || read_all(fds[0], buf, g_size) != 0)
            break;
    double t1 = now_s();
    pthread_join(echo, NULL);
    free(buf);
    close(fds[0]);
    close(fds[1]);
    if (done < g_round_trips) {
        fprintf(stderr, "tcp_pingpong: the connection failed after %d round trips\n", done);
        return 2;
    }
    printf("round %d tcp %dB %-5s one-way: %.1f us\n", round, g_size, mode,
           (t1 - t0) / done / 2 * 1e6);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "both";
    if (argc > 2)
        g_size = atoi(argv[2]);
    if (argc > 3)
        g_round_trips = atoi(argv[3]);
    int both = strcmp(which, "both") == 0;
    if ((!both && strcmp(which, "block") != 0 && strcmp(which, "spin") != 0) || g_size < 1 ||
        g_round_trips < 1) {
        fprintf(stderr, "usage: tcp_pingpong [block|spin|both] [size >= 1] [round_trips >= 1]\n");
        return 1;
    }
    for (int round = 1; round <= 3; round++) {
        if (both || strcmp(which, "block") == 0) {
            g_spin = 0;
            if (run("block", round) != 0)
                return 2;
        }
        if (both || strcmp(which, "spin") == 0) {
            g_spin = 1;
            if (run("spin", round) != 0)
                return 2;
        }
    }
    return 0;
}
