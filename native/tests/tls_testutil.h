/*
 * tls_testutil.h - test certificates made at run time with OpenSSL's API
 * (no files in the tree, no openssl command): a CA, certificates it signs
 * for a server and a client, a second unrelated CA, all written as PEM into
 * a fresh directory under /tmp that tu_tls_cleanup removes. Plus helpers
 * the TLS tests share: a configured TLS server or client socket, and a
 * monitor that waits for a given event.
 */
#ifndef ZLINK_TLS_TESTUTIL_H
#define ZLINK_TLS_TESTUTIL_H

#include "testutil.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tu_tls {
    char dir[64];
    /* PEM paths */
    char ca[128], ca2[128];
    char srv_cert[128], srv_key[128];     /* localhost, 127.0.0.1 */
    char other_cert[128], other_key[128]; /* other.example only */
    char cli_cert[128], cli_key[128];
    char enc_key[128];                    /* srv_key under "secret" */
} tu_tls_t;

static inline EVP_PKEY *tu_key(void)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    CHECK(k);
    return k;
}

static inline void tu_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    CHECK(ext && X509_add_ext(cert, ext, -1) == 1);
    X509_EXTENSION_free(ext);
}

/* A certificate for cn with key, signed by (issuer, ikey), or self-signed
 * (a CA) when issuer is NULL; san NULL adds none. */
static inline X509 *tu_cert(const char *cn, EVP_PKEY *key, X509 *issuer,
                     EVP_PKEY *ikey, const char *san, long serial)
{
    X509 *c = X509_new();
    CHECK(c);
    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
    X509_gmtime_adj(X509_getm_notBefore(c), -3600);
    X509_gmtime_adj(X509_getm_notAfter(c), 86400L);
    X509_set_pubkey(c, key);
    X509_NAME *name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name);
    X509 *iss = issuer ? issuer : c;
    if (!issuer) {
        tu_ext(c, iss, NID_basic_constraints, "critical,CA:TRUE");
        tu_ext(c, iss, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        tu_ext(c, iss, NID_basic_constraints, "CA:FALSE");
    }
    tu_ext(c, iss, NID_subject_key_identifier, "hash");
    if (san)
        tu_ext(c, iss, NID_subject_alt_name, san);
    CHECK(X509_sign(c, issuer ? ikey : key, EVP_sha256()) > 0);
    return c;
}

static inline void tu_write_cert(const char *path, X509 *c)
{
    FILE *f = fopen(path, "w");
    CHECK(f && PEM_write_X509(f, c) == 1);
    fclose(f);
}

static inline void tu_write_key(const char *path, EVP_PKEY *k, const char *password)
{
    FILE *f = fopen(path, "w");
    CHECK(f);
    if (password)
        CHECK(PEM_write_PrivateKey(f, k, EVP_aes_128_cbc(),
                                   (const unsigned char *)password,
                                   (int)strlen(password), NULL, NULL) == 1);
    else
        CHECK(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1);
    fclose(f);
}

static inline void tu_tls_make(tu_tls_t *t)
{
    memset(t, 0, sizeof *t);
    strcpy(t->dir, "/tmp/zlink-tls-XXXXXX");
    CHECK(mkdtemp(t->dir));
#define TU_PATH(f, n) snprintf(t->f, sizeof t->f, "%s/" n, t->dir)
    TU_PATH(ca, "ca.pem");
    TU_PATH(ca2, "ca2.pem");
    TU_PATH(srv_cert, "server.pem");
    TU_PATH(srv_key, "server.key");
    TU_PATH(other_cert, "other.pem");
    TU_PATH(other_key, "other.key");
    TU_PATH(cli_cert, "client.pem");
    TU_PATH(cli_key, "client.key");
    TU_PATH(enc_key, "server-enc.key");
#undef TU_PATH
    EVP_PKEY *cak = tu_key(), *ca2k = tu_key(), *sk = tu_key(), *ok = tu_key(),
             *ck = tu_key();
    X509 *ca = tu_cert("zlink test CA", cak, NULL, NULL, NULL, 1);
    X509 *ca2 = tu_cert("zlink other CA", ca2k, NULL, NULL, NULL, 2);
    X509 *srv = tu_cert("localhost", sk, ca, cak, "DNS:localhost,IP:127.0.0.1", 3);
    X509 *oth = tu_cert("other.example", ok, ca, cak, "DNS:other.example", 4);
    X509 *cli = tu_cert("zlink test client", ck, ca, cak, NULL, 5);
    tu_write_cert(t->ca, ca);
    tu_write_cert(t->ca2, ca2);
    tu_write_cert(t->srv_cert, srv);
    tu_write_key(t->srv_key, sk, NULL);
    tu_write_cert(t->other_cert, oth);
    tu_write_key(t->other_key, ok, NULL);
    tu_write_cert(t->cli_cert, cli);
    tu_write_key(t->cli_key, ck, NULL);
    tu_write_key(t->enc_key, sk, "secret");
    X509 *certs[] = {ca, ca2, srv, oth, cli};
    EVP_PKEY *keys[] = {cak, ca2k, sk, ok, ck};
    for (int i = 0; i < 5; i++) {
        X509_free(certs[i]);
        EVP_PKEY_free(keys[i]);
    }
}

static inline void tu_tls_cleanup(tu_tls_t *t)
{
    const char *files[] = {t->ca, t->ca2, t->srv_cert, t->srv_key,
                           t->other_cert, t->other_key, t->cli_cert,
                           t->cli_key, t->enc_key};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        unlink(files[i]);
    rmdir(t->dir);
}

/* The end of a TLS test: its context terminates at once (every socket was
 * closed), the certificates are removed, and its last line (done) is
 * printed. */
static inline void tu_tls_end(void *ctx, tu_tls_t *t, const char *done)
{
    CHECK(zlink_ctx_term(ctx) == 0);
    tu_tls_cleanup(t);
    puts(done);
}

static inline void tu_set_str(void *s, int opt, const char *v)
{
    CHECK(zlink_setsockopt(s, opt, v, strlen(v)) == 0);
}

/* A STREAM socket bound to tls://127.0.0.1:* with cert/key; ep gets the
 * bound endpoint. */
/* the ZLINK_STREAM_FRAMING tu_tls_server and tu_tls_client set */
static int tu_tls_framing = ZLINK_STREAM_FRAMING_LENGTH;

static inline void *tu_tls_server(void *ctx, const char *cert, const char *key,
                           char *ep, size_t cap)
{
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(s);
    tu_set_framing(s, tu_tls_framing);
    tu_set_str(s, ZLINK_TLS_CERT, cert);
    tu_set_str(s, ZLINK_TLS_KEY, key);
    CHECK(zlink_bind(s, "tls://127.0.0.1:*") == 0);
    tu_last_endpoint(s, ep, cap);
    CHECK(strncmp(ep, "tls://127.0.0.1:", 16) == 0);
    return s;
}

/* A STREAM socket that verifies servers against ca (NULL: no verification)
 * and, with reconnect -1, gives up after one failed attempt. */
static inline void *tu_tls_client(void *ctx, const char *ca, int reconnect)
{
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(s);
    tu_set_framing(s, tu_tls_framing);
    if (ca)
        tu_set_str(s, ZLINK_TLS_CA, ca);
    else
        tu_set_int(s, ZLINK_TLS_VERIFY, 0);
    tu_set_int(s, ZLINK_RECONNECT_IVL, reconnect);
    return s;
}

/* What a socket delivered while a test waited on its monitor. */
typedef struct tu_seen {
    int ups, downs;   /* 0x01 and 0x00 messages */
    long long bytes;  /* data payload bytes */
    uint32_t last_id; /* of the last message */
} tu_seen_t;

/* Receives what sock has (DONTWAIT) into seen; 1 if it got anything. */
static inline int tu_drain(void *sock, tu_seen_t *seen)
{
    static unsigned char buf[65536];
    uint32_t id;
    int n = tu_stream_recv(sock, &id, buf, sizeof buf, ZLINK_DONTWAIT);
    if (n < 0) {
        CHECK(zlink_errno() == EAGAIN);
        return 0;
    }
    seen->last_id = id;
    int ev = tu_last_event(sock); /* any framing */
    if (ev == 1)
        seen->ups++;
    else if (ev == 0)
        seen->downs++;
    else
        seen->bytes += n;
    return 1;
}

/* The sockets a test drives: each makes progress only inside calls made
 * on it, so every wait receives from all of them (b may be NULL). */
typedef struct tu_pair {
    void *a, *b;
    tu_seen_t sa, sb;
} tu_pair_t;

/* One step: receive what there is, or else poll both for up to 5 ms. */
static inline void tu_step(tu_pair_t *p)
{
    int got = tu_drain(p->a, &p->sa);
    if (p->b)
        got |= tu_drain(p->b, &p->sb);
    if (!got) {
        zlink_pollitem_t it[2] = {{p->a, 0, ZLINK_POLLIN, 0},
                                  {p->b, 0, ZLINK_POLLIN, 0}};
        zlink_poll(it, p->b ? 2 : 1, 5);
    }
}

/* Waits up to ms for a monitor event of the given kind (others are
 * skipped). Returns the event's value, or -1 on timeout. */
static inline long long tu_wait_event(tu_pair_t *p, void *mon, uint64_t event, int ms)
{
    long long end = tu_now_ms() + ms;
    zlink_monitor_event_t ev;
    for (;;) {
        while (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0)
            if (ev.event == event)
                return (long long)ev.value;
        if (tu_now_ms() >= end)
            return -1;
        tu_step(p);
    }
}

/* Steps p until cond holds or ms pass; 1 if it held. */
#define TU_UNTIL(p, cond, ms)                                                  \
    ({                                                                         \
        long long end_ = tu_now_ms() + (ms);                                   \
        int ok_ = 0;                                                           \
        while (!(ok_ = (cond)) && tu_now_ms() < end_)                          \
            tu_step(p);                                                        \
        ok_;                                                                   \
    })

/* cli connects to srv at ep and both sides get through the handshake:
 * CONNECTION_READY on both monitors, each side's 0x01 event (side a is the
 * client, side b the server). */
static inline tu_pair_t tu_connect_ready(void *cli, void *srv, void *cmon, void *smon,
                                         const char *ep)
{
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CONNECTION_READY, 5000) == 0);
    CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_CONNECTION_READY, 5000) == 0);
    CHECK(TU_UNTIL(&p, p.sa.ups == 1 && p.sb.ups == 1, 5000));
    return p;
}

#endif
