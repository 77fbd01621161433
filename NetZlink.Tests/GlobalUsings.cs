// The namespaces most test files of this project use: the engine under test, the interop layer's
// handle tracker and constants, and the BCL's sockets, binary and concurrency helpers.
global using System.Buffers.Binary;
global using System.Collections.Concurrent;
global using System.Diagnostics;
global using System.Net;
global using System.Net.Sockets;
global using NetZlink.Engine;
global using NetZlink.Interop;
