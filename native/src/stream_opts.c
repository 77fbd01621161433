/*
 * stream_opts.c - the options of a STREAM socket, described once: one row
 * per option id (type, get/set access, where the value lives in
 * zl_stream_opts_t, the range a set must fall in), read by both
 * zlink_setsockopt and zlink_getsockopt. An id without a row, or used in a
 * direction its row does not allow, is EINVAL.
 */
#include "stream.h"
#include "ws_frame.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>

enum { ZO_INT = 1, ZO_INT64, ZO_ROUTING_ID, ZO_STRING };
enum { ZO_GET = 1, ZO_SET = 2, ZO_RW = ZO_GET | ZO_SET };

typedef struct zl_optdesc {
    uint8_t type;
    uint8_t access;
    uint16_t offset;  /* of the value in zl_stream_opts_t */
    int64_t min, max; /* a set outside this is EINVAL (ZO_INT, ZO_INT64);
                         ZO_STRING: max is the field's size */
    uint8_t tls;      /* only in a build with TLS (zlink_has("tls")) */
    /* read-only values of the socket's state rather than of a field */
    int (*read)(zl_stream_t *s, int *out);
} zl_optdesc_t;

static int read_rcvmore(zl_stream_t *s, int *out)
{
    *out = s->rx_state != ZRX_NONE;
    return 0;
}

static int read_fd(zl_stream_t *s, int *out)
{
    *out = s->loop.epfd;
    return 0;
}

static int read_events(zl_stream_t *s, int *out)
{
    int r = zl_stream_readiness(s, ZLINK_POLLIN | ZLINK_POLLOUT);
    *out = r;
    return r < 0 ? -1 : 0;
}

#define OFS(field) offsetof(zl_stream_opts_t, field)
#define OPT_INT(id, field, lo, hi) [id] = {ZO_INT, ZO_RW, OFS(field), lo, hi, 0, NULL}
#define OPT_STATE(id, fn) [id] = {ZO_INT, ZO_GET, 0, 0, 0, 0, fn}
/* TLS options: strings are set with or without their terminating NUL (an
 * empty one clears the value); read back with it */
#define OPT_TLS_INT(id, field) [id] = {ZO_INT, ZO_RW, OFS(field), 0, 1, 1, NULL}
#define OPT_TLS_STR(id, field, acc) [id] = {ZO_STRING, acc, OFS(field), 0, ZL_TLS_STR, 1, NULL}

static const zl_optdesc_t opt_table[] = {
    OPT_INT(ZLINK_SNDHWM, sndhwm, 0, INT_MAX),
    /* accepted for compatibility: input waits in the kernel, whose buffers
     * are the receive-side limit (and at most a packet per connection in
     * its own buffer) */
    OPT_INT(ZLINK_RCVHWM, rcvhwm, 0, INT_MAX),
    OPT_INT(ZLINK_SNDBUF, sndbuf, -1, INT_MAX),
    OPT_INT(ZLINK_RCVBUF, rcvbuf, -1, INT_MAX),
    OPT_INT(ZLINK_BACKLOG, backlog, 0, INT_MAX),
    OPT_INT(ZLINK_LINGER, linger, -1, INT_MAX),
    OPT_INT(ZLINK_RCVTIMEO, rcvtimeo, -1, INT_MAX),
    OPT_INT(ZLINK_SNDTIMEO, sndtimeo, -1, INT_MAX),
    OPT_INT(ZLINK_RECONNECT_IVL, reconnect_ivl, -1, INT_MAX),
    OPT_INT(ZLINK_RECONNECT_IVL_MAX, reconnect_ivl_max, 0, INT_MAX),
    OPT_INT(ZLINK_CONNECT_TIMEOUT, connect_timeout, 0, INT_MAX),
    OPT_INT(ZLINK_TCP_KEEPALIVE, ka, -1, 1),
    OPT_INT(ZLINK_TCP_KEEPALIVE_CNT, ka_cnt, -1, INT_MAX),
    OPT_INT(ZLINK_TCP_KEEPALIVE_IDLE, ka_idle, -1, INT_MAX),
    OPT_INT(ZLINK_TCP_KEEPALIVE_INTVL, ka_intvl, -1, INT_MAX),
    OPT_INT(ZLINK_IPV6, ipv6, 0, 1),
    OPT_INT(ZLINK_TOS, tos, 0, 255),
    OPT_INT(ZLINK_TCP_MAXRT, tcp_maxrt, 0, INT_MAX),
    /* always on for STREAM: EHOSTUNREACH */
    OPT_INT(ZLINK_ROUTER_MANDATORY, router_mandatory, 0, 1),
    /* no pipes to hold back: nothing to do */
    OPT_INT(ZLINK_IMMEDIATE, immediate, 0, 1),
    /* bounds a tls:// handshake (ms, 0: none); raw TCP has none */
    OPT_INT(ZLINK_HANDSHAKE_IVL, handshake_ivl, 0, INT_MAX),
    /* LENGTH, BATCH: a longer body received drops its connection (EMSGSIZE);
     * -1: no limit */
    [ZLINK_MAXMSGSIZE] = {ZO_INT64, ZO_RW, OFS(maxmsgsize), -1, INT64_MAX, 0, NULL},
    [ZLINK_CONNECT_ROUTING_ID] = {ZO_ROUTING_ID, ZO_SET, OFS(connect_rid), 0, 0, 0, NULL},
    [ZLINK_TYPE] = {ZO_INT, ZO_GET, OFS(type), 0, 0, 0, NULL},
    [ZLINK_LAST_ENDPOINT] = {ZO_STRING, ZO_GET, OFS(last_endpoint), 0, 0, 0, NULL},
    /* tls:// (stream_tls.c); they apply to the binds and connects made
     * after they are set */
    OPT_TLS_STR(ZLINK_TLS_CERT, tls_cert, ZO_RW),
    OPT_TLS_STR(ZLINK_TLS_KEY, tls_key, ZO_RW),
    OPT_TLS_STR(ZLINK_TLS_CA, tls_ca, ZO_RW),
    OPT_TLS_INT(ZLINK_TLS_VERIFY, tls_verify),
    OPT_TLS_INT(ZLINK_TLS_REQUIRE_CLIENT_CERT, tls_require_client_cert),
    OPT_TLS_STR(ZLINK_TLS_HOSTNAME, tls_hostname, ZO_RW),
    OPT_TLS_INT(ZLINK_TLS_TRUST_SYSTEM, tls_trust_system),
    /* a secret: write-only */
    OPT_TLS_STR(ZLINK_TLS_PASSWORD, tls_password, ZO_SET),
    OPT_STATE(ZLINK_RCVMORE, read_rcvmore),
    OPT_STATE(ZLINK_FD, read_fd),
    OPT_STATE(ZLINK_EVENTS, read_events),
};

/* the size of a value on the caller's side (ZO_STRING: its own length) */
static const size_t type_size[] = {
    [ZO_INT] = sizeof(int),
    [ZO_INT64] = sizeof(int64_t),
    [ZO_ROUTING_ID] = 4,
    [ZO_STRING] = 0,
};

/* defaults follow zlink 1.3's (HWM 300000) and libzmq's */
static const zl_stream_opts_t opt_defaults = {
    .type = ZLINK_STREAM,
    .sndhwm = ZL_DEFAULT_HWM,
    .rcvhwm = ZL_DEFAULT_HWM,
    .sndbuf = -1,
    .rcvbuf = -1,
    .backlog = 100,
    .linger = -1,
    .rcvtimeo = -1,
    .sndtimeo = -1,
    .reconnect_ivl = 100,
    .reconnect_ivl_max = 0,
    .connect_timeout = 0,
    .ka = -1,
    .ka_cnt = -1,
    .ka_idle = -1,
    .ka_intvl = -1,
    .handshake_ivl = 30000,
    .tls_verify = 1,
    .maxmsgsize = -1,
    .rcvbudget = -1,
    .framing = ZLINK_STREAM_FRAMING_LENGTH,
};

void zl_stream_opts_init(zl_stream_opts_t *o)
{
    *o = opt_defaults;
    /* a version 4 UUID, as the libzmq socket types get (zsock.c) */
    size_t got = 0;
    while (got < 16) {
        ssize_t n = getrandom(o->routing_id + got, 16 - got, 0);
        if (n > 0)
            got += (size_t)n;
        else if (errno != EINTR)
            break;
    }
    if (got < 16) /* no entropy source: still unique within the process */
        for (size_t i = 0; i < 16; i++)
            o->routing_id[i] = (unsigned char)((uintptr_t)o >> (8 * (i % sizeof(uintptr_t))) ^ i);
    o->routing_id[6] = (unsigned char)((o->routing_id[6] & 0x0f) | 0x40);
    o->routing_id[8] = (unsigned char)((o->routing_id[8] & 0x3f) | 0x80);
    o->routing_id_len = 16;
}

/* ROUTING_ID: 1..255 bytes, read back as set */
static int rid_set(zl_stream_t *s, const void *v, size_t len)
{
    if (!v || len == 0 || len > sizeof s->opts.routing_id)
        return zl_fail(EINVAL);
    memcpy(s->opts.routing_id, v, len);
    s->opts.routing_id_len = (uint8_t)len;
    return 0;
}

static int rid_get(zl_stream_t *s, void *v, size_t *len)
{
    if (!v || !len || *len < s->opts.routing_id_len)
        return zl_fail(EINVAL);
    memcpy(v, s->opts.routing_id, s->opts.routing_id_len);
    *len = s->opts.routing_id_len;
    return 0;
}

static const zl_optdesc_t *find_opt(int opt, int access)
{
    if (opt < 0 || (size_t)opt >= sizeof opt_table / sizeof opt_table[0] ||
        !(opt_table[opt].access & access) ||
        (opt_table[opt].tls && !zl_tls_available()))
        return NULL;
    return &opt_table[opt];
}

/* NetZlink's own STREAM options (ids above the table) */

/* whether s has a listener or a connection (in any state) */
static int in_use(const zl_stream_t *s)
{
    for (uint32_t i = 0; i < s->nlst; i++)
        if (s->lst[i].fd >= 0)
            return 1;
    return s->nslots != s->nfree;
}

static int ext_set(zl_stream_t *s, int opt, const void *v, size_t len)
{
    int x;
    if (opt == ZLINK_STREAM_RCVBUDGET) {
        /* the receive buffers of all connections together (bytes of
         * packets not whole yet): a connection whose buffer would take
         * them past it is dropped (ENOBUFS); -1: no limit */
        int64_t b;
        if (!v || len != sizeof b)
            return zl_fail(EINVAL);
        memcpy(&b, v, sizeof b);
        if (b < -1)
            return zl_fail(EINVAL);
        s->opts.rcvbudget = b;
        return 0;
    }
    if (opt == ZLINK_STREAM_DROP) {
        unsigned code = 1008;
        if (!v || (len != 4 && len != 6))
            return zl_fail(EINVAL);
        const unsigned char *b = v;
        if (len == 6) {
            code = (unsigned)b[4] << 8 | b[5];
            if (!zl_ws_close_code_ok(code))
                return zl_fail(EINVAL);
        }
        zl_conn_t *c = zl_conn_by_id(s, zl_get_be32(b));
        if (!c || (c->state != ZC_ACTIVE && c->state != ZC_CLOSING))
            return zl_fail(EHOSTUNREACH);
        if (c->state == ZC_ACTIVE)
            zl_conn_drop(s, c, code);
        return 0;
    }
    /* EVENT, EVENT_ERRNO and the TLS results are read-only */
    if (opt != ZLINK_STREAM_FRAMING || !v || len != sizeof x)
        return zl_fail(EINVAL);
    memcpy(&x, v, sizeof x);
    if (x < ZLINK_STREAM_FRAMING_LENGTH || x > ZLINK_STREAM_FRAMING_BATCH ||
        in_use(s))
        return zl_fail(EINVAL);
    s->opts.framing = x;
    return 0;
}

static int ext_get(zl_stream_t *s, int opt, void *v, size_t *len)
{
    int x;
    if (opt == ZLINK_TLS_LAST_ERROR) {
        /* a string: room for it and its NUL, like LAST_ENDPOINT */
        size_t n = strlen(s->tls_last_error) + 1;
        if (!v || !len || *len < n)
            return zl_fail(EINVAL);
        memcpy(v, s->tls_last_error, n);
        *len = n;
        return 0;
    }
    if (opt == ZLINK_STREAM_DROP)
        return zl_fail(EINVAL); /* write-only */
    if (opt == ZLINK_STREAM_RCVBUDGET) {
        if (!v || !len || *len != sizeof s->opts.rcvbudget)
            return zl_fail(EINVAL);
        memcpy(v, &s->opts.rcvbudget, sizeof s->opts.rcvbudget);
        return 0;
    }
    if (!v || !len || *len != sizeof x)
        return zl_fail(EINVAL);
    switch (opt) {
    case ZLINK_STREAM_FRAMING:
        x = s->opts.framing;
        break;
    case ZLINK_STREAM_EVENT:
        x = s->last_event;
        break;
    case ZLINK_TLS_LAST_VERIFY_RESULT:
        x = s->tls_last_verify;
        break;
    default: /* ZLINK_STREAM_EVENT_ERRNO */
        x = s->last_errno;
        break;
    }
    memcpy(v, &x, sizeof x);
    return 0;
}

static int is_ext(int opt)
{
    if (opt == ZLINK_TLS_LAST_ERROR || opt == ZLINK_TLS_LAST_VERIFY_RESULT)
        return zl_tls_available(); /* else EINVAL like the TLS options */
    return (opt >= ZLINK_STREAM_FRAMING && opt <= ZLINK_STREAM_EVENT_ERRNO) ||
           opt == ZLINK_STREAM_RCVBUDGET || opt == ZLINK_STREAM_DROP;
}

int zl_stream_setsockopt(zl_handle_t *h, int opt, const void *v, size_t len)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (is_ext(opt))
        return ext_set(s, opt, v, len);
    if (opt == ZLINK_ROUTING_ID)
        return rid_set(s, v, len);
    const zl_optdesc_t *d = find_opt(opt, ZO_SET);
    if (d && d->type == ZO_STRING) {
        const char *str = v;
        if (len && !v)
            return zl_fail(EINVAL);
        if (len && str[len - 1] == '\0')
            len--;
        if (len >= (size_t)d->max || (len && memchr(str, '\0', len)))
            return zl_fail(EINVAL);
        char *dst = (char *)&s->opts + d->offset;
        if (len)
            memcpy(dst, str, len);
        dst[len] = '\0';
        return 0;
    }
    if (!d || !v || len != type_size[d->type])
        return zl_fail(EINVAL);
    char *field = (char *)&s->opts + d->offset;
    if (d->type == ZO_ROUTING_ID) {
        zl_rid_opt_t *rid = (zl_rid_opt_t *)(void *)field;
        rid->id = zl_get_be32(v);
        rid->set = 1;
        return 0;
    }
    int64_t x;
    if (d->type == ZO_INT) {
        int i;
        memcpy(&i, v, sizeof i);
        x = i;
    } else {
        memcpy(&x, v, sizeof x);
    }
    if (x < d->min || x > d->max)
        return zl_fail(EINVAL);
    if (d->type == ZO_INT)
        *(int *)(void *)field = (int)x;
    else
        *(int64_t *)(void *)field = x;
    return 0;
}

int zl_stream_getsockopt(zl_handle_t *h, int opt, void *v, size_t *len)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (is_ext(opt))
        return ext_get(s, opt, v, len);
    if (opt == ZLINK_ROUTING_ID)
        return rid_get(s, v, len);
    const zl_optdesc_t *d = find_opt(opt, ZO_GET);
    if (!d)
        return zl_fail(EINVAL);
    const char *field = (const char *)&s->opts + d->offset;
    int state;
    if (d->read) {
        if (d->read(s, &state) != 0)
            return -1;
        field = (const char *)&state;
    }
    size_t n = d->type == ZO_STRING ? strlen(field) + 1 : type_size[d->type];
    /* numbers: exactly their size (as zlink); strings: room for them */
    if (!v || !len || (d->type == ZO_STRING ? *len < n : *len != n))
        return zl_fail(EINVAL);
    memcpy(v, field, n);
    *len = n;
    return 0;
}
