// The extent of one dotnet-client callback on its thread: holds the thread's gate and closes the
// allocation bracket ClientThreadState.Enter opened. A ref struct, so `using` costs no allocation.
namespace NetZlink.Stress.DotnetStack;

/// <summary>Returned by <see cref="ClientThreadState.Enter"/>; dispose it when the callback ends.</summary>
internal ref struct CallbackScope
{
    private readonly ClientThreadState _state;
    private Lock.Scope _held;

    internal CallbackScope(ClientThreadState state, Lock.Scope held)
    {
        _state = state;
        _held = held;
    }

    /// <summary>Ends the allocation bracket, then releases the gate.</summary>
    public void Dispose()
    {
        _state.Exit();
        _held.Dispose();
    }
}
