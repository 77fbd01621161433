/* test_ctx.c - context options pass through, bad handles, term. */
#include "testutil.h"

#include <errno.h>

int main(void)
{
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    CHECK(zlink_ctx_get(ctx, ZLINK_IO_THREADS) == ZLINK_IO_THREADS_DFLT);
    CHECK(zlink_ctx_get(ctx, ZLINK_MAX_SOCKETS) == ZLINK_MAX_SOCKETS_DFLT);
    CHECK(zlink_ctx_get(ctx, ZLINK_MSG_T_SIZE) == 64);
    CHECK(zlink_ctx_get(ctx, ZLINK_SOCKET_LIMIT) > 0);
    CHECK(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 1) == 0);
    CHECK(zlink_ctx_get(ctx, ZLINK_IO_THREADS) == 1);
    CHECK(zlink_ctx_set(ctx, ZLINK_MAX_SOCKETS, 2000) == 0);
    CHECK(zlink_ctx_get(ctx, ZLINK_MAX_SOCKETS) == 2000);
    CHECK(zlink_ctx_set(ctx, ZLINK_MAX_MSGSZ, 1 << 20) == 0);
    CHECK(zlink_ctx_get(ctx, ZLINK_MAX_MSGSZ) == 1 << 20);
    CHECK_ERR(zlink_ctx_set(ctx, 9999, 1), EINVAL);
    CHECK_ERR(zlink_ctx_get(ctx, 9999), EINVAL);

    /* socket types zlink does not have */
    int bad[] = {3, 4, 7, 8, 12, 13, 14, 15, 16, 17, 18, 19, 20, -1, 999};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_NULL_ERR(zlink_socket(ctx, bad[i]), EINVAL);

    /* a socket handle is not a context and vice versa */
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(s);
    CHECK_ERR(zlink_ctx_get(s, ZLINK_IO_THREADS), EFAULT);
    CHECK_ERR(zlink_bind(ctx, "inproc://x"), ENOTSOCK);
    CHECK(zlink_close(s) == 0);
    CHECK_ERR(zlink_close(s), ENOTSOCK); /* double close */
    CHECK_ERR(zlink_bind(s, "inproc://x"), ENOTSOCK);

    void *st = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(st);
    int type = -1;
    size_t len = sizeof type;
    CHECK(zlink_getsockopt(st, ZLINK_TYPE, &type, &len) == 0 && type == ZLINK_STREAM);
    CHECK(zlink_close(st) == 0);
    CHECK_ERR(zlink_close(st), ENOTSOCK);

    CHECK(zlink_ctx_term(ctx) == 0);
    CHECK_ERR(zlink_ctx_term(ctx), EFAULT);
    CHECK_NULL_ERR(zlink_socket(ctx, ZLINK_PAIR), EFAULT);
    CHECK_ERR(zlink_ctx_term(NULL), EFAULT);

    /* shutdown then sockets fail with ETERM, term still works */
    ctx = zlink_ctx_new();
    CHECK(ctx);
    CHECK(zlink_ctx_shutdown(ctx) == 0);
    CHECK_NULL_ERR(zlink_socket(ctx, ZLINK_STREAM), ETERM);
    CHECK_NULL_ERR(zlink_socket(ctx, ZLINK_DEALER), ETERM);
    CHECK(zlink_ctx_term(ctx) == 0);

    /* zlink_close on a context terminates it */
    ctx = zlink_ctx_new();
    CHECK(ctx);
    CHECK(zlink_close(ctx) == 0);
    puts("ok");
    return 0;
}
