/* stream_compare.c - the same STREAM server code against whichever
 * libzlink.so the dynamic linker finds (LD_LIBRARY_PATH): NetZlink's or a
 * real zlink 1.3's. A raw TCP client feeds it byte sequences (framed
 * packets, a packet's last byte late, a one-byte body, a zero length, a
 * length over MAXMSGSIZE, a FIN after a body) and reads what the server
 * sends (`xyz`, a one-byte 0x00); the program prints what each side got,
 * with routing ids numbered in order of appearance, so the two libraries'
 * outputs can be compared line by line. Uses only calls and options both
 * libraries have (the server binds; it never connects). Not a ctest test:
 * CI has no real zlink.
 *
 *   LD_LIBRARY_PATH=native/build native/build/tests/stream_compare
 *   LD_LIBRARY_PATH=/path/to/zlink/lib native/build/tests/stream_compare
 */
#include "zlink.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void *srv;
static uint16_t port;
static uint32_t ids[64];
static int nids;

static void die(const char *what)
{
    fprintf(stderr, "stream_compare: %s: %s\n", what, zlink_strerror(zlink_errno()));
    exit(1);
}

static int conn_no(uint32_t id)
{
    for (int i = 0; i < nids; i++)
        if (ids[i] == id)
            return i + 1;
    if (nids < 64)
        ids[nids++] = id;
    return nids;
}

static void hex(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n && i < 24; i++)
        printf(" %02x", b[i]);
    if (n > 24)
        printf(" ...");
}

/* Prints every message the server receives within ms. */
static void server_drain(int ms)
{
    int t = 50;
    zlink_setsockopt(srv, ZLINK_RCVTIMEO, &t, sizeof t);
    long long left = ms;
    while (left > 0) {
        unsigned char idb[4], buf[65536];
        int n = zlink_recv(srv, idb, sizeof idb, 0);
        if (n < 0) {
            if (zlink_errno() != EAGAIN)
                die("recv id");
            left -= t;
            continue;
        }
        uint32_t id = (uint32_t)idb[0] << 24 | (uint32_t)idb[1] << 16 |
                      (uint32_t)idb[2] << 8 | idb[3];
        n = zlink_recv(srv, buf, sizeof buf, 0);
        if (n < 0)
            die("recv payload");
        printf("  server got: conn#%d payload of %d byte%s:", conn_no(id), n,
               n == 1 ? "" : "s");
        hex(buf, (size_t)n);
        if (n > 1 && n < 40) {
            printf("  \"");
            for (int i = 0; i < n; i++)
                putchar(buf[i] >= 32 && buf[i] < 127 ? buf[i] : '.');
            printf("\"");
        }
        printf("\n");
    }
}

static int client(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {0, 300000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void put(int fd, const char *label, const void *b, size_t n)
{
    printf("  client writes%s:", label);
    hex(b, n);
    printf("\n");
    if (send(fd, b, n, MSG_NOSIGNAL) != (ssize_t)n) {
        perror("send");
        exit(1);
    }
}

/* What the client reads within 300 ms, and whether the server closed. */
static void client_read(int fd)
{
    unsigned char b[256];
    size_t n = 0;
    int end = 0;
    for (;;) {
        ssize_t k = recv(fd, b + n, sizeof b - n, 0);
        if (k > 0) {
            n += (size_t)k;
            continue;
        }
        end = k == 0;
        break;
    }
    printf("  client got %zu byte%s:", n, n == 1 ? "" : "s");
    hex(b, n);
    printf("%s\n", end ? "  then the end of the stream" : "");
}

static uint32_t last_id(void)
{
    return nids ? ids[nids - 1] : 0;
}

static void send_to(uint32_t id, const void *b, size_t n)
{
    unsigned char idb[4] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16),
                            (unsigned char)(id >> 8), (unsigned char)id};
    if (zlink_send(srv, idb, 4, ZLINK_SNDMORE) != 4 || zlink_send(srv, b, n, 0) != (int)n)
        die("send");
}

int main(void)
{
    Dl_info di;
    if (dladdr((void *)zlink_socket, &di) && di.dli_fname)
        printf("library: %s\n", di.dli_fname);
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    printf("zlink_version: %d.%d.%d\n", major, minor, patch);
    void *ctx = zlink_ctx_new();
    srv = zlink_socket(ctx, ZLINK_STREAM);
    if (!srv)
        die("socket");
    int zero = 0;
    zlink_setsockopt(srv, ZLINK_LINGER, &zero, sizeof zero);
    if (zlink_bind(srv, "tcp://127.0.0.1:*") != 0)
        die("bind");
    char ep[256];
    size_t len = sizeof ep;
    if (zlink_getsockopt(srv, ZLINK_LAST_ENDPOINT, ep, &len) != 0)
        die("LAST_ENDPOINT");
    port = (uint16_t)atoi(strrchr(ep, ':') + 1);
    int hwm = 0;
    len = sizeof hwm;
    zlink_getsockopt(srv, ZLINK_SNDHWM, &hwm, &len);
    printf("SNDHWM default: %d\n", hwm);

    printf("1. 00 00 00 05 hello in one write\n");
    int fd = client();
    server_drain(300);
    put(fd, "", "\0\0\0\5hello", 9);
    server_drain(300);

    printf("2. 00 00 00 02 61, then 62 0.3 s later\n");
    put(fd, "", "\0\0\0\2a", 5);
    server_drain(300);
    put(fd, "", "b", 1);
    server_drain(300);

    printf("3. a one-byte body 00 00 00 01 07, and two packets in one write\n");
    put(fd, "", "\0\0\0\1\7", 5);
    put(fd, "", "\0\0\0\2hi\0\0\0\3you", 13);
    server_drain(300);

    printf("4. the server sends xyz\n");
    uint32_t first = last_id();
    send_to(first, "xyz", 3);
    client_read(fd);

    printf("5. the server sends one byte 00\n");
    send_to(first, "\0", 1);
    client_read(fd);
    server_drain(300);
    close(fd);

    printf("6. a zero length 00 00 00 00\n");
    fd = client();
    server_drain(300);
    put(fd, "", "\0\0\0\0", 4);
    server_drain(300);
    client_read(fd);
    close(fd);

    printf("7. MAXMSGSIZE 10: 00 00 00 0a + 10 bytes, then 00 00 00 0b\n");
    int64_t mx = 10;
    if (zlink_setsockopt(srv, ZLINK_MAXMSGSIZE, &mx, sizeof mx) != 0)
        die("MAXMSGSIZE");
    fd = client();
    server_drain(300);
    put(fd, "", "\0\0\0\x0a" "0123456789", 14);
    server_drain(300);
    put(fd, "", "\0\0\0\x0b", 4);
    server_drain(300);
    client_read(fd);
    close(fd);
    mx = -1;
    zlink_setsockopt(srv, ZLINK_MAXMSGSIZE, &mx, sizeof mx);

    printf("8. a body, then the client's FIN\n");
    fd = client();
    server_drain(300);
    put(fd, "", "\0\0\0\3end", 7);
    shutdown(fd, SHUT_WR);
    server_drain(300);
    close(fd);

    zlink_close(srv);
    zlink_ctx_term(ctx);
    return 0;
}
