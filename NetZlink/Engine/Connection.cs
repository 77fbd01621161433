// A handle on one engine connection, handed to handlers; cheap to copy, never allocated.
namespace NetZlink.Engine;

/// <summary>
/// Identifies a connection of a <see cref="ClientEngine"/>: its global index (0..count-1), the shard
/// that owns it and its slot there. Handlers keep per-connection state in arrays indexed by
/// <see cref="Slot"/> (per shard) or <see cref="Index"/> (engine-wide).
/// </summary>
public readonly record struct Connection(int Index, int Shard, int Slot);
