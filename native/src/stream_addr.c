/*
 * stream_addr.c - endpoint strings: parsing a STREAM socket's
 * "tcp://host:port" (or "tls://", "ws://host:port/path", "wss://...")
 * into a socket address, formatting addresses back into
 * that form for LAST_ENDPOINT, monitor events and peer info, and the port
 * check every socket kind applies to tcp:// endpoints (libzmq does not
 * range-check ports and would wrap 99999 to 34463).
 */
#include "stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

socklen_t zl_addr_len(const zl_sockaddr_t *a)
{
    return a->sa.sa_family == AF_INET6 ? (socklen_t)sizeof a->in6
                                       : (socklen_t)sizeof a->in4;
}

void zl_format_addr(const zl_sockaddr_t *a, char *buf, size_t n)
{
    char ip[INET6_ADDRSTRLEN];
    if (a->sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &a->in6.sin6_addr, ip, sizeof ip);
        snprintf(buf, n, "tcp://[%s]:%u", ip, ntohs(a->in6.sin6_port));
    } else if (a->sa.sa_family == AF_INET) {
        inet_ntop(AF_INET, &a->in4.sin_addr, ip, sizeof ip);
        snprintf(buf, n, "tcp://%s:%u", ip, ntohs(a->in4.sin_port));
    } else if (n) {
        buf[0] = '\0';
    }
}

void zl_format_addr_tls(const zl_sockaddr_t *a, int tls, char *buf, size_t n)
{
    zl_format_addr(a, buf, n);
    if (tls && n > 3 && buf[0] == 't')
        memcpy(buf, "tls", 3); /* "tcp" and "tls" have the same length */
}

static int parse_port(const char *p, int for_bind, unsigned *port)
{
    if (strcmp(p, "*") == 0) {
        if (!for_bind)
            return -1;
        *port = 0;
        return 0;
    }
    if (!*p || strlen(p) > 5)
        return -1;
    unsigned v = 0;
    for (const char *q = p; *q; q++) {
        if (*q < '0' || *q > '9')
            return -1;
        v = v * 10 + (unsigned)(*q - '0');
    }
    if (v > 65535 || (v == 0 && !for_bind))
        return -1;
    *port = v;
    return 0;
}

/* The port of the first n bytes of addr ("host:port"; the port follows the
 * last ':' that is not inside an IPv6 "[...]" literal): 0 valid for a bind
 * (for_bind) or a connect, 1 no port there, -1 invalid */
static int check_port(const char *addr, size_t n, int for_bind)
{
    const char *colon = memrchr(addr, ':', n);
    const char *bracket = memrchr(addr, ']', n);
    if (!colon || (bracket && colon < bracket))
        return 1;
    char port_text[8];
    size_t pl = (size_t)(addr + n - colon - 1);
    if (pl >= sizeof port_text)
        return -1;
    memcpy(port_text, colon + 1, pl);
    port_text[pl] = '\0';
    unsigned port;
    return parse_port(port_text, for_bind, &port) == 0 ? 0 : -1;
}

int zl_endpoint_port_check(const char *ep, int for_bind)
{
    if (!ep)
        return 0;
    /* tls://, ws:// and wss:// (every socket type has them) are TCP ports
     * too: their host:port, without a ws path */
    if (strncmp(ep, "tls://", 6) == 0 || strncmp(ep, "ws://", 5) == 0 ||
        strncmp(ep, "wss://", 6) == 0) {
        const char *hp = strstr(ep, "://") + 3;
        return check_port(hp, strcspn(hp, "/"), for_bind) == 0 ? 0 : -EINVAL;
    }
    if (strncmp(ep, "tcp://", 6) != 0)
        return 0; /* other transports: the callee's own rules */
    const char *addr = ep + 6;
    /* libzmq's connect form "tcp://source;destination": the source is a
     * local address, so it follows the bind rules (a source without a port
     * is fine) */
    const char *semi = strrchr(addr, ';');
    if (semi) {
        if (check_port(addr, (size_t)(semi - addr), 1) < 0)
            return -EINVAL;
        addr = semi + 1;
    }
    return check_port(addr, strlen(addr), for_bind) == 0 ? 0 : -EINVAL;
}

/* Returns 0, or a negative errno: -EPROTONOSUPPORT for another transport,
 * -EINVAL for anything malformed or unresolvable. A name getaddrinfo cannot
 * resolve is EINVAL as in libzmq's resolver (connect side), so callers that
 * test for it keep working; see native/README.md, Endpoints. */
/* Which transport an endpoint's scheme names (ZL_K_* bits), or -1 for one
 * the STREAM engine does not offer here. */
static int scheme_kind(const char *ep, size_t slen, int want_others)
{
    if (slen == 3 && strncmp(ep, "tcp", 3) == 0)
        return 0;
    if (!want_others)
        return -1;
    if (slen == 3 && strncmp(ep, "tls", 3) == 0 && zl_tls_available())
        return ZL_K_TLS;
    if (slen == 2 && strncmp(ep, "ws", 2) == 0 && zl_ws_available())
        return ZL_K_WS;
    if (slen == 3 && strncmp(ep, "wss", 3) == 0 && zl_ws_available())
        return ZL_K_WS | ZL_K_TLS;
    return -1;
}

const char *zl_ws_split(const char *ep, size_t *hostport_len)
{
    const char *addr = strstr(ep, "://");
    addr = addr ? addr + 3 : ep;
    const char *slash = strchr(addr, '/');
    if (!slash) {
        *hostport_len = strlen(addr);
        return "/";
    }
    *hostport_len = (size_t)(slash - addr);
    for (const char *p = slash; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return NULL; /* it goes into the request line as it is */
    return slash;
}

void zl_format_addr_ws(const zl_sockaddr_t *a, int kind, const char *path,
                       char *buf, size_t n)
{
    char tmp[ZL_ADDR_MAX];
    zl_format_addr(a, tmp, sizeof tmp);
    /* tmp is "tcp://..." */
    snprintf(buf, n, "%s://%s%s", (kind & ZL_K_TLS) ? "wss" : "ws", tmp + 6,
             path ? path : "");
}

/* Returns 0, or a negative errno: -EPROTONOSUPPORT for another transport,
 * -EINVAL for anything malformed or unresolvable. A name getaddrinfo cannot
 * resolve is EINVAL as in libzmq's resolver (connect side), so callers that
 * test for it keep working; see native/README.md, Endpoints. */
int zl_parse_endpoint(const char *ep, int for_bind, int ipv6, int *kind,
                      zl_sockaddr_t *out, socklen_t *outlen)
{
    if (!ep)
        return -EINVAL;
    const char *sep = strstr(ep, "://");
    if (!sep || sep == ep)
        return -EINVAL;
    int k = scheme_kind(ep, (size_t)(sep - ep), kind != NULL);
    if (k < 0)
        return -EPROTONOSUPPORT; /* ipc, inproc, ... or unknown */
    if (kind)
        *kind = k;
    size_t alen = strlen(sep + 3);
    if ((k & ZL_K_WS) && !zl_ws_split(ep, &alen))
        return -EINVAL;
    if (alen == 0 || alen >= ZL_ADDR_MAX)
        return -EINVAL;
    char addr[ZL_ADDR_MAX];
    memcpy(addr, sep + 3, alen);
    addr[alen] = '\0';
    char host[ZL_ADDR_MAX];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr)
        return -EINVAL;
    size_t hlen = (size_t)(colon - addr);
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    unsigned port;
    if (parse_port(colon + 1, for_bind, &port) != 0)
        return -EINVAL;

    char *h = host;
    int bracketed = 0;
    if (h[0] == '[') {
        if (hlen < 3 || h[hlen - 1] != ']')
            return -EINVAL;
        h[hlen - 1] = '\0';
        h++;
        bracketed = 1;
    }
    memset(out, 0, sizeof *out);
    if (strcmp(h, "*") == 0 && !bracketed) {
        if (!for_bind)
            return -EINVAL;
        if (ipv6) {
            out->in6.sin6_family = AF_INET6;
            out->in6.sin6_addr = in6addr_any;
            out->in6.sin6_port = htons((uint16_t)port);
        } else {
            out->in4.sin_family = AF_INET;
            out->in4.sin_addr.s_addr = htonl(INADDR_ANY);
            out->in4.sin_port = htons((uint16_t)port);
        }
    } else if (!bracketed && inet_pton(AF_INET, h, &out->in4.sin_addr) == 1) {
        out->in4.sin_family = AF_INET;
        out->in4.sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, h, &out->in6.sin6_addr) == 1) {
        /* an explicit IPv6 literal is honoured whatever ZLINK_IPV6 says */
        out->in6.sin6_family = AF_INET6;
        out->in6.sin6_port = htons((uint16_t)port);
    } else {
        if (bracketed || !*h)
            return -EINVAL;
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = ipv6 ? AF_UNSPEC : AF_INET;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = for_bind ? AI_PASSIVE : 0;
        if (getaddrinfo(h, NULL, &hints, &res) != 0 || !res)
            return -EINVAL;
        if (res->ai_addrlen > sizeof *out) {
            freeaddrinfo(res);
            return -EINVAL;
        }
        memcpy(out, res->ai_addr, res->ai_addrlen);
        freeaddrinfo(res);
        if (out->sa.sa_family == AF_INET6)
            out->in6.sin6_port = htons((uint16_t)port);
        else if (out->sa.sa_family == AF_INET)
            out->in4.sin_port = htons((uint16_t)port);
        else
            return -EINVAL;
    }
    *outlen = zl_addr_len(out);
    return 0;
}
