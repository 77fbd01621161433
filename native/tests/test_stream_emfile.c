/* test_stream_emfile.c - running out of descriptors while accepting: the
 * listener steps out for ~100 ms instead of spinning, ACCEPT_FAILED(EMFILE)
 * is reported, and accepting resumes once descriptors are available. */
#include "testutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define N 20

static int highest_fd(void)
{
    int hi = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d)))
        if (atoi(e->d_name) > hi)
            hi = atoi(e->d_name);
    closedir(d);
    return hi;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int accept_some(void *srv, int ms)
{
    int n = 0;
    long long end = tu_now_ms() + ms;
    unsigned char buf[16];
    uint32_t id;
    while (tu_now_ms() < end) {
        zlink_pollitem_t it = {srv, 0, ZLINK_POLLIN, 0};
        CHECK(zlink_poll(&it, 1, 20) >= 0);
        int r;
        while ((r = tu_stream_recv(srv, &id, buf, sizeof buf, ZLINK_DONTWAIT)) >= 0)
            if (r == 1 && buf[0] == 1)
                n++;
    }
    return n;
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    void *mon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ACCEPT_FAILED);
    CHECK(mon);

    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)atoi(strrchr(ep, ':') + 1));
    int raw[N];
    for (int i = 0; i < N; i++) {
        raw[i] = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(connect(raw[i], (struct sockaddr *)&sa, sizeof sa) == 0);
    }

    struct rlimit saved, low;
    getrlimit(RLIMIT_NOFILE, &saved);
    low = saved;
    low.rlim_cur = (rlim_t)highest_fd() + 1 + 5;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    /* fill every hole below the limit, then free exactly five numbers */
    static int filler[100000];
    int nfill = 0;
    int fd;
    while ((fd = dup(0)) >= 0)
        filler[nfill++] = fd;
    CHECK(errno == EMFILE && nfill >= 5);
    for (int i = 0; i < 5; i++)
        close(filler[--nfill]);

    int accepted = accept_some(srv, 100);
    CHECK(accepted >= 1 && accepted < N);
    zlink_monitor_event_t ev;
    CHECK(zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0);
    CHECK(ev.event == ZLINK_EVENT_ACCEPT_FAILED && ev.value == EMFILE);

    /* no busy loop while the backlog cannot be drained */
    double c0 = cpu_s();
    accepted += accept_some(srv, 400);
    CHECK(cpu_s() - c0 < 0.15);
    CHECK(accepted < N);

    CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    while (nfill)
        close(filler[--nfill]);
    accepted += accept_some(srv, 500);
    CHECK(accepted == N);

    for (int i = 0; i < N; i++)
        close(raw[i]);
    CHECK(zlink_close(mon) == 0);
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
