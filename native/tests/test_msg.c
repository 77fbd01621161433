/* test_msg.c - message API: init/size/data/copy/move/close, init_data free
 * callback, msgv_close, and a message round trip over a PAIR. */
#include "testutil.h"

static int freed;
static void *freed_data;
static void *freed_hint;

static void free_fn(void *data, void *hint)
{
    freed++;
    freed_data = data;
    freed_hint = hint;
    free(data);
}

int main(void)
{
    CHECK(sizeof(zlink_msg_t) == 64);
    CHECK(_Alignof(zlink_msg_t) >= _Alignof(void *));
    CHECK(sizeof(zlink_routing_id_t) == 256);
    CHECK(sizeof(zlink_monitor_event_t) == 784);

    zlink_msg_t m, m2, m3;
    CHECK(zlink_msg_init(&m) == 0);
    CHECK(zlink_msg_size(&m) == 0);
    CHECK(zlink_msg_more(&m) == 0);
    CHECK(zlink_msg_close(&m) == 0);

    CHECK(zlink_msg_init_size(&m, 100) == 0);
    CHECK(zlink_msg_size(&m) == 100);
    memset(zlink_msg_data(&m), 'a', 100);
    CHECK(zlink_msg_init(&m2) == 0);
    CHECK(zlink_msg_copy(&m2, &m) == 0);
    CHECK(zlink_msg_size(&m2) == 100);
    CHECK(memcmp(zlink_msg_data(&m2), zlink_msg_data(&m), 100) == 0);
    CHECK(zlink_msg_init(&m3) == 0);
    CHECK(zlink_msg_move(&m3, &m) == 0);
    CHECK(zlink_msg_size(&m) == 0);
    CHECK(zlink_msg_size(&m3) == 100);
    CHECK(zlink_msg_get(&m3, ZLINK_MORE) == 0);
    CHECK(zlink_msg_close(&m) == 0);
    CHECK(zlink_msg_close(&m2) == 0);
    CHECK(zlink_msg_close(&m3) == 0);

    /* zero copy: the free function runs exactly once, after the last
     * reference (copies share the buffer) is gone */
    char *data = malloc(5000);
    memset(data, 'z', 5000);
    int hint = 42;
    CHECK(zlink_msg_init_data(&m, data, 5000, free_fn, &hint) == 0);
    CHECK(zlink_msg_data(&m) == data);
    CHECK(zlink_msg_init(&m2) == 0);
    CHECK(zlink_msg_copy(&m2, &m) == 0);
    CHECK(zlink_msg_get(&m, ZLINK_SHARED) == 1);
    CHECK(zlink_msg_close(&m) == 0);
    CHECK(freed == 0);
    CHECK(zlink_msg_close(&m2) == 0);
    CHECK(freed == 1 && freed_data == data && freed_hint == &hint);

    zlink_msg_t parts[3];
    for (int i = 0; i < 3; i++)
        CHECK(zlink_msg_init_size(&parts[i], 1000) == 0);
    zlink_msgv_close(parts, 3);

    /* over a PAIR: send takes ownership, recv fills, more flag */
    void *ctx = zlink_ctx_new();
    void *a = zlink_socket(ctx, ZLINK_PAIR), *b = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(zlink_bind(a, "inproc://msg") == 0);
    CHECK(zlink_connect(b, "inproc://msg") == 0);
    data = malloc(3);
    memcpy(data, "xyz", 3);
    freed = 0;
    CHECK(zlink_msg_init_data(&m, data, 3, free_fn, NULL) == 0);
    CHECK(zlink_msg_send(&m, a, ZLINK_SNDMORE) == 3);
    CHECK(zlink_msg_init_size(&m, 2) == 0);
    memcpy(zlink_msg_data(&m), "hi", 2);
    CHECK(zlink_msg_send(&m, a, 0) == 2);
    CHECK(zlink_msg_init(&m) == 0);
    CHECK(zlink_msg_recv(&m, b, 0) == 3);
    CHECK(zlink_msg_more(&m) == 1);
    CHECK(memcmp(zlink_msg_data(&m), "xyz", 3) == 0);
    CHECK(zlink_msg_recv(&m, b, 0) == 2);
    CHECK(zlink_msg_more(&m) == 0);
    CHECK(zlink_msg_close(&m) == 0);
    CHECK(zlink_msg_init(&m) == 0);
    CHECK_ERR(zlink_msg_recv(&m, b, ZLINK_DONTWAIT), EAGAIN);
    CHECK(zlink_msg_close(&m) == 0);
    CHECK_ERR(zlink_msg_send(&m, NULL, 0), ENOTSOCK);
    CHECK(zlink_close(a) == 0);
    CHECK(zlink_close(b) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    CHECK(freed == 1);
    puts("ok");
    return 0;
}
