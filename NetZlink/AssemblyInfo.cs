// Assembly-wide attributes of the binding.
using System.Runtime.CompilerServices;

// Every native signature is blittable (pointers, integers, blittable structs), so the runtime
// never needs to marshal anything; this makes that a compile-time guarantee.
[assembly: DisableRuntimeMarshalling]
