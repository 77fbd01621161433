/*
 * msg.c - zlink_msg_*: messages are libzmq messages (both are 64-byte opaque
 * structs), so most calls forward directly. Sending and receiving go to the
 * socket's kind: libzmq's zmq_msg_send/recv, or the STREAM engine, which
 * copies the bytes because it works on plain buffers (stream_proto.c).
 */
#include "zl_internal.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(zlink_msg_t) == sizeof(zmq_msg_t),
               "zlink_msg_t must match zmq_msg_t");
_Static_assert(_Alignof(zlink_msg_t) >= _Alignof(void *),
               "zlink_msg_t must be pointer aligned");

#define ZM(m) ((zmq_msg_t *)(void *)(m))
#define ZMC(m) ((const zmq_msg_t *)(const void *)(m))

/*
 * A STREAM id frame received with zlink_msg_recv must report more = 1, but
 * libzmq offers no public way to set a message's MORE flag. In libzmq 4.3
 * the flags byte sits at offset 43 of zmq_msg_t; that is checked once at
 * run time against zmq_msg_more() and the trick is skipped if the layout
 * differs (the id frame then reports more = 0; RCVMORE stays correct).
 */
#define ZL_MSG_FLAGS_OFFSET 43
static pthread_once_t more_once = PTHREAD_ONCE_INIT;
static int more_trick_ok;

static void probe_more_layout(void)
{
    zmq_msg_t m;
    zmq_msg_init_size(&m, 4);
    unsigned char *b = (unsigned char *)&m;
    if (zmq_msg_more(&m) == 0 && (b[ZL_MSG_FLAGS_OFFSET] & 1) == 0) {
        b[ZL_MSG_FLAGS_OFFSET] |= 1;
        if (zmq_msg_more(&m) == 1)
            more_trick_ok = 1;
        b[ZL_MSG_FLAGS_OFFSET] &= (unsigned char)~1u;
        if (zmq_msg_more(&m) != 0)
            more_trick_ok = 0;
    }
    zmq_msg_close(&m);
}

void zl_msg_mark_more(zmq_msg_t *m)
{
    pthread_once(&more_once, probe_more_layout);
    if (more_trick_ok)
        ((unsigned char *)m)[ZL_MSG_FLAGS_OFFSET] |= 1;
}

ZL_API int zlink_msg_init(zlink_msg_t *msg)
{
    return zmq_msg_init(ZM(msg)) == 0 ? 0 : zl_zfail();
}

ZL_API int zlink_msg_init_size(zlink_msg_t *msg, size_t size)
{
    return zmq_msg_init_size(ZM(msg), size) == 0 ? 0 : zl_zfail();
}

ZL_API int zlink_msg_init_data(zlink_msg_t *msg, void *data, size_t size,
                               zlink_free_fn *ffn, void *hint)
{
    return zmq_msg_init_data(ZM(msg), data, size, (zmq_free_fn *)ffn, hint) == 0
               ? 0
               : zl_zfail();
}

ZL_API int zlink_msg_send(zlink_msg_t *msg, void *socket, int flags)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->msg_send(h, ZM(msg), flags) : -1;
}

ZL_API int zlink_msg_recv(zlink_msg_t *msg, void *socket, int flags)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->msg_recv(h, ZM(msg), flags) : -1;
}

ZL_API int zlink_msg_close(zlink_msg_t *msg)
{
    return zmq_msg_close(ZM(msg)) == 0 ? 0 : zl_zfail();
}

ZL_API int zlink_msg_move(zlink_msg_t *dest, zlink_msg_t *src)
{
    return zmq_msg_move(ZM(dest), ZM(src)) == 0 ? 0 : zl_zfail();
}

ZL_API int zlink_msg_copy(zlink_msg_t *dest, zlink_msg_t *src)
{
    return zmq_msg_copy(ZM(dest), ZM(src)) == 0 ? 0 : zl_zfail();
}

ZL_API void *zlink_msg_data(zlink_msg_t *msg)
{
    return zmq_msg_data(ZM(msg));
}

ZL_API size_t zlink_msg_size(const zlink_msg_t *msg)
{
    return zmq_msg_size(ZMC(msg));
}

ZL_API int zlink_msg_more(const zlink_msg_t *msg)
{
    return zmq_msg_more(ZMC(msg));
}

ZL_API int zlink_msg_get(const zlink_msg_t *msg, int property)
{
    int rc = zmq_msg_get(ZMC(msg), property);
    return rc < 0 ? zl_zfail() : rc;
}

ZL_API int zlink_msg_set(zlink_msg_t *msg, int property, int optval)
{
    return zmq_msg_set(ZM(msg), property, optval) == 0 ? 0 : zl_zfail();
}

ZL_API const char *zlink_msg_gets(const zlink_msg_t *msg, const char *property)
{
    const char *v = zmq_msg_gets(ZMC(msg), property);
    if (!v)
        zl_zfail();
    return v;
}

ZL_API void zlink_msgv_close(zlink_msg_t *parts, size_t count)
{
    if (!parts)
        return;
    for (size_t i = 0; i < count; i++)
        zmq_msg_close(ZM(&parts[i]));
}
