/*
 * zmp_engine.hpp - the engine NetZlink's libzmq makes for every tcp:// and
 * ipc:// connection of a PAIR, PUB, SUB, XPUB, XSUB, DEALER or ROUTER socket
 * in place of libzmq's zmtp_engine_t, so those sockets speak zlink 1.3's ZMP
 * v1 on the wire. libzmq's stream engine base does the I/O, the timers and
 * the session; this class does ZMP's handshake, control frames and errors.
 *
 * Over tls://, ws:// and wss:// (tcp:// connections with a transport of
 * NetZlink's own under ZMP: TLS, the WebSocket upgrade and frames, see
 * zmp_transport.h) the engine reads and writes through that transport; its
 * handshake runs before the ZMP greeting goes out.
 *
 * Part of NetZlink, not of libzmq: scripts/libzmq.sh copies native/libzmq/
 * into the unpacked libzmq 4.3.4 source (src/) and patches
 * stream_connecter_base.cpp and stream_listener_base.cpp to create it.
 */
#ifndef __NETZLINK_ZMP_ENGINE_HPP_INCLUDED__
#define __NETZLINK_ZMP_ENGINE_HPP_INCLUDED__

#include <string>
#include <vector>

#include "stream_engine_base.hpp"
#include "zmp_codec.hpp"
#include "zmp_transport.h"
#include "zmp_peers.hpp"

namespace zmq
{
//  What a listener or connecter of a tls://, ws:// or wss:// endpoint knows
//  of the transport under its connections (inactive for tcp:// and ipc://):
//  the protocol, the ws path and Host, and the TLS context made from the
//  socket's TLS options when the endpoint was bound or connected.
class zmp_link_t
{
  public:
    zmp_link_t ();
    ~zmp_link_t ();

    //  tls, ws and wss
    static bool is_link_protocol (const std::string &protocol_);
    //  "host:port" of "host:port[/path]"
    static std::string host_port (const std::string &address_);

    //  address_ as given after "<protocol>://"; server_ for a bind. 0, or
    //  -1 with errno (EINVAL: the TLS options make no context).
    int init (const std::string &protocol_,
              const std::string &address_,
              const options_t &options_,
              bool server_);
    bool active () const { return !_protocol.empty (); }
    //  A bind's endpoint as reported (LAST_ENDPOINT) from the tcp:// one.
    void endpoint_name (std::string &tcp_endpoint_) const;

    std::string _protocol;
    std::string _address;
    std::string _path;
    void *_tls_ctx;
    bool _server;
    int _init_errno;

    ZMQ_NON_COPYABLE_NOR_MOVABLE (zmp_link_t)
};

class zmp_engine_t ZMQ_FINAL : public stream_engine_base_t
{
  public:
    zmp_engine_t (fd_t fd_,
                  const options_t &options_,
                  const endpoint_uri_pair_t &endpoint_uri_pair_,
                  const zmp_link_t *link_ = NULL);
    ~zmp_engine_t () ZMQ_OVERRIDE;

    void out_event () ZMQ_OVERRIDE;
    void timer_event (int id_) ZMQ_OVERRIDE;
    void terminate () ZMQ_OVERRIDE;

  protected:
    bool handshake () ZMQ_OVERRIDE;
    void plug_internal () ZMQ_OVERRIDE;
    void error (error_reason_t reason_) ZMQ_OVERRIDE;
    int decode_and_push (msg_t *msg_) ZMQ_OVERRIDE;
    int produce_ping_message (msg_t *msg_) ZMQ_OVERRIDE;
    int produce_pong_message (msg_t *msg_) ZMQ_OVERRIDE;
    int read (void *data_, size_t size_) ZMQ_OVERRIDE;
    int write (const void *data_, size_t size_) ZMQ_OVERRIDE;

  private:
    //  The transport's handshake is done (else errno: EAGAIN, or why it
    //  failed, reported once).
    bool transport_ready ();
    //  After transport I/O: output it holds wants POLLOUT, input it holds
    //  (where poll cannot see it) wants another in_event.
    void after_transport_io ();
    void cancel_more_input ();

    //  _next_msg while the handshake runs: nothing leaves the session yet
    int nothing_to_send (msg_t *msg_);
    //  READY received: announce the peer to the session and the socket
    bool handshake_complete ();
    //  A HEARTBEAT arrived: arm its ttl and queue the answer
    void ping_received ();
    //  Records why the connection fails; the ERROR frame carries it.
    void set_failure (int code_, const char *reason_);
    //  Best effort: what is left of the current output, then an ERROR
    //  frame, without waiting for the socket.
    void send_error_frame ();

    zmp_decoder_t *zmp_decoder ()
    {
        return static_cast<zmp_decoder_t *> (_decoder);
    }

    //  The peer table (zmp_peers.hpp): the connection is a peer of its
    //  socket from READY until it ends; these keep it there and count its
    //  messages.
    void peer_up (const unsigned char *id_, size_t size_);
    void peer_down ();
    int pull_and_count (msg_t *msg_);
    //  the id a ROUTER knows the peer by when its HELLO had none
    static size_t make_routing_id (unsigned char *id_);

    zmp_peer_t *_peer;
    zmp_proto_t _proto;
    //  HELLO and READY, sent first
    std::vector<unsigned char> _greeting;
    bool _ready;
    bool _pong_pending;
    int _heartbeat_timeout;
    int _fail_code;
    std::string _fail_reason;
    //  The failure is the peer's ERROR frame: the connection ends like a
    //  lost one (a connecting socket tries again), not as a protocol error.
    bool _peer_error;

    //  tls://, ws://, wss://: the transport (NULL for tcp:// and ipc://)
    zl_zt_t *_zt;
    bool _zt_ready;
    int _zt_errno;
    //  TLS waits the other way round (after_transport_io)
    bool _zt_write_blocked;
    bool _zt_read_blocked;
    enum
    {
        more_input_timer_id = 0x50
    };
    bool _has_more_input_timer;

    //  References to the base's _metadata taken in advance and not yet
    //  given to a message: one atomic add per metadata_ref_batch received
    //  messages instead of one per message, so the I/O thread seldom
    //  touches the counter the application thread drops references on
    //  (msg_t::close). Given back when the engine ends.
    enum
    {
        metadata_ref_batch = 256
    };
    int _metadata_refs;

    ZMQ_NON_COPYABLE_NOR_MOVABLE (zmp_engine_t)
};
}

#endif
