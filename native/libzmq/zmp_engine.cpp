/*
 * zmp_engine.cpp - ZMP v1 on libzmq's stream engine (see zmp_engine.hpp).
 *
 * A connection: both sides send HELLO (socket type, own routing id) and
 * READY (properties when ZMP_METADATA is set) at once. The first frame
 * received must be a HELLO from a compatible socket type; control frames
 * may follow until READY; then the session gets the peer's routing id (when
 * the socket wants it) and data flows. Any protocol error - a bad header, a
 * frame over MAXMSGSIZE, a refused socket type, a malformed control frame,
 * an ERROR from the peer - sends an ERROR frame (best effort) and drops the
 * connection as a protocol error, which libzmq's session does not retry;
 * a handshake that does not finish within HANDSHAKE_IVL does the same with
 * code 6 and is retried like a lost connection.
 */
#include "precompiled.hpp"
#include "zmp_engine.hpp"

#include <limits.h>
#include <string.h>

#include "err.hpp"
#include "likely.hpp"
#include "session_base.hpp"
#include "socket_base.hpp"
#include "wire.hpp"
#include "../include/zmq.h"

//  A step of libzmq's engine (_next_msg, _process_msg) from one of this
//  class's functions or of its base's protected ones.
typedef int (zmq::stream_engine_base_t::*step_t) (zmq::msg_t *);
template <typename F> static step_t step (F f_)
{
    return static_cast<step_t> (f_);
}

zmq::zmp_engine_t::zmp_engine_t (fd_t fd_,
                                 const options_t &options_,
                                 const endpoint_uri_pair_t &endpoint_uri_pair_) :
    stream_engine_base_t (fd_, options_, endpoint_uri_pair_, true),
    _peer (NULL),
    _proto (options_.type),
    _ready (false),
    _pong_pending (false),
    _heartbeat_timeout (0),
    _fail_code (0),
    _peer_error (false)
{
    if (_options.heartbeat_interval > 0) {
        _heartbeat_timeout = _options.heartbeat_timeout;
        if (_heartbeat_timeout == -1)
            _heartbeat_timeout = _options.heartbeat_interval;
    }
}

zmq::zmp_engine_t::~zmp_engine_t ()
{
    peer_down ();
}

static void append_frame (std::vector<unsigned char> &out_,
                          const std::vector<unsigned char> &body_)
{
    unsigned char header[zmq::zmp::header_size];
    zmq::zmp::put_header (header, zmq::zmp::flag_control,
                          static_cast<uint32_t> (body_.size ()));
    out_.insert (out_.end (), header, header + sizeof header);
    out_.insert (out_.end (), body_.begin (), body_.end ());
}

static void append_property (std::vector<unsigned char> &out_,
                             const char *name_,
                             const void *value_,
                             size_t size_)
{
    const size_t name_len = strlen (name_);
    out_.push_back (static_cast<unsigned char> (name_len));
    out_.insert (out_.end (), name_, name_ + name_len);
    unsigned char len[4];
    zmq::put_uint32 (len, static_cast<uint32_t> (size_));
    out_.insert (out_.end (), len, len + 4);
    const unsigned char *v = static_cast<const unsigned char *> (value_);
    out_.insert (out_.end (), v, v + size_);
}

void zmq::zmp_engine_t::plug_internal ()
{
    set_handshake_timer ();

    //  HELLO: type, this socket's routing id (NetZlink gives every socket
    //  one, as zlink does; see zsock.c)
    std::vector<unsigned char> hello;
    hello.push_back (zmp::ctl_hello);
    hello.push_back (static_cast<unsigned char> (_options.type));
    hello.push_back (_options.routing_id_size);
    hello.insert (hello.end (), _options.routing_id,
                  _options.routing_id + _options.routing_id_size);
    append_frame (_greeting, hello);

    //  READY: with ZMP_METADATA, Socket-Type and (DEALER, ROUTER) Identity
    std::vector<unsigned char> ready;
    ready.push_back (zmp::ctl_ready);
    if (_options.zmp_metadata) {
        const char *name = zmp::socket_type_name (_options.type);
        zmq_assert (name);
        append_property (ready, "Socket-Type", name, strlen (name));
        if (_options.type == ZMQ_DEALER || _options.type == ZMQ_ROUTER)
            append_property (ready, "Identity", _options.routing_id,
                             _options.routing_id_size);
    }
    append_frame (_greeting, ready);

    _encoder = new (std::nothrow) zmp_encoder_t (_options.out_batch_size);
    alloc_assert (_encoder);
    _decoder = new (std::nothrow)
      zmp_decoder_t (_options.in_batch_size, _options.maxmsgsize);
    alloc_assert (_decoder);

    _next_msg = step (&zmp_engine_t::nothing_to_send);
    _process_msg = step (&zmp_engine_t::decode_and_push);

    _outpos = &_greeting[0];
    _outsize = _greeting.size ();
    set_pollin ();
    set_pollout ();
    //  the greeting goes out now if the socket takes it
    out_event ();
}

int zmq::zmp_engine_t::nothing_to_send (msg_t *)
{
    errno = EAGAIN;
    return -1;
}

bool zmq::zmp_engine_t::handshake ()
{
    zmq_assert (_decoder);
    if (!_insize) {
        size_t bufsize = 0;
        _decoder->get_buffer (&_inpos, &bufsize);
        const int rc = read (_inpos, bufsize);
        if (rc == -1) {
            if (errno != EAGAIN)
                error (connection_error);
            return false;
        }
        _insize = static_cast<size_t> (rc);
        _decoder->resize_buffer (_insize);
    }

    while (_insize > 0) {
        size_t processed = 0;
        const int rc = _decoder->decode (_inpos, _insize, processed);
        zmq_assert (processed <= _insize);
        _inpos += processed;
        _insize -= processed;
        if (rc == 0)
            break;
        if (rc == -1) {
            zmp_decoder_t *d = zmp_decoder ();
            set_failure (d->error_code (), d->error_reason ());
            if (d->malformed_hello ())
                socket ()->event_handshake_failed_protocol (
                  _endpoint_uri_pair,
                  ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO);
            error (protocol_error);
            return false;
        }
        const bool was_hello = !_proto.hello_received ();
        const zmp_proto_t::result_t r = _proto.on_frame (*_decoder->msg ());
        if (was_hello)
            zmp_decoder ()->hello_done ();
        if (r == zmp_proto_t::failed || r == zmp_proto_t::peer_error) {
            set_failure (_proto.error_code (), _proto.error_reason ());
            _peer_error = r == zmp_proto_t::peer_error;
            error (protocol_error);
            return false;
        }
        if (r == zmp_proto_t::got_ping)
            ping_received ();
        if (r == zmp_proto_t::now_ready)
            return handshake_complete ();
    }
    return false;
}

bool zmq::zmp_engine_t::handshake_complete ()
{
    _ready = true;
    //  the pipe exists from here on (libzmq's base calls this again, which
    //  does nothing then)
    session ()->engine_ready ();

    if (_options.heartbeat_interval > 0 && !_has_heartbeat_timer) {
        add_timer (_options.heartbeat_interval, heartbeat_ivl_timer_id);
        _has_heartbeat_timer = true;
    }

    //  the id the socket knows the peer by: its HELLO's, or for a ROUTER
    //  one made up when that is empty (zmp_peers.cpp)
    const unsigned char *peer_id = _proto.peer_id ();
    size_t peer_id_size = _proto.peer_id_size ();
    unsigned char made_id[8];
    if (_options.recv_routing_id && peer_id_size == 0) {
        peer_id_size = make_routing_id (made_id);
        peer_id = made_id;
    }

    bool flush = false;
    if (_options.recv_routing_id) {
        msg_t id;
        int rc = id.init_size (peer_id_size);
        errno_assert (rc == 0);
        memcpy (id.data (), peer_id, peer_id_size);
        id.set_flags (msg_t::routing_id);
        rc = session ()->push_msg (&id);
        if (rc == -1 && errno == EAGAIN) {
            //  the pipe is going away already
            id.close ();
            return true;
        }
        errno_assert (rc == 0);
        flush = true;
    }
    if (_options.router_notify & ZMQ_NOTIFY_CONNECT) {
        msg_t notification;
        notification.init ();
        const int rc = session ()->push_msg (&notification);
        if (rc == -1 && errno == EAGAIN)
            return true;
        errno_assert (rc == 0);
        flush = true;
    }
    if (flush)
        session ()->flush ();

    //  Message properties: the peer's address (libzmq's) and its READY
    //  properties (Socket-Type only when the peer set ZMP_METADATA, as in
    //  zlink)
    properties_t properties;
    init_properties (properties);
    const metadata_t::dict_t &peer = _proto.peer_properties ();
    properties.insert (peer.begin (), peer.end ());
    zmq_assert (_metadata == NULL);
    if (!properties.empty ()) {
        _metadata = new (std::nothrow) metadata_t (properties);
        alloc_assert (_metadata);
    }

    if (_has_handshake_timer) {
        cancel_timer (handshake_timer_id);
        _has_handshake_timer = false;
    }
    peer_up (peer_id, peer_id_size);
    {
        //  CONNECTION_READY carries the peer's routing id
        zmp_event_peer_t with_id (ZMQ_EVENT_HANDSHAKE_SUCCEEDED,
                                  _peer->info.id, _peer->info.id_size);
        socket ()->event_handshake_succeeded (_endpoint_uri_pair, 0);
    }

    //  Output resumes from the poller once libzmq's base has left its
    //  handshake state (a write from here would stop polling for output
    //  after one batch); a HEARTBEAT that came before READY is answered
    //  first.
    if (_pong_pending) {
        _pong_pending = false;
        _next_msg = step (&zmp_engine_t::produce_pong_message);
    } else
        _next_msg = step (&zmp_engine_t::pull_and_count);
    _output_stopped = false;
    set_pollout ();
    return true;
}

int zmq::zmp_engine_t::decode_and_push (msg_t *msg_)
{
    //  any frame from the peer shows it is alive
    if (_has_timeout_timer) {
        _has_timeout_timer = false;
        cancel_timer (heartbeat_timeout_timer_id);
    }
    if (_has_ttl_timer) {
        _has_ttl_timer = false;
        cancel_timer (heartbeat_ttl_timer_id);
    }

    const zmp_proto_t::result_t r = _proto.on_frame (*msg_);
    switch (r) {
        case zmp_proto_t::failed:
        case zmp_proto_t::peer_error:
            set_failure (_proto.error_code (), _proto.error_reason ());
            _peer_error = r == zmp_proto_t::peer_error;
            errno = EPROTO;
            return -1;
        case zmp_proto_t::got_ping:
            ping_received ();
            return 0;
        case zmp_proto_t::consumed:
        case zmp_proto_t::now_ready:
            return 0;
        case zmp_proto_t::deliver:
            break;
    }

    //  an IDENTITY frame only means something to a socket that takes
    //  routing ids; others drop it
    if ((msg_->flags () & msg_t::routing_id) && !_options.recv_routing_id)
        return 0;

    if (!(msg_->flags () & (msg_t::more | msg_t::routing_id)))
        zmp_peer_received (_peer);
    if (_metadata)
        msg_->set_metadata (_metadata);
    if (session ()->push_msg (msg_) == -1) {
        if (errno == EAGAIN)
            _process_msg = step (&zmp_engine_t::push_one_then_decode_and_push);
        return -1;
    }
    return 0;
}

void zmq::zmp_engine_t::ping_received ()
{
    const uint16_t remote = _proto.ttl_ds ();
    const uint16_t local = _options.heartbeat_ttl;
    //  zlink's rule: the smaller of the two ttls, where 0 is "none"
    const uint16_t ttl =
      local == 0 ? remote : remote == 0 ? 0 : (local < remote ? local : remote);
    if (!_has_ttl_timer && ttl > 0) {
        add_timer (static_cast<int> (ttl) * 100, heartbeat_ttl_timer_id);
        _has_ttl_timer = true;
    }
    if (!_ready) {
        _pong_pending = true;
        return;
    }
    _next_msg = step (&zmp_engine_t::produce_pong_message);
    restart_output ();
}

int zmq::zmp_engine_t::produce_pong_message (msg_t *msg_)
{
    unsigned char body[2 + zmp::heartbeat_max_ctx];
    const size_t size = _proto.pong (body);
    const int rc = msg_->init_size (size);
    errno_assert (rc == 0);
    memcpy (msg_->data (), body, size);
    msg_->set_flags (msg_t::command);
    _next_msg = step (&zmp_engine_t::pull_and_count);
    return 0;
}

int zmq::zmp_engine_t::produce_ping_message (msg_t *msg_)
{
    //  HEARTBEAT with this socket's ttl and no context
    const int rc = msg_->init_size (4);
    errno_assert (rc == 0);
    unsigned char *p = static_cast<unsigned char *> (msg_->data ());
    p[0] = zmp::ctl_heartbeat;
    put_uint16 (p + 1, _options.heartbeat_ttl);
    p[3] = 0;
    msg_->set_flags (msg_t::command);
    _next_msg = _ready ? step (&zmp_engine_t::pull_and_count)
                       : step (&zmp_engine_t::nothing_to_send);
    if (!_has_timeout_timer && _heartbeat_timeout > 0) {
        add_timer (_heartbeat_timeout, heartbeat_timeout_timer_id);
        _has_timeout_timer = true;
    }
    return 0;
}

void zmq::zmp_engine_t::set_failure (int code_, const char *reason_)
{
    if (code_ == 0) {
        code_ = zmp::err_internal;
        reason_ = NULL;
    }
    _fail_code = code_;
    _fail_reason = reason_ && *reason_ ? reason_ : zmp::error_text (code_);
}

void zmq::zmp_engine_t::error (error_reason_t reason_)
{
    if (reason_ == timeout_error) {
        if (!_ready)
            set_failure (zmp::err_handshake_timeout, NULL);
        else if (_fail_code == 0)
            set_failure (zmp::err_internal, NULL);
    } else if (reason_ == protocol_error && _fail_code == 0) {
        zmp_decoder_t *d = zmp_decoder ();
        if (d && d->error_code ())
            set_failure (d->error_code (), d->error_reason ());
        else
            set_failure (zmp::err_internal, NULL);
    }
    if (reason_ == timeout_error || reason_ == protocol_error)
        send_error_frame ();
    //  The peer's ERROR (e.g. a frame of ours over its MAXMSGSIZE) is
    //  answered as zlink does, with its code; then this side goes on as after
    //  a lost connection (a connect is retried), as NetZlink's libzmq sockets
    //  did before ZMP when a peer dropped them. zlink 1.3 does not retry.
    if (reason_ == protocol_error && _peer_error)
        reason_ = connection_error;
    //  The peer leaves the table before DISCONNECTED is reported, which
    //  carries its routing id (the base deletes this engine).
    unsigned char id[sizeof _peer->info.id];
    size_t id_size = 0;
    if (_peer) {
        id_size = _peer->info.id_size;
        memcpy (id, _peer->info.id, id_size);
    }
    peer_down ();
    zmp_event_peer_t with_id (ZMQ_EVENT_DISCONNECTED, id, id_size);
    stream_engine_base_t::error (reason_);
}

void zmq::zmp_engine_t::send_error_frame ()
{
    //  finish the frame being written first, so the ERROR is a frame of its
    //  own; give up if the socket will not take it now
    while (_outsize > 0) {
        const int n = write (_outpos, _outsize);
        if (n <= 0)
            return;
        _outpos += n;
        _outsize -= n;
    }
    const size_t reason_len =
      _fail_reason.size () > UCHAR_MAX ? UCHAR_MAX : _fail_reason.size ();
    unsigned char frame[zmp::header_size + 3 + UCHAR_MAX];
    zmp::put_header (frame, zmp::flag_control,
                     static_cast<uint32_t> (3 + reason_len));
    frame[zmp::header_size] = zmp::ctl_error;
    frame[zmp::header_size + 1] = static_cast<unsigned char> (_fail_code);
    frame[zmp::header_size + 2] = static_cast<unsigned char> (reason_len);
    memcpy (frame + zmp::header_size + 3, _fail_reason.data (), reason_len);
    const size_t total = zmp::header_size + 3 + reason_len;
    size_t done = 0;
    while (done < total) {
        const int n = write (frame + done, total - done);
        if (n <= 0)
            return;
        done += n;
    }
}
