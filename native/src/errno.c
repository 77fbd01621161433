/*
 * errno.c - the library's error reporting (a thread-local last error, so
 * that callers such as a .NET P/Invoke layer see the error of their own
 * last call regardless of what the C runtime's errno went through since).
 * Version and capability queries are in version.c.
 */
#include "zl_internal.h"

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
