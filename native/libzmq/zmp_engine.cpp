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

//  The transport's functions are libzlink's (native/src/zmp_transport.c),
//  linked into the same libzlink.so. A program that links libzmq.a on its
//  own (the pair_latency benchmark) has none of them: weak references are
//  NULL there, and tls://, ws:// and wss:// are EPROTONOSUPPORT.
#pragma weak zl_zt_tls_ctx
#pragma weak zl_zt_tls_ctx_free
#pragma weak zl_zt_new
#pragma weak zl_zt_free
#pragma weak zl_zt_handshake
#pragma weak zl_zt_want_write
#pragma weak zl_zt_tls_failure
#pragma weak zl_zt_recv
#pragma weak zl_zt_send
#pragma weak zl_zt_flush
#pragma weak zl_zt_out_pending
#pragma weak zl_zt_in_pending
#pragma weak zl_zt_crossed

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

static std::string host_port_of (const std::string &address_)
{
    return zmq::zmp_link_t::host_port (address_);
}

zmq::zmp_engine_t::zmp_engine_t (fd_t fd_,
                                 const options_t &options_,
                                 const endpoint_uri_pair_t &endpoint_uri_pair_,
                                 const zmp_link_t *link_) :
    stream_engine_base_t (fd_, options_, endpoint_uri_pair_, true),
    _peer (NULL),
    _proto (options_.type),
    _ready (false),
    _pong_pending (false),
    _heartbeat_timeout (0),
    _fail_code (0),
    _peer_error (false),
    _zt (NULL),
    _zt_ready (true),
    _zt_errno (0),
    _zt_write_blocked (false),
    _zt_read_blocked (false),
    _has_more_input_timer (false),
    _metadata_refs (0)
{
    if (_options.heartbeat_interval > 0) {
        _heartbeat_timeout = _options.heartbeat_timeout;
        if (_heartbeat_timeout == -1)
            _heartbeat_timeout = _options.heartbeat_interval;
    }
    if (link_ && link_->active ()) {
        _zt_ready = false;
        const bool tls = link_->_protocol != "ws";
        const bool ws = link_->_protocol != "tls";
        if (tls && !link_->_tls_ctx)
            _zt_errno = link_->_init_errno ? link_->_init_errno : EINVAL;
        else {
            _zt = zl_zt_new (fd_, link_->_server, tls ? link_->_tls_ctx : NULL,
                             _options.zl_tls_hostname.c_str (), ws,
                             link_->_path.c_str (),
                             host_port_of (link_->_address).c_str ());
            if (!_zt)
                _zt_errno = errno;
        }
    }
}

zmq::zmp_engine_t::~zmp_engine_t ()
{
    //  before libzmq's base closes the descriptor: a close frame and
    //  close_notify when the connection was up and is being closed here
    if (_zt)
        zl_zt_free (_zt, _zt_ready && _fail_code == 0);
    peer_down ();
    //  the references not handed out; the base's own one keeps the
    //  metadata until its destructor
    if (_metadata && _metadata_refs > 0) {
        const bool last = _metadata->drop_refs (_metadata_refs);
        zmq_assert (!last);
    }
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
    if (_metadata) {
        if (unlikely (_metadata_refs == 0)) {
            _metadata->add_refs (metadata_ref_batch);
            _metadata_refs = metadata_ref_batch;
        }
        msg_->set_metadata_ref (_metadata);
        _metadata_refs--;
    }
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
    const bool broke_protocol = reason_ == protocol_error;
    if (reason_ == protocol_error && _peer_error)
        reason_ = connection_error;
    cancel_more_input ();
    //  The peer leaves the table before DISCONNECTED is reported, which
    //  carries its routing id (the base deletes this engine).
    unsigned char id[sizeof _peer->info.id];
    size_t id_size = 0;
    if (_peer) {
        id_size = _peer->info.id_size;
        memcpy (id, _peer->info.id, id_size);
    }
    peer_down ();
    //  Why, by zlink 1.3's rule: a connection that had not finished its
    //  handshake, or where either side broke the protocol (an ERROR sent or
    //  received), ended with HANDSHAKE_FAILED (3); any other end (the peer closed or reset it, a heartbeat or handshake
    //  timeout) with TRANSPORT_ERROR (4). A context shutdown or a close of
    //  this socket ends the engine without an error, so without DISCONNECTED.
    const int disconnect_reason =
      !_ready || broke_protocol ? 3 : 4;
    zmp_event_peer_t with_id (ZMQ_EVENT_DISCONNECTED, id, id_size,
                              disconnect_reason);
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

//  ---- tls://, ws:// and wss:// -------------------------------------------

zmq::zmp_link_t::zmp_link_t () :
    _tls_ctx (NULL), _server (false), _init_errno (0)
{
}

zmq::zmp_link_t::~zmp_link_t ()
{
    if (_tls_ctx)
        zl_zt_tls_ctx_free (_tls_ctx);
}

bool zmq::zmp_link_t::is_link_protocol (const std::string &protocol_)
{
    return protocol_ == "tls" || protocol_ == "ws" || protocol_ == "wss";
}

std::string zmq::zmp_link_t::host_port (const std::string &address_)
{
    //  a path starts at the first '/' (none occurs in a host or a port)
    return address_.substr (0, address_.find ('/'));
}

int zmq::zmp_link_t::init (const std::string &protocol_,
                           const std::string &address_,
                           const options_t &options_,
                           bool server_)
{
    zmq_assert (is_link_protocol (protocol_));
    if (!zl_zt_new || !zl_zt_tls_ctx) {
        errno = EPROTONOSUPPORT;
        _init_errno = errno;
        return -1;
    }
    _protocol = protocol_;
    _address = address_;
    _server = server_;
    const size_t slash = address_.find ('/');
    _path = slash == std::string::npos ? "/" : address_.substr (slash);
    for (size_t i = 0; i < _path.size (); i++)
        if (static_cast<unsigned char> (_path[i]) <= 0x20
            || static_cast<unsigned char> (_path[i]) >= 0x7f) {
            //  it goes into the request line as it is
            errno = EINVAL;
            return -1;
        }
    if (protocol_ == "ws")
        return 0;
    zl_tls_conf_t conf;
    conf.cert = options_.zl_tls_cert.c_str ();
    conf.key = options_.zl_tls_key.c_str ();
    conf.ca = options_.zl_tls_ca.c_str ();
    conf.password = options_.zl_tls_password.c_str ();
    conf.verify = options_.zl_tls_verify;
    conf.require_client_cert = options_.zl_tls_require_client_cert;
    conf.trust_system = options_.zl_tls_trust_system;
    _tls_ctx = zl_zt_tls_ctx (&conf, server_ ? 1 : 0);
    if (!_tls_ctx) {
        _init_errno = errno;
        return -1;
    }
    return 0;
}

void zmq::zmp_link_t::endpoint_name (std::string &tcp_endpoint_) const
{
    //  tcp_endpoint_ is "tcp://<address>:<port>"
    const std::string rest = tcp_endpoint_.substr (6);
    if (_protocol == "tls") {
        tcp_endpoint_ = "tls://" + rest;
        return;
    }
    //  ws, wss: as zlink 1.3 reports them, the host as given, the real
    //  port and the path
    const std::string hp = host_port (_address);
    const size_t colon = hp.rfind (':');
    const std::string host =
      colon == std::string::npos ? hp : hp.substr (0, colon);
    tcp_endpoint_ =
      _protocol + "://" + host + rest.substr (rest.rfind (':')) + _path;
}

bool zmq::zmp_engine_t::transport_ready ()
{
    if (likely (_zt_ready))
        return true;
    int rc = -1;
    if (_zt) {
        rc = zl_zt_handshake (_zt);
        if (rc < 0)
            _zt_errno = errno;
    }
    if (rc > 0) {
        _zt_ready = true;
        //  the greeting waits; the peer's first bytes may have come with the
        //  end of the handshake, where poll does not see them
        set_pollout ();
        after_transport_io ();
        return true;
    }
    if (rc == 0) {
        if (zl_zt_want_write (_zt))
            set_pollout ();
        errno = EAGAIN;
        return false;
    }
    //  failed: keep the reason for ZLINK_TLS_LAST_ERROR and
    //  ZLINK_TLS_LAST_VERIFY_RESULT (shared by every copy of the socket's
    //  options)
    if (_zt) {
        int verify = 0;
        const char *why = zl_zt_tls_failure (_zt, &verify);
        if (why && *why && _options.zl_tls_report) {
            scoped_lock_t lock (_options.zl_tls_report->sync);
            _options.zl_tls_report->error = why;
            _options.zl_tls_report->verify = verify;
        }
    }
    errno = _zt_errno ? _zt_errno : EPROTO;
    return false;
}

void zmq::zmp_engine_t::after_transport_io ()
{
    //  TLS waiting the other way round (a renegotiation, a key update): a
    //  write that waits for input stops POLLOUT (it would spin) until a read
    //  came; a read that waits for the socket to take output is retried
    //  from out_event
    const int crossed = zl_zt_crossed (_zt);
    if (crossed & 2) {
        _zt_write_blocked = true;
        reset_pollout ();
    }
    if (crossed & 1) {
        _zt_read_blocked = true;
        set_pollout ();
    }
    if (zl_zt_out_pending (_zt) && !_zt_write_blocked)
        set_pollout ();
    if (zl_zt_in_pending (_zt) && !_has_more_input_timer) {
        //  at once, from the I/O thread's loop
        add_timer (0, more_input_timer_id);
        _has_more_input_timer = true;
    }
}

void zmq::zmp_engine_t::cancel_more_input ()
{
    if (_has_more_input_timer) {
        cancel_timer (more_input_timer_id);
        _has_more_input_timer = false;
    }
}

int zmq::zmp_engine_t::read (void *data_, size_t size_)
{
    if (!_zt && _zt_ready)
        return stream_engine_base_t::read (data_, size_);
    if (!transport_ready ())
        return -1;
    const ssize_t n = zl_zt_recv (_zt, data_, size_);
    const int e = errno;
    if (_zt_write_blocked) {
        //  input came: the write that waited for it may go on
        _zt_write_blocked = false;
        set_pollout ();
    }
    after_transport_io ();
    if (n == 0) {
        errno = EPIPE;
        return -1;
    }
    errno = e;
    return n < 0 ? -1 : static_cast<int> (n);
}

int zmq::zmp_engine_t::write (const void *data_, size_t size_)
{
    if (!_zt && _zt_ready)
        return stream_engine_base_t::write (data_, size_);
    if (!transport_ready ()) {
        if (errno == EAGAIN) {
            //  the transport's handshake waits for input: no POLLOUT until
            //  it wants to write or is done
            if (!_zt || !zl_zt_want_write (_zt))
                reset_pollout ();
            return 0;
        }
        //  the failure surfaces where the base looks for it, in a read
        if (!_has_more_input_timer) {
            add_timer (0, more_input_timer_id);
            _has_more_input_timer = true;
        }
        return -1;
    }
    const ssize_t n = zl_zt_send (_zt, data_, size_);
    after_transport_io ();
    if (n < 0 && !_has_more_input_timer) {
        add_timer (0, more_input_timer_id);
        _has_more_input_timer = true;
    }
    return n < 0 ? -1 : static_cast<int> (n);
}

void zmq::zmp_engine_t::out_event ()
{
    if (_zt_read_blocked) {
        _zt_read_blocked = false;
        if (!_has_more_input_timer) {
            add_timer (0, more_input_timer_id);
            _has_more_input_timer = true;
        }
    }
    //  what the transport holds goes before anything new
    if (_zt && _zt_ready && zl_zt_out_pending (_zt)) {
        const int rc = zl_zt_flush (_zt);
        if (rc == 0) {
            after_transport_io ();
            return;
        }
        if (rc < 0) {
            reset_pollout ();
            if (!_has_more_input_timer) {
                add_timer (0, more_input_timer_id);
                _has_more_input_timer = true;
            }
            return;
        }
    }
    stream_engine_base_t::out_event ();
}

void zmq::zmp_engine_t::timer_event (int id_)
{
    if (id_ != more_input_timer_id) {
        stream_engine_base_t::timer_event (id_);
        return;
    }
    _has_more_input_timer = false;
    //  input the transport holds, or its failure; a stopped input is read
    //  again by restart_input
    if (!_input_stopped)
        in_event ();
}

void zmq::zmp_engine_t::terminate ()
{
    cancel_more_input ();
    stream_engine_base_t::terminate ();
}
