/*
 * zmp_codec.hpp - NetZlink's ZMP v1 framing for libzmq's socket types: the
 * 8-byte frame header, the frame encoder and decoder that libzmq's stream
 * engine drives, and zmp_proto_t, the per-connection protocol rules
 * (HELLO, READY, HEARTBEAT, ERROR) kept apart from any I/O so the fuzz
 * target can run them on arbitrary input.
 *
 * Part of NetZlink, not of libzmq: scripts/libzmq.sh copies native/libzmq/
 * into the unpacked libzmq 4.3.4 source (src/) before building it.
 *
 * Wire format (ZMP v1, as zlink 1.3 speaks it):
 *   header  magic 0x5A | version 0x01 | flags | reserved 0x00 | size u32 BE
 *   flags   MORE 0x01, CONTROL 0x02, IDENTITY 0x04, SUBSCRIBE 0x08,
 *           CANCEL 0x10 (nothing else)
 *   control frames (CONTROL set; first body byte is the type)
 *     HELLO 0x01          socket type, routing id length, routing id
 *     HEARTBEAT 0x02      ttl u16 BE (deciseconds), ctx length (<= 16), ctx
 *     HEARTBEAT_ACK 0x03  ctx length, ctx
 *     READY 0x04          properties: name length u8, name, value length
 *                         u32 BE, value (may be none)
 *     ERROR 0x05          code, reason length, reason
 */
#ifndef __NETZLINK_ZMP_CODEC_HPP_INCLUDED__
#define __NETZLINK_ZMP_CODEC_HPP_INCLUDED__

#include <stddef.h>
#include <string>

#include "decoder.hpp"
#include "decoder_allocators.hpp"
#include "encoder.hpp"
#include "metadata.hpp"
#include "msg.hpp"
#include "stdint.hpp"

namespace zmq
{
namespace zmp
{
enum
{
    magic = 0x5a,
    version = 0x01,
    header_size = 8
};

enum
{
    flag_more = 0x01,
    flag_control = 0x02,
    flag_identity = 0x04,
    flag_subscribe = 0x08,
    flag_cancel = 0x10,
    flag_all = 0x1f
};

enum
{
    ctl_hello = 0x01,
    ctl_heartbeat = 0x02,
    ctl_heartbeat_ack = 0x03,
    ctl_ready = 0x04,
    ctl_error = 0x05
};

//  ERROR frame codes
enum
{
    err_invalid_magic = 0x01,
    err_version_mismatch = 0x02,
    err_flags_invalid = 0x03,
    err_body_too_large = 0x04,
    err_socket_type_mismatch = 0x05,
    err_handshake_timeout = 0x06,
    err_internal = 0x7f
};

//  HELLO's body: type byte, socket type, id length, id (0..255 bytes)
enum
{
    hello_min_body = 3,
    hello_max_body = 3 + 255,
    heartbeat_max_ctx = 16
};

//  The reason text that goes with a code when there is no better one.
const char *error_text (int code_);

//  Whether a socket of local_type_ talks to a peer of peer_type_
//  (PAIR-PAIR, DEALER/ROUTER among themselves, PUB/XPUB with SUB/XSUB).
bool types_compatible (int local_type_, int peer_type_);

//  The property value zlink puts in READY's Socket-Type ("PAIR", ...), or
//  NULL for a type ZMP does not have.
const char *socket_type_name (int type_);

//  Writes a header for a body of size_ bytes; returns header_size.
size_t put_header (unsigned char *out_, unsigned char flags_, uint32_t size_);

//  The ZMP flags of a message as libzmq's pipes carry it.
unsigned char wire_flags (const msg_t &msg_);

//  Parses READY's property list into out_. False when malformed.
bool parse_properties (const unsigned char *p_,
                       size_t size_,
                       metadata_t::dict_t &out_);
}

//  Encodes messages as ZMP frames: header, then the body straight from the
//  message.
class zmp_encoder_t ZMQ_FINAL : public encoder_base_t<zmp_encoder_t>
{
  public:
    explicit zmp_encoder_t (size_t bufsize_);
    ~zmp_encoder_t () ZMQ_OVERRIDE;

  private:
    void header_ready ();
    void body_ready ();

    unsigned char _header[zmp::header_size];

    ZMQ_NON_COPYABLE_NOR_MOVABLE (zmp_encoder_t)
};

//  Decodes ZMP frames into messages (MORE, CONTROL as command, IDENTITY as
//  routing_id, SUBSCRIBE / CANCEL as libzmq's subscribe / cancel). Until
//  hello_done () the first frame is held to HELLO's header rules. On -1 from
//  decode (), error_code () and error_reason () say what was wrong.
class zmp_decoder_t ZMQ_FINAL
    : public decoder_base_t<zmp_decoder_t, shared_message_memory_allocator>
{
  public:
    zmp_decoder_t (size_t bufsize_, int64_t maxmsgsize_);
    ~zmp_decoder_t () ZMQ_OVERRIDE;

    msg_t *msg () ZMQ_FINAL { return &_in_progress; }

    void hello_done () { _expect_hello = false; }
    int error_code () const { return _error_code; }
    const char *error_reason () const { return _error_reason; }
    //  The failed frame was the first one and its magic, version or flags
    //  were wrong (a malformed HELLO, reported to the monitor as such).
    bool malformed_hello () const { return _malformed_hello; }

  private:
    int header_ready (unsigned char const *);
    int body_ready (unsigned char const *);
    int fail (int code_, const char *reason_, int errno_);

    unsigned char _header[zmp::header_size];
    msg_t _in_progress;
    const uint64_t _max_body;
    bool _expect_hello;
    int _error_code;
    const char *_error_reason;
    bool _malformed_hello;

    ZMQ_NON_COPYABLE_NOR_MOVABLE (zmp_decoder_t)
};

//  What a connection does with each decoded frame, without the I/O: the
//  handshake's order (HELLO first, then control frames until READY, no data
//  before READY), each control frame's layout, and what the peer told.
class zmp_proto_t
{
  public:
    enum result_t
    {
        deliver,   //  a data, subscribe or cancel frame for the session
        consumed,  //  a control frame handled here (HELLO, ACK, ...)
        now_ready, //  READY arrived: the handshake is complete
        got_ping,  //  HEARTBEAT: answer with pong (), ttl_ds () applies
        failed,    //  protocol error: error_code (), error_reason ()
        peer_error //  a well-formed ERROR from the peer (its code in
                   //  error_code ()): the peer is closing the connection
    };

    explicit zmp_proto_t (int local_type_);

    result_t on_frame (const msg_t &msg_);

    bool hello_received () const { return _hello_received; }
    bool ready () const { return _ready; }
    int peer_type () const { return _peer_type; }
    const unsigned char *peer_id () const { return _peer_id; }
    size_t peer_id_size () const { return _peer_id_size; }
    const metadata_t::dict_t &peer_properties () const { return _props; }
    //  The last HEARTBEAT's ttl (deciseconds) and its HEARTBEAT_ACK body.
    uint16_t ttl_ds () const { return _ttl_ds; }
    size_t pong (unsigned char *out_) const;
    int error_code () const { return _error_code; }
    const char *error_reason () const { return _error_reason.c_str (); }

  private:
    result_t fail (int code_, const char *reason_);
    result_t on_hello (const unsigned char *body_, size_t size_);
    result_t on_control (const unsigned char *body_, size_t size_);

    const int _local_type;
    bool _hello_received;
    bool _ready;
    int _peer_type;
    unsigned char _peer_id[255];
    size_t _peer_id_size;
    metadata_t::dict_t _props;
    uint16_t _ttl_ds;
    unsigned char _ctx[zmp::heartbeat_max_ctx];
    size_t _ctx_size;
    int _error_code;
    std::string _error_reason;
};
}

#endif
