/*
 * version.c - what this library is and offers: the zlink release it is
 * compatible with (zlink_version) and its capabilities (zlink_has), asked of
 * the parts that know (the TLS, WebSocket and io_uring files).
 */
#include "zl_internal.h"
#include "stream_loop.h"

#include <string.h>

int zl_tls_available(void); /* stream_tls.c */
int zl_ws_available(void);  /* stream_ws.c */

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
