/* test_libzmq_build.c - what the libzmq inside libzlink.so was built with,
 * seen through the zlink ABI (libzmq's option numbers pass through for the
 * libzmq socket types): data over tcp with the NULL mechanism, the only one
 * (ZMP, the wire protocol of these sockets, has no security mechanism, and
 * zlink 1.3 has no PLAIN or CURVE options: PLAIN's, CURVE's and ZAP_DOMAIN
 * are refused with EINVAL and the mechanism stays NULL); and, for the
 * bundled libzmq (scripts/libzmq.sh; ZLINK_BUNDLED_LIBZMQ), that GSSAPI,
 * PGM, EPGM, NORM, VMCI and libzmq's own WebSocket (ZMTP over ws; ws:// and wss://
 * are NetZlink's, ZMP over its own transport) are not compiled in and that no
 * /dev/urandom descriptor is held while a context lives (libzmq's
 * randomness comes from getrandom()). */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

/* libzmq 4.3 option numbers that zlink.h does not name */
enum {
    O_PLAIN_SERVER = 44,
    O_PLAIN_USERNAME = 45,
    O_PLAIN_PASSWORD = 46,
    O_CURVE_SERVER = 47,
    O_CURVE_PUBLICKEY = 48,
    O_CURVE_SECRETKEY = 49,
    O_CURVE_SERVERKEY = 50,
    O_ZAP_DOMAIN = 55,
    O_MECHANISM = 43,
    O_GSSAPI_SERVER = 62,
};
enum { MECH_NULL = 0 };

/* the key pairs of libzmq's zmq_curve(7) example (Z85, 40 characters) */
static const char server_public[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char server_secret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char client_public[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char client_secret[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

static void set_int(void *s, int opt, int v)
{
    CHECK(zlink_setsockopt(s, opt, &v, sizeof v) == 0);
}

static int mechanism(void *s)
{
    int v = -1;
    size_t len = sizeof v;
    CHECK(zlink_getsockopt(s, O_MECHANISM, &v, &len) == 0);
    return v;
}

/* the security mechanisms' options are refused; the mechanism stays NULL */
static void no_mechanisms(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(s);
    int one = 1;
    CHECK_ERR(zlink_setsockopt(s, O_PLAIN_SERVER, &one, sizeof one), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_PLAIN_USERNAME, "admin", 5), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_PLAIN_PASSWORD, "secret", 6), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_CURVE_SERVER, &one, sizeof one), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_CURVE_PUBLICKEY, client_public, 40), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_CURVE_SECRETKEY, client_secret, 40), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_CURVE_SERVERKEY, server_public, 40), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, O_ZAP_DOMAIN, "global", 6), EINVAL);
    char key[41];
    size_t len = sizeof key;
    CHECK_ERR(zlink_getsockopt(s, O_CURVE_SERVERKEY, key, &len), EINVAL);
    CHECK(mechanism(s) == MECH_NULL);
    (void)server_secret;
    CHECK(zlink_close(s) == 0);
}

/* one message each way over tcp PAIR */
static void round_trip(void *ctx)
{
    void *server = zlink_socket(ctx, ZLINK_PAIR), *client = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(server && client);
    CHECK(mechanism(server) == MECH_NULL && mechanism(client) == MECH_NULL);
    set_int(server, ZLINK_RCVTIMEO, 10000);
    set_int(client, ZLINK_RCVTIMEO, 10000);
    char ep[256];
    tu_bind_tcp(server, ep, sizeof ep);
    CHECK(zlink_connect(client, ep) == 0);
    char buf[32];
    CHECK(zlink_send(client, "over the mechanism", 18, 0) == 18);
    CHECK(zlink_recv(server, buf, sizeof buf, 0) == 18 && memcmp(buf, "over the mechanism", 18) == 0);
    CHECK(zlink_send(server, "and back", 8, 0) == 8);
    CHECK(zlink_recv(client, buf, sizeof buf, 0) == 8 && memcmp(buf, "and back", 8) == 0);
    CHECK(zlink_close(client) == 0 && zlink_close(server) == 0);
}

#ifdef ZLINK_BUNDLED_LIBZMQ
/* descriptors of this process open on /dev/urandom */
static int urandom_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strcmp(target, "/dev/urandom") == 0 || strcmp(target, "/dev/random") == 0;
        }
    }
    closedir(d);
    return n;
}

static void not_compiled_in(void *ctx)
{
    void *pub = zlink_socket(ctx, ZLINK_PUB), *sub = zlink_socket(ctx, ZLINK_SUB);
    CHECK(pub && sub);
    const char *endpoints[] = {"pgm://127.0.0.1;239.192.1.1:5555",
                               "epgm://127.0.0.1;239.192.1.1:5555",
                               "norm://127.0.0.1:5555",
                               "vmci://1:5555"};
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++) {
        CHECK_ERR(zlink_bind(pub, endpoints[i]), EPROTONOSUPPORT);
        CHECK_ERR(zlink_connect(sub, endpoints[i]), EPROTONOSUPPORT);
    }
    int one = 1;
    CHECK_ERR(zlink_setsockopt(pub, O_GSSAPI_SERVER, &one, sizeof one), EINVAL);
    CHECK(zlink_close(sub) == 0 && zlink_close(pub) == 0);
}
#endif

int main(void)
{
#ifdef ZLINK_BUNDLED_LIBZMQ
    int before = urandom_fds();
#endif
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    round_trip(ctx);
    no_mechanisms(ctx);
#ifdef ZLINK_BUNDLED_LIBZMQ
    CHECK(urandom_fds() == before);
    not_compiled_in(ctx);
#endif
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
