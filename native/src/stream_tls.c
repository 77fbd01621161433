/*
 * stream_tls.c - tls:// on STREAM sockets, over OpenSSL. A TLS connection
 * is a TCP connection of the same engine with an SSL session on top: the
 * handshake is driven by the pump (each readiness event of a ZC_HANDSHAKE
 * connection is one SSL_do_handshake, whose WANT_READ / WANT_WRITE set the
 * descriptor's interest), and once it completes the connection is ZC_ACTIVE
 * and reads and writes go through SSL_read / SSL_write instead of recv /
 * send; the STREAM contract above (routing ids, 0x01/0x00, SNDHWM, the send
 * queue) does not change. No thread, no blocking call.
 *
 * The sessions write through a BIO of our own that sends with MSG_NOSIGNAL,
 * so a peer that went away gives EPIPE and never SIGPIPE.
 */
#include "stream.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#ifdef ZLINK_HAVE_TLS

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>

int zl_tls_available(void)
{
    return 1;
}

/* ---- the socket BIO ------------------------------------------------------ */

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static int bio_fd(BIO *b)
{
    return (int)(intptr_t)BIO_get_data(b);
}

static int bio_write(BIO *b, const char *buf, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t n = send(bio_fd(b), buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)n;
}

static int bio_read(BIO *b, char *buf, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t n = recv(bio_fd(b), buf, (size_t)len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void bio_method_make(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                 "zlink stream socket");
    if (m && BIO_meth_set_write(m, bio_write) && BIO_meth_set_read(m, bio_read) &&
        BIO_meth_set_ctrl(m, bio_ctrl) && BIO_meth_set_create(m, bio_create))
        bio_method = m;
    else if (m)
        BIO_meth_free(m);
}

/* ---- contexts ------------------------------------------------------------ */

static int passwd_cb(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pw = u;
    if (!pw || size <= 0)
        return 0;
    size_t n = strlen(pw);
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, pw, n);
    return (int)n;
}

static int load_trust(SSL_CTX *ctx, const zl_tls_conf_t *o)
{
    if (o->ca[0] && SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1)
        return -1;
    if (o->trust_system && SSL_CTX_set_default_verify_paths(ctx) != 1)
        return -1;
    return (o->ca[0] || o->trust_system) ? 0 : -1;
}

/* from zl_tls_conf_t (zmp_transport.h): the STREAM socket's options and
 * those of the ZMP socket types (zmp_transport.c) make contexts alike */
SSL_CTX *zl_tls_ctx_build(const zl_tls_conf_t *o, int server)
{
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!ctx) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* read what the socket has into OpenSSL's buffer in one recv() instead
     * of a record header and then its body (zl_tls_pending covers what it
     * holds, so the ready list, not epoll, brings those bytes out) */
    SSL_CTX_set_read_ahead(ctx, 1);
    /* a peer that closes without close_notify ends like a TCP peer would */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    int ok = 1;
    if (o->cert[0]) {
        /* the key may sit in the certificate's file */
        const char *key = o->key[0] ? o->key : o->cert;
        SSL_CTX_set_default_passwd_cb(ctx, passwd_cb);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)o->password);
        ok = SSL_CTX_use_certificate_chain_file(ctx, o->cert) == 1 &&
             SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 &&
             SSL_CTX_check_private_key(ctx) == 1;
        SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    } else if (server || o->key[0]) {
        ok = 0; /* a server needs a certificate; a key alone means nothing */
    }
    if (ok && server) {
        /* no session tickets: nobody resumes, and they cost a write */
        SSL_CTX_set_num_tickets(ctx, 0);
        if (o->require_client_cert) {
            ok = load_trust(ctx, o) == 0;
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                               NULL);
        }
    } else if (ok) {
        if (o->verify) {
            ok = load_trust(ctx, o) == 0;
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        }
    }
    ERR_clear_error();
    if (!ok) {
        SSL_CTX_free(ctx);
        zl_set_errno(EINVAL);
        return NULL;
    }
    return ctx;
}

SSL_CTX *zl_tls_ctx_new(zl_stream_t *s, int server)
{
    const zl_stream_opts_t *o = &s->opts;
    zl_tls_conf_t conf = {
        .cert = o->tls_cert,
        .key = o->tls_key,
        .ca = o->tls_ca,
        .password = o->tls_password,
        .verify = o->tls_verify,
        .require_client_cert = o->tls_require_client_cert,
        .trust_system = o->tls_trust_system,
    };
    return zl_tls_ctx_build(&conf, server);
}

void zl_tls_ctx_free(SSL_CTX *ctx)
{
    SSL_CTX_free(ctx); /* NULL is fine */
}

/* ---- sessions ------------------------------------------------------------ */

/* A session on fd through the library's socket BIO; a client checks host
 * (and sends it as SNI when it is a name). NULL with errno. */
SSL *zl_tls_ssl_new(SSL_CTX *ctx, int fd, int server, const char *host)
{
    pthread_once(&bio_once, bio_method_make);
    SSL *ssl = bio_method ? SSL_new(ctx) : NULL;
    BIO *bio = ssl ? BIO_new(bio_method) : NULL;
    if (!bio) {
        SSL_free(ssl);
        ERR_clear_error();
        errno = ENOMEM;
        return NULL;
    }
    BIO_set_data(bio, (void *)(intptr_t)fd);
    SSL_set_bio(ssl, bio, bio);
    if (server) {
        SSL_set_accept_state(ssl);
    } else {
        SSL_set_connect_state(ssl);
        if (host) {
            unsigned char ip[16];
            int ok;
            if (inet_pton(AF_INET, host, ip) == 1 ||
                inet_pton(AF_INET6, host, ip) == 1) {
                /* an address: checked against the certificate's IP names,
                 * and no SNI (it carries names only) */
                ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
            } else {
                ok = SSL_set_tlsext_host_name(ssl, host) == 1 &&
                     SSL_set1_host(ssl, host) == 1;
            }
            if (!ok) {
                SSL_free(ssl);
                ERR_clear_error();
                errno = EINVAL;
                return NULL;
            }
        }
    }
    return ssl;
}

int zl_tls_start(zl_stream_t *s, zl_conn_t *c, SSL_CTX *ctx, int server,
                 const char *host)
{
    (void)s;
    SSL *ssl = zl_tls_ssl_new(ctx, c->fd, server, host);
    if (!ssl)
        return -1;
    c->ssl = ssl;
    c->tls_dead = 0;
    return 0;
}

/* Whether a failed handshake was about a certificate (ours or the peer's),
 * which another attempt would only repeat. */
static int cert_failure(SSL *ssl)
{
    if (SSL_get_verify_result(ssl) != X509_V_OK)
        return 1;
    unsigned long e;
    while ((e = ERR_get_error()) != 0) {
        if (ERR_GET_LIB(e) != ERR_LIB_SSL)
            continue;
        switch (ERR_GET_REASON(e)) {
        case SSL_R_CERTIFICATE_VERIFY_FAILED:
        case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
        case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
        case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
        case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
        case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
        case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
            return 1;
        default:
            break;
        }
    }
    return 0;
}

int zl_tls_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event)
{
    ERR_clear_error();
    int rc = SSL_do_handshake(c->ssl);
    if (rc == 1)
        return 1;
    int e = SSL_get_error(c->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        zl_conn_set_out(s, c, e == SSL_ERROR_WANT_WRITE);
        return 0;
    }
    c->tls_dead = 1;
    *err = zl_tls_failure(c->ssl, e, s->tls_last_error,
                          sizeof s->tls_last_error, &s->tls_last_verify);
    *event = *err == EACCES   ? ZLINK_EVENT_HANDSHAKE_FAILED_AUTH
             : *err == EPROTO ? ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL
                              : ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    return -1;
}

int zl_tls_failure(SSL *ssl, int e, char *why_out, size_t why_size,
                   int *verify)
{
    /* the reason, kept for ZLINK_TLS_LAST_ERROR / _VERIFY_RESULT: the
     * verification result when that failed, else the first TLS error's */
    long vr = SSL_get_verify_result(ssl);
    unsigned long first = ERR_peek_error();
    const char *why = NULL;
    if (e == SSL_ERROR_SSL && vr != X509_V_OK)
        why = X509_verify_cert_error_string(vr);
    else if (first && ERR_reason_error_string(first))
        why = ERR_reason_error_string(first);
    *verify = e == SSL_ERROR_SSL ? (int)vr : 0;
    if (why)
        snprintf(why_out, why_size, "%s", why);
    else
        snprintf(why_out, why_size,
                 "the connection ended during the TLS handshake");
    int err;
    if (e == SSL_ERROR_SSL) {
        err = cert_failure(ssl) ? EACCES : EPROTO;
    } else {
        /* the connection ended or broke under the handshake */
        int sys = errno;
        err = (e == SSL_ERROR_SYSCALL && sys && sys != EAGAIN) ? sys : ECONNRESET;
    }
    ERR_clear_error();
    return err;
}

/* errno for a failed SSL_read/SSL_write (e from SSL_get_error) */
ssize_t zl_tls_io_result(int e, int sys, int *dead)
{
    *dead = 0;
    switch (e) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        *dead = 1;
        ERR_clear_error();
        if (!sys || sys == EAGAIN)
            return 0;
        errno = sys;
        return -1;
    default:
        *dead = 1;
        ERR_clear_error();
        errno = EPROTO;
        return -1;
    }
}

static ssize_t io_error(zl_conn_t *c, int e, int sys)
{
    int dead;
    ssize_t r = zl_tls_io_result(e, sys, &dead);
    if (dead)
        c->tls_dead = 1;
    return r;
}

/* One SSL_read gives at most one record, so the read goes on while
 * OpenSSL still holds bytes (read-ahead keeps what the socket gave beyond
 * the record) and the buffer has room: one call takes what is there. An
 * error after some bytes is left for the next call. */
ssize_t zl_tls_recv(zl_conn_t *c, void *buf, size_t len)
{
    size_t got = 0;
    if (len > INT_MAX)
        len = INT_MAX;
    do {
        ERR_clear_error();
        int n = SSL_read(c->ssl, (char *)buf + got, (int)(len - got));
        if (n <= 0) {
            if (got)
                return (ssize_t)got;
            int sys = errno;
            return io_error(c, SSL_get_error(c->ssl, n), sys);
        }
        got += (size_t)n;
    } while (got < len && SSL_has_pending(c->ssl));
    return (ssize_t)got;
}

/* Writes buf as TLS records. */
ssize_t zl_tls_send(zl_conn_t *c, const void *buf, size_t len)
{
    if (len > INT_MAX)
        len = INT_MAX;
    ERR_clear_error();
    int n = SSL_write(c->ssl, buf, (int)len);
    if (n > 0) {
        c->tls_wpend = 0;
        return n;
    }
    int sys = errno;
    ssize_t r = io_error(c, SSL_get_error(c->ssl, n), sys);
    if (r < 0 && errno == EAGAIN) {
        /* records made of the start of buf may wait inside OpenSSL (one
         * of 16 KiB, up to eight with the multi-block ciphers of TLS 1.2):
         * the retry must bring those bytes again (zl_conn_queue_front
         * leaves them first) */
        c->tls_wpend = (uint32_t)(len < 131072 ? len : 131072);
    }
    if (r == 0) { /* the peer ended the session: a write cannot go on */
        errno = EPIPE;
        return -1;
    }
    return r;
}

int zl_tls_pending(zl_conn_t *c)
{
    /* decrypted bytes, or records read ahead and not decrypted yet */
    return c->ssl && SSL_has_pending(c->ssl);
}

void zl_tls_end(zl_conn_t *c, int graceful)
{
    if (!c->ssl)
        return;
    if (graceful && !c->tls_dead && SSL_is_init_finished(c->ssl)) {
        SSL_shutdown(c->ssl); /* one try: close_notify if it fits */
        ERR_clear_error();
    }
    SSL_free(c->ssl);
    c->ssl = NULL;
}

#else /* !ZLINK_HAVE_TLS */

int zl_tls_available(void)
{
    return 0;
}

struct ssl_ctx_st *zl_tls_ctx_new(zl_stream_t *s, int server)
{
    (void)s;
    (void)server;
    zl_set_errno(EPROTONOSUPPORT);
    return NULL;
}

void zl_tls_ctx_free(struct ssl_ctx_st *ctx)
{
    (void)ctx;
}

int zl_tls_start(zl_stream_t *s, zl_conn_t *c, struct ssl_ctx_st *ctx,
                 int server, const char *host)
{
    (void)s;
    (void)c;
    (void)ctx;
    (void)server;
    (void)host;
    errno = EPROTONOSUPPORT;
    return -1;
}

int zl_tls_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event)
{
    (void)s;
    (void)c;
    *err = EPROTONOSUPPORT;
    *event = ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    return -1;
}

ssize_t zl_tls_recv(zl_conn_t *c, void *buf, size_t len)
{
    (void)c;
    (void)buf;
    (void)len;
    errno = EPROTONOSUPPORT;
    return -1;
}

ssize_t zl_tls_send(zl_conn_t *c, const void *buf, size_t len)
{
    return zl_tls_recv(c, (void *)buf, len);
}

int zl_tls_pending(zl_conn_t *c)
{
    (void)c;
    return 0;
}

void zl_tls_end(zl_conn_t *c, int graceful)
{
    (void)c;
    (void)graceful;
}

#endif
