/*
 * zmp_codec.cpp - ZMP v1 frames for libzmq's socket types (see
 * zmp_codec.hpp). NetZlink's own code, copied into libzmq's source tree by
 * scripts/libzmq.sh.
 */
#include "precompiled.hpp"
#include "zmp_codec.hpp"

#include <string.h>

#include "err.hpp"
#include "likely.hpp"
#include "wire.hpp"
#include "../include/zmq.h"

const char *zmq::zmp::error_text (int code_)
{
    switch (code_) {
        case err_invalid_magic:
            return "invalid magic";
        case err_version_mismatch:
            return "version mismatch";
        case err_flags_invalid:
            return "flags invalid";
        case err_body_too_large:
            return "body too large";
        case err_socket_type_mismatch:
            return "socket type mismatch";
        case err_handshake_timeout:
            return "handshake timeout";
        case err_internal:
            return "internal error";
        default:
            return "unknown error";
    }
}

bool zmq::zmp::types_compatible (int local_type_, int peer_type_)
{
    switch (local_type_) {
        case ZMQ_PAIR:
            return peer_type_ == ZMQ_PAIR;
        case ZMQ_DEALER:
        case ZMQ_ROUTER:
            return peer_type_ == ZMQ_DEALER || peer_type_ == ZMQ_ROUTER;
        case ZMQ_PUB:
        case ZMQ_XPUB:
            return peer_type_ == ZMQ_SUB || peer_type_ == ZMQ_XSUB;
        case ZMQ_SUB:
        case ZMQ_XSUB:
            return peer_type_ == ZMQ_PUB || peer_type_ == ZMQ_XPUB;
        default:
            return false;
    }
}

const char *zmq::zmp::socket_type_name (int type_)
{
    switch (type_) {
        case ZMQ_PAIR:
            return "PAIR";
        case ZMQ_PUB:
            return "PUB";
        case ZMQ_SUB:
            return "SUB";
        case ZMQ_DEALER:
            return "DEALER";
        case ZMQ_ROUTER:
            return "ROUTER";
        case ZMQ_XPUB:
            return "XPUB";
        case ZMQ_XSUB:
            return "XSUB";
        case ZMQ_STREAM:
            return "STREAM";
        default:
            return NULL;
    }
}

size_t
zmq::zmp::put_header (unsigned char *out_, unsigned char flags_, uint32_t size_)
{
    out_[0] = magic;
    out_[1] = version;
    out_[2] = flags_;
    out_[3] = 0;
    put_uint32 (out_ + 4, size_);
    return header_size;
}

unsigned char zmq::zmp::wire_flags (const msg_t &msg_)
{
    //  libzmq's flags: more 1, command 2, routing_id 64; the command type
    //  (bits 2-4) says subscribe (12) or cancel (16)
    const unsigned char f = const_cast<msg_t &> (msg_).flags ();
    unsigned char out = 0;
    if (f & msg_t::more)
        out |= flag_more;
    if (f & msg_t::command)
        out |= flag_control;
    if (f & msg_t::routing_id)
        out |= flag_identity;
    if (msg_.is_subscribe ())
        out |= flag_subscribe;
    else if (msg_.is_cancel ())
        out |= flag_cancel;
    return out;
}

bool zmq::zmp::parse_properties (const unsigned char *p_,
                                 size_t size_,
                                 metadata_t::dict_t &out_)
{
    //  zlink reads properties while more than one byte is left and takes a
    //  property cut short as the end; any byte left over is an error
    size_t left = size_;
    while (left > 1) {
        const size_t name_len = *p_;
        p_++;
        left--;
        if (left < name_len)
            break;
        const std::string name (reinterpret_cast<const char *> (p_),
                                name_len);
        p_ += name_len;
        left -= name_len;
        if (left < 4)
            break;
        const size_t value_len = get_uint32 (p_);
        p_ += 4;
        left -= 4;
        if (left < value_len)
            break;
        out_[name] =
          std::string (reinterpret_cast<const char *> (p_), value_len);
        p_ += value_len;
        left -= value_len;
    }
    return left == 0;
}

// ---- encoder ----------------------------------------------------------------

zmq::zmp_encoder_t::zmp_encoder_t (size_t bufsize_) :
    encoder_base_t<zmp_encoder_t> (bufsize_)
{
    next_step (NULL, 0, &zmp_encoder_t::header_ready, true);
}

zmq::zmp_encoder_t::~zmp_encoder_t ()
{
}

void zmq::zmp_encoder_t::header_ready ()
{
    const msg_t *msg = in_progress ();
    //  a frame's size is a u32: libzmq's messages never reach 4 GiB here
    zmq_assert (msg->size () <= 0xffffffffULL);
    zmp::put_header (_header, zmp::wire_flags (*msg),
                     static_cast<uint32_t> (msg->size ()));
    next_step (_header, zmp::header_size, &zmp_encoder_t::body_ready, false);
}

void zmq::zmp_encoder_t::body_ready ()
{
    next_step (in_progress ()->data (), in_progress ()->size (),
               &zmp_encoder_t::header_ready, true);
}

// ---- decoder ----------------------------------------------------------------

zmq::zmp_decoder_t::zmp_decoder_t (size_t bufsize_, int64_t maxmsgsize_) :
    decoder_base_t<zmp_decoder_t, shared_message_memory_allocator> (bufsize_),
    _max_body (maxmsgsize_ >= 0 && static_cast<uint64_t> (maxmsgsize_)
                                       < 0xffffffffULL
                 ? static_cast<uint64_t> (maxmsgsize_)
                 : 0xffffffffULL),
    _expect_hello (true),
    _error_code (0),
    _error_reason (NULL),
    _malformed_hello (false)
{
    const int rc = _in_progress.init ();
    errno_assert (rc == 0);
    next_step (_header, zmp::header_size, &zmp_decoder_t::header_ready);
}

zmq::zmp_decoder_t::~zmp_decoder_t ()
{
    const int rc = _in_progress.close ();
    errno_assert (rc == 0);
}

int zmq::zmp_decoder_t::fail (int code_, const char *reason_, int errno_)
{
    _error_code = code_;
    _error_reason = reason_ ? reason_ : zmp::error_text (code_);
    errno = errno_;
    return -1;
}

int zmq::zmp_decoder_t::header_ready (unsigned char const *read_from_)
{
    const uint32_t size = get_uint32 (_header + 4);
    const unsigned char flags = _header[2];
    unsigned char msg_flags = 0;

    if (_expect_hello) {
        //  The first frame is HELLO: zlink takes its length first and looks
        //  at magic, version and flags once the whole frame is in
        //  (body_ready).
        if (size < zmp::hello_min_body)
            return fail (zmp::err_internal, "hello too short", EPROTO);
        if (size > zmp::hello_max_body)
            return fail (zmp::err_body_too_large, "hello too large", EPROTO);
        msg_flags = msg_t::command;
    } else {
        if (_header[0] != zmp::magic)
            return fail (zmp::err_invalid_magic, NULL, EPROTO);
        if (_header[1] != zmp::version)
            return fail (zmp::err_version_mismatch, NULL, EPROTO);
        if (_header[3] != 0 || (flags & ~zmp::flag_all))
            return fail (zmp::err_flags_invalid, NULL, EPROTO);
        //  CONTROL goes with nothing but itself; SUBSCRIBE and CANCEL with
        //  nothing at all
        if ((flags & zmp::flag_control)
            && (flags & (zmp::flag_identity | zmp::flag_more)))
            return fail (zmp::err_flags_invalid, NULL, EPROTO);
        const unsigned char sub_cancel =
          flags & (zmp::flag_subscribe | zmp::flag_cancel);
        if (sub_cancel && (sub_cancel != flags || sub_cancel
                                                     == (zmp::flag_subscribe
                                                         | zmp::flag_cancel)))
            return fail (zmp::err_flags_invalid, NULL, EPROTO);
        if (size > _max_body)
            return fail (zmp::err_body_too_large, NULL, EMSGSIZE);

        if (flags & zmp::flag_more)
            msg_flags |= msg_t::more;
        if (flags & zmp::flag_control)
            msg_flags |= msg_t::command;
        if (flags & zmp::flag_identity)
            msg_flags |= msg_t::routing_id;
        if (flags & zmp::flag_subscribe)
            msg_flags |= msg_t::subscribe;
        else if (flags & zmp::flag_cancel)
            msg_flags |= msg_t::cancel;
    }

    int rc = _in_progress.close ();
    errno_assert (rc == 0);

    //  The body in place in the receive buffer when it is all there (the
    //  buffer's reference count keeps it), otherwise a message of its own
    //  that the next reads fill.
    shared_message_memory_allocator &allocator = get_allocator ();
    const unsigned char *const begin = allocator.data ();
    const unsigned char *const end = begin + allocator.size ();
    if (read_from_ >= begin && read_from_ <= end
        && size <= static_cast<size_t> (end - read_from_)) {
        rc = _in_progress.init (const_cast<unsigned char *> (read_from_),
                                size, shared_message_memory_allocator::call_dec_ref,
                                allocator.buffer (),
                                allocator.provide_content ());
        if (_in_progress.is_zcmsg ()) {
            allocator.advance_content ();
            allocator.inc_ref ();
        }
    } else
        rc = _in_progress.init_size (size);
    if (unlikely (rc)) {
        errno_assert (errno == ENOMEM);
        rc = _in_progress.init ();
        errno_assert (rc == 0);
        return fail (zmp::err_internal, NULL, ENOMEM);
    }
    _in_progress.set_flags (msg_flags);
    next_step (_in_progress.data (), _in_progress.size (),
               &zmp_decoder_t::body_ready);
    return 0;
}

int zmq::zmp_decoder_t::body_ready (unsigned char const *)
{
    if (_expect_hello) {
        if (_header[0] != zmp::magic) {
            _malformed_hello = true;
            return fail (zmp::err_invalid_magic, NULL, EPROTO);
        }
        if (_header[1] != zmp::version) {
            _malformed_hello = true;
            return fail (zmp::err_version_mismatch, NULL, EPROTO);
        }
        if (_header[3] != 0 || _header[2] != zmp::flag_control) {
            _malformed_hello = true;
            return fail (zmp::err_flags_invalid, NULL, EPROTO);
        }
    }
    next_step (_header, zmp::header_size, &zmp_decoder_t::header_ready);
    return 1;
}

// ---- protocol rules -----------------------------------------------------------

zmq::zmp_proto_t::zmp_proto_t (int local_type_) :
    _local_type (local_type_),
    _hello_received (false),
    _ready (false),
    _peer_type (-1),
    _peer_id_size (0),
    _ttl_ds (0),
    _ctx_size (0),
    _error_code (0)
{
}

zmq::zmp_proto_t::result_t zmq::zmp_proto_t::fail (int code_,
                                                   const char *reason_)
{
    _error_code = code_;
    _error_reason = reason_ ? reason_ : zmp::error_text (code_);
    errno = EPROTO;
    return failed;
}

zmq::zmp_proto_t::result_t zmq::zmp_proto_t::on_frame (const msg_t &msg_)
{
    msg_t &m = const_cast<msg_t &> (msg_);
    const unsigned char *body = static_cast<const unsigned char *> (m.data ());
    const size_t size = m.size ();
    if (!_hello_received)
        return on_hello (body, size);
    if (m.flags () & msg_t::command)
        return on_control (body, size);
    if (!_ready)
        return fail (zmp::err_internal, "data before ready");
    return deliver;
}

zmq::zmp_proto_t::result_t
zmq::zmp_proto_t::on_hello (const unsigned char *body_, size_t size_)
{
    //  the decoder held the frame to HELLO's header rules and length
    if (size_ < zmp::hello_min_body || body_[0] != zmp::ctl_hello)
        return fail (zmp::err_internal, "missing hello");
    if (!zmp::types_compatible (_local_type, body_[1]))
        return fail (zmp::err_socket_type_mismatch, NULL);
    const size_t id_len = body_[2];
    if (size_ != zmp::hello_min_body + id_len)
        return fail (zmp::err_internal, "hello identity mismatch");
    _peer_type = body_[1];
    _peer_id_size = id_len;
    if (id_len)
        memcpy (_peer_id, body_ + zmp::hello_min_body, id_len);
    _hello_received = true;
    return consumed;
}

zmq::zmp_proto_t::result_t
zmq::zmp_proto_t::on_control (const unsigned char *body_, size_t size_)
{
    if (size_ < 1)
        return fail (zmp::err_internal, "unknown control");
    switch (body_[0]) {
        case zmp::ctl_ready:
            if (_ready)
                return fail (zmp::err_internal, "duplicate ready");
            if (size_ > 1 && !zmp::parse_properties (body_ + 1, size_ - 1, _props))
                return fail (zmp::err_internal, "ready metadata invalid");
            _ready = true;
            return now_ready;
        case zmp::ctl_heartbeat: {
            //  a bare HEARTBEAT byte is accepted and not answered
            if (size_ == 1)
                return consumed;
            if (size_ < 4)
                return fail (zmp::err_internal, "heartbeat too short");
            const size_t ctx_len = body_[3];
            if (ctx_len > zmp::heartbeat_max_ctx)
                return fail (zmp::err_internal, "heartbeat ctx too long");
            if (size_ != 4 + ctx_len)
                return fail (zmp::err_internal, "heartbeat length mismatch");
            _ttl_ds = get_uint16 (body_ + 1);
            _ctx_size = ctx_len;
            if (ctx_len)
                memcpy (_ctx, body_ + 4, ctx_len);
            return got_ping;
        }
        case zmp::ctl_heartbeat_ack:
            if (size_ < 2)
                return fail (zmp::err_internal, "heartbeat ack too short");
            if (size_ != 2 + static_cast<size_t> (body_[1]))
                return fail (zmp::err_internal, "heartbeat ack invalid");
            return consumed;
        case zmp::ctl_error:
            //  the peer gives up: its code is ours to answer with
            if (size_ < 3)
                return fail (zmp::err_internal, "error frame too short");
            if (size_ < 3 + static_cast<size_t> (body_[2]))
                return fail (zmp::err_internal, "error frame invalid");
            fail (body_[1], NULL);
            return peer_error;
        default:
            return fail (zmp::err_internal, "unknown control");
    }
}

size_t zmq::zmp_proto_t::pong (unsigned char *out_) const
{
    out_[0] = zmp::ctl_heartbeat_ack;
    out_[1] = static_cast<unsigned char> (_ctx_size);
    if (_ctx_size)
        memcpy (out_ + 2, _ctx, _ctx_size);
    return 2 + _ctx_size;
}
