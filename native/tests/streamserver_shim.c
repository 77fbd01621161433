/*
 * streamserver_shim.c - libzlink_streamserver.so, a test-only stand-in for
 * a zlink build whose STREAM sockets are server-only (zlink 1.3): there,
 * zlink_connect on a STREAM socket fails at once with EOPNOTSUPP.
 *
 * The shim depends on libzlink.so and defines zlink_connect only. A process
 * that loads it (NETZLINK_NATIVE_LIBRARY=native/build/tests/libzlink_streamserver.so)
 * looks every symbol up through the shim's handle, so it gets this
 * zlink_connect and every other zlink_* from the real library behind it.
 * Connects on other socket types go through unchanged. Built next to the C
 * tests, never installed or packed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "zlink.h"

typedef int (*connect_fn)(void *socket, const char *endpoint);

static connect_fn real_connect(void)
{
    static connect_fn real;
    if (!real) {
        /* the next zlink_connect after this object's: libzlink.so's */
        real = (connect_fn)dlsym(RTLD_NEXT, "zlink_connect");
        if (!real) {
            fprintf(stderr, "streamserver_shim: no zlink_connect behind the shim: %s\n", dlerror());
            abort();
        }
    }
    return real;
}

int zlink_connect(void *socket, const char *endpoint)
{
    int type = -1;
    size_t size = sizeof type;
    if (zlink_getsockopt(socket, ZLINK_TYPE, &type, &size) != 0 ||
        type != ZLINK_STREAM)
        return real_connect()(socket, endpoint);

    /* The library's errno is thread-local with no setter. zlink_proxy
     * refuses a STREAM socket with ENOTSUP (95, Linux's EOPNOTSUPP) before
     * doing anything else, which leaves exactly the errno zlink 1.3 gives;
     * any other answer (ETERM on a shut-down context) is passed on as is. */
    if (zlink_proxy(socket, socket, NULL) == 0) {
        fprintf(stderr, "streamserver_shim: zlink_proxy accepted a STREAM socket\n");
        abort();
    }
    return -1;
}
