using System.Buffers.Binary;
using System.Text;

namespace NetZlink.Services;

/// <summary>
/// zlink 1.3's service control protocol (core/src/services/discovery/discovery_protocol.hpp), as
/// frames: every message is multipart, its first frame the message id (u16), integers in their own
/// frames of exactly 2, 4 or 8 bytes. zlink writes integers in the host's byte order; every
/// platform zlink and NetZlink run on is little-endian, so this codec reads and writes
/// little-endian explicitly. Decoders are strict: a frame of the wrong size, a missing frame, an
/// extra frame, or text that is not UTF-8 is refused with a <see cref="ServiceProtocolException"/>
/// naming the message and the frame.
/// </summary>
internal static class ServiceProtocol
{
    public const ushort Register = 0x0001;
    public const ushort RegisterAck = 0x0002;
    public const ushort Unregister = 0x0003;
    public const ushort Heartbeat = 0x0004;
    public const ushort ServiceList = 0x0005;
    public const ushort RegistrySync = 0x0006;
    public const ushort UpdateWeight = 0x0007;

    /// <summary>Longest service name or endpoint accepted (zlink's C API copies them into 256-byte fields).</summary>
    public const int MaxTextLength = 255;

    /// <summary>Longest routing id (zlink_routing_id_t holds 255 bytes).</summary>
    public const int MaxRoutingIdLength = 255;

    private static readonly UTF8Encoding StrictUtf8 = new(false, true);

    public static byte[] U16(ushort value)
    {
        var b = new byte[2];
        BinaryPrimitives.WriteUInt16LittleEndian(b, value);
        return b;
    }

    public static byte[] U32(uint value)
    {
        var b = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(b, value);
        return b;
    }

    public static byte[] U64(ulong value)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(b, value);
        return b;
    }

    public static byte[] Text(string value) => Encoding.UTF8.GetBytes(value);

    /// <summary>The message id of a control message (its first frame), or a refusal.</summary>
    public static ushort ReadMessageId(IReadOnlyList<byte[]> frames, string what)
    {
        if (frames.Count == 0)
        {
            throw new ServiceProtocolException($"{what}: empty message (no frames)");
        }

        return ReadU16(frames, 0, what, "message id");
    }

    public static ushort ReadU16(IReadOnlyList<byte[]> frames, int index, string what, string field)
    {
        byte[] f = Frame(frames, index, what, field);
        if (f.Length != 2)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) has {f.Length} bytes, not 2");
        }

        return BinaryPrimitives.ReadUInt16LittleEndian(f);
    }

    public static uint ReadU32(IReadOnlyList<byte[]> frames, int index, string what, string field)
    {
        byte[] f = Frame(frames, index, what, field);
        if (f.Length != 4)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) has {f.Length} bytes, not 4");
        }

        return BinaryPrimitives.ReadUInt32LittleEndian(f);
    }

    public static ulong ReadU64(IReadOnlyList<byte[]> frames, int index, string what, string field)
    {
        byte[] f = Frame(frames, index, what, field);
        if (f.Length != 8)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) has {f.Length} bytes, not 8");
        }

        return BinaryPrimitives.ReadUInt64LittleEndian(f);
    }

    public static string ReadText(IReadOnlyList<byte[]> frames, int index, string what, string field, bool allowEmpty)
    {
        byte[] f = Frame(frames, index, what, field);
        if (f.Length == 0 && !allowEmpty)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) is empty");
        }

        if (f.Length > MaxTextLength)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) has {f.Length} bytes, more than {MaxTextLength}");
        }

        if (f.AsSpan().Contains((byte)0))
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) holds a NUL byte");
        }

        try
        {
            return StrictUtf8.GetString(f);
        }
        catch (DecoderFallbackException)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) is not UTF-8 text");
        }
    }

    private static byte[] Frame(IReadOnlyList<byte[]> frames, int index, string what, string field)
    {
        if (index >= frames.Count)
        {
            throw new ServiceProtocolException($"{what}: frame {index} ({field}) is missing (the message has {frames.Count} frames)");
        }

        return frames[index];
    }

    private static void ExpectCount(IReadOnlyList<byte[]> frames, int min, int max, string what)
    {
        if (frames.Count < min || frames.Count > max)
        {
            string want = min == max ? $"{min}" : $"{min} to {max}";
            throw new ServiceProtocolException($"{what}: {frames.Count} frames, not {want}");
        }
    }

    private static void CheckType(ushort type, string what)
    {
        if (type != (ushort)ServiceType.Gateway && type != (ushort)ServiceType.Spot)
        {
            throw new ServiceProtocolException($"{what}: service type {type} is neither 1 (gateway receiver) nor 2 (spot node)");
        }
    }

    // ---- Receiver -> Registry: REGISTER, UNREGISTER, HEARTBEAT, UPDATE_WEIGHT -------------------

    public static List<byte[]> EncodeRegistryRequest(ushort messageId, ServiceType type, string service, string endpoint, uint? weight)
    {
        var frames = new List<byte[]>(5) { U16(messageId), U16((ushort)type), Text(service), Text(endpoint) };
        if (weight is uint w)
        {
            frames.Add(U32(w));
        }

        return frames;
    }

    /// <summary>Decodes REGISTER (4 or 5 frames), UPDATE_WEIGHT (5), UNREGISTER and HEARTBEAT (4).</summary>
    public static RegistryRequest DecodeRegistryRequest(IReadOnlyList<byte[]> frames)
    {
        ushort id = ReadMessageId(frames, "registry request");
        string what = id switch
        {
            Register => "REGISTER",
            Unregister => "UNREGISTER",
            Heartbeat => "HEARTBEAT",
            UpdateWeight => "UPDATE_WEIGHT",
            _ => throw new ServiceProtocolException($"registry request: message id 0x{id:x4} is not REGISTER, UNREGISTER, HEARTBEAT or UPDATE_WEIGHT"),
        };
        switch (id)
        {
            case Register: ExpectCount(frames, 4, 5, what); break;
            case UpdateWeight: ExpectCount(frames, 5, 5, what); break;
            default: ExpectCount(frames, 4, 4, what); break;
        }

        ushort type = ReadU16(frames, 1, what, "service type");
        CheckType(type, what);
        string service = ReadText(frames, 2, what, "service name", allowEmpty: false);
        string endpoint = ReadText(frames, 3, what, "endpoint", allowEmpty: false);
        uint weight = frames.Count == 5 ? ReadU32(frames, 4, what, "weight") : 1;
        return new RegistryRequest(id, (ServiceType)type, service, endpoint, weight == 0 ? 1 : weight);
    }

    // ---- Registry -> Receiver: REGISTER_ACK -------------------------------------------------

    public static List<byte[]> EncodeRegisterAck(byte status, string endpoint, string error) =>
        [U16(RegisterAck), [status], Text(endpoint), Text(error)];

    public static RegisterAckMessage DecodeRegisterAck(IReadOnlyList<byte[]> frames)
    {
        const string what = "REGISTER_ACK";
        ushort id = ReadMessageId(frames, what);
        if (id != RegisterAck)
        {
            throw new ServiceProtocolException($"{what}: message id 0x{id:x4}, not 0x0002");
        }

        ExpectCount(frames, 2, 4, what);
        if (frames[1].Length != 1)
        {
            throw new ServiceProtocolException($"{what}: frame 1 (status) has {frames[1].Length} bytes, not 1");
        }

        string endpoint = frames.Count >= 3 ? ReadText(frames, 2, what, "endpoint", allowEmpty: true) : "";
        string error = frames.Count >= 4 ? ReadText(frames, 3, what, "error", allowEmpty: true) : "";
        return new RegisterAckMessage(frames[1][0], endpoint, error);
    }

    // ---- Registry -> Discovery and Registry -> Registry: SERVICE_LIST ---------------------------

    public static List<byte[]> EncodeServiceList(uint registryId, ulong listSeq, IReadOnlyList<ServiceListEntry> services)
    {
        var frames = new List<byte[]> { U16(ServiceList), U32(registryId), U64(listSeq), U32((uint)services.Count) };
        foreach (ServiceListEntry s in services)
        {
            frames.Add(U16((ushort)s.Type));
            frames.Add(Text(s.Name));
            frames.Add(U32((uint)s.Receivers.Count));
            foreach (ReceiverInfo r in s.Receivers)
            {
                frames.Add(Text(r.Endpoint));
                frames.Add(r.RoutingId.ToArray());
                frames.Add(U32(r.Weight));
            }
        }

        return frames;
    }

    /// <summary>Decodes SERVICE_LIST (or REGISTRY_SYNC, which has the same body).</summary>
    public static ServiceListMessage DecodeServiceList(IReadOnlyList<byte[]> frames)
    {
        const string what = "SERVICE_LIST";
        ushort id = ReadMessageId(frames, what);
        if (id != ServiceList && id != RegistrySync)
        {
            throw new ServiceProtocolException($"{what}: message id 0x{id:x4}, not 0x0005 or 0x0006");
        }

        uint registryId = ReadU32(frames, 1, what, "registry id");
        ulong listSeq = ReadU64(frames, 2, what, "list sequence");
        uint serviceCount = ReadU32(frames, 3, what, "service count");
        // Each service takes at least 3 frames: a count beyond what the message holds is refused
        // before anything is allocated for it.
        if (serviceCount > (frames.Count - 4) / 3)
        {
            throw new ServiceProtocolException($"{what}: service count {serviceCount} does not fit the {frames.Count - 4} frames that follow");
        }

        var services = new List<ServiceListEntry>((int)serviceCount);
        int index = 4;
        for (uint i = 0; i < serviceCount; i++)
        {
            ushort type = ReadU16(frames, index++, what, $"service {i} type");
            CheckType(type, what);
            string name = ReadText(frames, index++, what, $"service {i} name", allowEmpty: false);
            uint receiverCount = ReadU32(frames, index++, what, $"service {i} receiver count");
            if (receiverCount > (frames.Count - index) / 3)
            {
                throw new ServiceProtocolException($"{what}: service {i} receiver count {receiverCount} does not fit the {frames.Count - index} frames that follow");
            }

            var receivers = new List<ReceiverInfo>((int)receiverCount);
            for (uint p = 0; p < receiverCount; p++)
            {
                string endpoint = ReadText(frames, index++, what, $"service {i} receiver {p} endpoint", allowEmpty: false);
                byte[] rid = frames[index++];
                if (rid.Length > MaxRoutingIdLength)
                {
                    throw new ServiceProtocolException($"{what}: frame {index - 1} (service {i} receiver {p} routing id) has {rid.Length} bytes, more than {MaxRoutingIdLength}");
                }

                uint weight = ReadU32(frames, index++, what, $"service {i} receiver {p} weight");
                receivers.Add(new ReceiverInfo(name, endpoint, new RoutingId(rid), weight == 0 ? 1 : weight));
            }

            services.Add(new ServiceListEntry((ServiceType)type, name, receivers));
        }

        if (index != frames.Count)
        {
            throw new ServiceProtocolException($"{what}: {frames.Count - index} frames after the last service");
        }

        return new ServiceListMessage(registryId, listSeq, services);
    }
}

internal readonly record struct RegistryRequest(ushort MessageId, ServiceType Type, string Service, string Endpoint, uint Weight);

internal readonly record struct RegisterAckMessage(byte Status, string Endpoint, string Error);

internal sealed record ServiceListEntry(ServiceType Type, string Name, IReadOnlyList<ReceiverInfo> Receivers);

internal sealed record ServiceListMessage(uint RegistryId, ulong ListSeq, IReadOnlyList<ServiceListEntry> Services);
