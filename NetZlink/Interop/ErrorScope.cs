// What a failed call was working on, which picks the exception type when the errno alone does not.
namespace NetZlink.Interop;

internal enum ErrorScope
{
    General,
    Endpoint,
    Option,
}
