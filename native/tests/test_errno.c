/* test_errno.c - error numbering, strerror, version and zlink_has. */
#include "testutil.h"

#include <errno.h>

int main(void)
{
    CHECK(ZLINK_HAUSNUMERO == 156384712);
    CHECK(EFSM == ZLINK_HAUSNUMERO + 51);
    CHECK(ENOCOMPATPROTO == ZLINK_HAUSNUMERO + 52);
    CHECK(ETERM == ZLINK_HAUSNUMERO + 53);
    CHECK(EMTHREAD == ZLINK_HAUSNUMERO + 54);
    /* platform values on Linux */
    CHECK(EHOSTUNREACH == 113 && ENOTSUP == 95 && EPROTONOSUPPORT == 93);

    CHECK(strstr(zlink_strerror(ETERM), "terminated") != NULL);
    CHECK(strlen(zlink_strerror(EFSM)) > 0);
    CHECK(strcmp(zlink_strerror(EINVAL), strerror(EINVAL)) == 0);

    int ma = -1, mi = -1, pa = -1;
    zlink_version(&ma, &mi, &pa);
    /* the zlink release implemented, not this library's own version */
    CHECK(ma == ZLINK_VERSION_MAJOR && mi == ZLINK_VERSION_MINOR && pa == ZLINK_VERSION_PATCH);
    CHECK(ma == 1 && mi == 3 && ZLINK_VERSION == 10300);
    zlink_version(NULL, NULL, NULL);
    CHECK(zlink_has("netzlink") == 1);

    CHECK(zlink_has("tcp") == 1);
    CHECK(zlink_has("ipc") == 1);
    CHECK(zlink_has("inproc") == 1);
    /* tls: whether this build has OpenSSL (test_tls_* check it works) */
    CHECK(zlink_has("tls") == 0 || zlink_has("tls") == 1);
    /* ws and wss: together, whether this build has OpenSSL (test_ws_* check
     * they work) */
    CHECK(zlink_has("ws") == zlink_has("wss") && zlink_has("ws") <= 1);
    CHECK(zlink_has("ws") == 0 || zlink_has("tls") == 1);
    const char *no[] = {"curve", "gssapi", "norm",
                        "pgm", "epgm", "vmci", "draft", "bogus", ""};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK(zlink_has(no[i]) == 0);
    CHECK(zlink_has(NULL) == 0);

    /* the error is per thread and survives unrelated successful calls */
    CHECK_ERR(zlink_close(NULL), ENOTSOCK);
    CHECK(zlink_has("tcp") == 1);
    CHECK(zlink_errno() == ENOTSOCK);
    puts("ok");
    return 0;
}
