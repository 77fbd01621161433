/*
 * zmp_fuzz.cpp - the harness behind native/fuzz/fuzz_zmp.c: the bytes a
 * ZMP peer could send, fed to zmp_decoder_t and zmp_proto_t exactly as
 * zmp_engine_t feeds them (the decoder's own buffers, chunks of any size,
 * the handshake first), with the protocol's rules checked on every frame.
 * Compiled (instrumented) into the fuzz target only, never into libzmq.
 *
 * Input: byte 0 picks the local socket type, byte 1 the read size, byte 2
 * MAXMSGSIZE, byte 3 the receive buffer size; the rest is the wire.
 */
#include "precompiled.hpp"
#include "zmp_codec.hpp"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/zmq.h"

#define FUZZ_CHECK(c)                                                          \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf (stderr, "FUZZ_ASSERT %s:%d: %s\n", __FILE__, __LINE__,    \
                     #c);                                                      \
            abort ();                                                          \
        }                                                                      \
    } while (0)

namespace
{
const int types[] = {ZMQ_PAIR,   ZMQ_PUB,  ZMQ_SUB, ZMQ_DEALER,
                     ZMQ_ROUTER, ZMQ_XPUB, ZMQ_XSUB};
//  not -1: with no MAXMSGSIZE a header alone makes the decoder allocate
//  up to 4 GiB for the body, as libzmq and zlink do
const int64_t maxsizes[] = {0, 1, 16, 300, 70000, 1 << 20};
const size_t bufsizes[] = {64, 257, 8192};

bool known_code (int code_)
{
    return (code_ >= zmq::zmp::err_invalid_magic
            && code_ <= zmq::zmp::err_handshake_timeout)
           || code_ == zmq::zmp::err_internal;
}

//  A decoded data frame survives encoding and decoding again unchanged.
void round_trip (zmq::msg_t &msg_)
{
    zmq::zmp_encoder_t enc (64);
    zmq::msg_t copy;
    int rc = copy.init_size (msg_.size ());
    FUZZ_CHECK (rc == 0);
    if (msg_.size ())
        memcpy (copy.data (), msg_.data (), msg_.size ());
    copy.set_flags (msg_.flags () & (zmq::msg_t::more | zmq::msg_t::routing_id
                                     | zmq::msg_t::subscribe
                                     | zmq::msg_t::cancel));
    enc.load_msg (&copy);
    unsigned char *wire = static_cast<unsigned char *> (
      malloc (zmq::zmp::header_size + msg_.size () + 1));
    FUZZ_CHECK (wire);
    size_t total = 0;
    for (;;) {
        unsigned char *p = wire + total;
        const size_t n = enc.encode (&p, zmq::zmp::header_size + msg_.size () - total);
        if (!n)
            break;
        total += n;
    }
    FUZZ_CHECK (total == zmq::zmp::header_size + msg_.size ());
    FUZZ_CHECK (wire[0] == zmq::zmp::magic && wire[1] == zmq::zmp::version
                && wire[3] == 0);
    FUZZ_CHECK (wire[2] == zmq::zmp::wire_flags (msg_));

    zmq::zmp_decoder_t dec (8192, -1);
    dec.hello_done ();
    size_t used = 0;
    unsigned char *buf;
    size_t bufsize;
    size_t fed = 0;
    rc = 0;
    while (fed < total && rc == 0) {
        dec.get_buffer (&buf, &bufsize);
        const size_t n = std::min (bufsize, total - fed);
        memcpy (buf, wire + fed, n);
        dec.resize_buffer (n);
        rc = dec.decode (buf, n, used);
        fed += used;
    }
    FUZZ_CHECK (rc == 1 && fed == total);
    zmq::msg_t *back = dec.msg ();
    FUZZ_CHECK (back->size () == msg_.size ());
    FUZZ_CHECK (!msg_.size () || !memcmp (back->data (), msg_.data (), msg_.size ()));
    FUZZ_CHECK (zmq::zmp::wire_flags (*back) == zmq::zmp::wire_flags (msg_));
    free (wire);
    //  the encoder lets go of a message on the call after its last byte
    rc = copy.close ();
    FUZZ_CHECK (rc == 0);
}
}

extern "C" int netzlink_zmp_fuzz_one (const unsigned char *data_, size_t size_)
{
    if (size_ < 4)
        return 0;
    const int type = types[data_[0] % (sizeof types / sizeof types[0])];
    const size_t chunk = 1 + data_[1] % 64 * (data_[1] & 0x80 ? 257 : 1);
    const int64_t maxsize = maxsizes[data_[2] % (sizeof maxsizes / sizeof maxsizes[0])];
    const size_t bufsize = bufsizes[data_[3] % (sizeof bufsizes / sizeof bufsizes[0])];
    const unsigned char *in = data_ + 4;
    size_t left = size_ - 4;

    zmq::zmp_decoder_t decoder (bufsize, maxsize);
    zmq::zmp_proto_t proto (type);
    bool dead = false;
    size_t frames = 0;

    while (left > 0 && !dead) {
        //  one read, as the engine makes it: into the decoder's buffer
        unsigned char *buf;
        size_t cap;
        decoder.get_buffer (&buf, &cap);
        FUZZ_CHECK (cap > 0);
        const size_t n = std::min (std::min (chunk, cap), left);
        memcpy (buf, in, n);
        in += n;
        left -= n;
        decoder.resize_buffer (n);

        unsigned char *pos = buf;
        size_t insize = n;
        while (insize > 0) {
            size_t used = 0;
            const int rc = decoder.decode (pos, insize, used);
            FUZZ_CHECK (used <= insize);
            pos += used;
            insize -= used;
            if (rc == 0) {
                FUZZ_CHECK (insize == 0);
                break;
            }
            if (rc == -1) {
                FUZZ_CHECK (known_code (decoder.error_code ()));
                FUZZ_CHECK (decoder.error_reason () && *decoder.error_reason ());
                FUZZ_CHECK (!decoder.malformed_hello () || !proto.hello_received ());
                dead = true;
                break;
            }
            zmq::msg_t *msg = decoder.msg ();
            const bool hello = !proto.hello_received ();
            if (!hello && !(msg->flags () & zmq::msg_t::command))
                FUZZ_CHECK (maxsize < 0 || msg->size () <= static_cast<uint64_t> (maxsize));
            const zmq::zmp_proto_t::result_t r = proto.on_frame (*msg);
            if (hello)
                decoder.hello_done ();
            frames++;
            switch (r) {
                case zmq::zmp_proto_t::peer_error:
                    FUZZ_CHECK (proto.error_code () >= 0 && proto.error_code () <= 255);
                    FUZZ_CHECK (proto.error_reason () && *proto.error_reason ());
                    dead = true;
                    break;
                case zmq::zmp_proto_t::failed:
                    FUZZ_CHECK (known_code (proto.error_code ())
                                || (proto.error_code () >= 0
                                    && proto.error_code () <= 255));
                    FUZZ_CHECK (proto.error_reason () && *proto.error_reason ());
                    dead = true;
                    break;
                case zmq::zmp_proto_t::deliver:
                    //  data only after READY, never a control frame
                    FUZZ_CHECK (proto.ready ());
                    FUZZ_CHECK (!(msg->flags () & zmq::msg_t::command));
                    FUZZ_CHECK (!(msg->is_subscribe () && msg->is_cancel ()));
                    round_trip (*msg);
                    break;
                case zmq::zmp_proto_t::now_ready:
                    FUZZ_CHECK (proto.ready () && proto.hello_received ());
                    FUZZ_CHECK (zmq::zmp::types_compatible (type, proto.peer_type ()));
                    break;
                case zmq::zmp_proto_t::got_ping: {
                    unsigned char pong[2 + zmq::zmp::heartbeat_max_ctx];
                    const size_t len = proto.pong (pong);
                    FUZZ_CHECK (len >= 2 && len == 2u + pong[1]
                                && pong[0] == zmq::zmp::ctl_heartbeat_ack);
                    break;
                }
                case zmq::zmp_proto_t::consumed:
                    FUZZ_CHECK (proto.hello_received ());
                    FUZZ_CHECK (proto.peer_id_size () <= 255);
                    break;
            }
            if (dead)
                break;
        }
    }
    (void) frames;
    return 0;
}
