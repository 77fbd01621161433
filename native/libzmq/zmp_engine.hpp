/*
 * zmp_engine.hpp - the engine NetZlink's libzmq makes for every tcp:// and
 * ipc:// connection of a PAIR, PUB, SUB, XPUB, XSUB, DEALER or ROUTER socket
 * in place of libzmq's zmtp_engine_t, so those sockets speak zlink 1.3's ZMP
 * v1 on the wire. libzmq's stream engine base does the I/O, the timers and
 * the session; this class does ZMP's handshake, control frames and errors.
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
#include "zmp_peers.hpp"

namespace zmq
{
class zmp_engine_t ZMQ_FINAL : public stream_engine_base_t
{
  public:
    zmp_engine_t (fd_t fd_,
                  const options_t &options_,
                  const endpoint_uri_pair_t &endpoint_uri_pair_);
    ~zmp_engine_t () ZMQ_OVERRIDE;

  protected:
    bool handshake () ZMQ_OVERRIDE;
    void plug_internal () ZMQ_OVERRIDE;
    void error (error_reason_t reason_) ZMQ_OVERRIDE;
    int decode_and_push (msg_t *msg_) ZMQ_OVERRIDE;
    int produce_ping_message (msg_t *msg_) ZMQ_OVERRIDE;
    int produce_pong_message (msg_t *msg_) ZMQ_OVERRIDE;

  private:
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

    ZMQ_NON_COPYABLE_NOR_MOVABLE (zmp_engine_t)
};
}

#endif
