// Receive backpressure: a handler that hands packets on to a slower consumer (EngineChannel) can
// make its shard stop reading its STREAM socket. The native socket reads from the kernel only when
// asked, so while the shard does not read, the kernel's receive buffers fill and TCP holds the
// peers back; nothing is buffered or dropped. Sends, posts and passes go on meanwhile.
//
// The pause is decided on the shard thread only: the handler calls PauseReceiving from a callback,
// and at the start of every pass the shard asks the handler's resume test whether it may read
// again. A consumer that makes room calls RequestPass, whose flag the shard checks before it
// sleeps, so a resume can never be missed. While paused, connect attempts neither start nor time
// out (their events would arrive through the socket it does not read); their deadlines move on by
// the paused time when reading resumes.
using System.Diagnostics;

namespace NetZlink.Engine;

public sealed partial class EngineShard
{
    /// <summary>How long a paused shard sleeps at most: sends the native socket queued are flushed at least this often.</summary>
    private const int PausedSleepMs = 10;

    private Func<bool>? _canResumeReceiving;
    private bool _receivePaused;
    private long _pausedAt;

    /// <summary>
    /// Installs the test a paused shard runs at the start of each pass (shard thread, or before the
    /// shard starts): true when it may read again.
    /// </summary>
    internal void SetResumeTest(Func<bool> canResume) => _canResumeReceiving = canResume;

    /// <summary>
    /// Shard thread (a handler callback): stop reading the socket after the current message, until
    /// the resume test says otherwise. Needs <see cref="SetResumeTest"/> first. True when it was reading until now.
    /// </summary>
    internal bool PauseReceiving()
    {
        Debug.Assert(_canResumeReceiving is not null, "a pause needs a resume test");
        if (_receivePaused)
        {
            return false;
        }

        _receivePaused = true;
        ObserveReceivePaused();
        _pausedAt = Stopwatch.GetTimestamp();
        return true;
    }

    /// <summary>Start of a pass: false while receiving stays paused.</summary>
    private bool ReceivingAllowed()
    {
        if (!_receivePaused)
        {
            return true;
        }

        if (!_canResumeReceiving!())
        {
            return false;
        }

        _receivePaused = false;
        long paused = Stopwatch.GetTimestamp() - _pausedAt;
        ShiftConnectDeadlines(paused);
        ShiftIdleClocks(paused);
        return true;
    }

    /// <summary>The poll's interest in the socket: none while paused, so unread input cannot keep waking the shard.</summary>
    private short SocketPollEvents => _receivePaused ? (short)0 : NetZlink.Interop.ZlinkConstants.POLLIN;
}
