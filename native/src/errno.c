/*
 * errno.c - the library's error reporting (a thread-local last error, so
 * that callers such as a .NET P/Invoke layer see the error of their own
 * last call regardless of what the C runtime's errno went through since),
 * plus version and capability queries.
 */
#include "zl_internal.h"
#include "stream_loop.h"

int zl_tls_available(void); /* stream_tls.c */
int zl_ws_available(void);  /* stream_ws.c */

#include <errno.h>
#include <string.h>

static __thread int zl_tls_errno;

void zl_set_errno(int e)
{
    zl_tls_errno = e;
    errno = e;
}

int zl_zfail(void)
{
    zl_set_errno(zmq_errno());
    return -1;
}

ZL_API int zlink_errno(void)
{
    return zl_tls_errno;
}

ZL_API const char *zlink_strerror(int errnum)
{
    /* libzmq knows both the platform codes and its own EFSM..EMTHREAD,
     * which share our numbering. */
    return zmq_strerror(errnum);
}

ZL_API void zlink_version(int *major, int *minor, int *patch)
{
    /* the zlink release this library is compatible with (ABI, wire and
     * behaviour); its own version is ZLINK_NATIVE_VERSION_* */
    if (major)
        *major = ZLINK_VERSION_MAJOR;
    if (minor)
        *minor = ZLINK_VERSION_MINOR;
    if (patch)
        *patch = ZLINK_VERSION_PATCH;
}

ZL_API int zlink_has(const char *capability)
{
    /* Only what this library really provides. libzmq may have been built
     * with curve, pgm and so on, but zlink does not offer them. */
    static const char *const yes[] = {"tcp", "ipc", "inproc", "netzlink"};
    if (!capability)
        return 0;
    if (strcmp(capability, "io_uring") == 0)
        return zl_uring_available(); /* built with it and allowed here */
    if (strcmp(capability, "tls") == 0)
        return zl_tls_available(); /* built with OpenSSL */
    if (strcmp(capability, "ws") == 0 || strcmp(capability, "wss") == 0)
        return zl_ws_available(); /* built with OpenSSL */
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcmp(capability, yes[i]) == 0)
            return 1;
    return 0;
}
