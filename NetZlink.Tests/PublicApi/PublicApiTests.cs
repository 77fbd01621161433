// The library's public surface is deliberate: every public type and member is listed, one line
// each, in NetZlink/PublicAPI.txt, and this test fails on any difference (a symbol added, removed
// or changed), printing the lines that differ. After a deliberate change, run the test with
// NETZLINK_ACCEPT_API=1 to rewrite the file, and commit it with the change.
using System.Reflection;

namespace NetZlink.Tests.PublicApi;

[TestFixture]
public sealed class PublicApiTests
{
    private const string AcceptVariable = "NETZLINK_ACCEPT_API";

    [Test]
    public void ThePublicSurface_IsExactlyTheCheckedInList()
    {
        string file = Path.Combine(RepositoryRoot(), "NetZlink", "PublicAPI.txt");
        List<string> actual = Describe(typeof(Context).Assembly);
        if (Environment.GetEnvironmentVariable(AcceptVariable) == "1")
        {
            File.WriteAllLines(file, actual);
            Assert.Pass($"{file} rewritten: {actual.Count} lines");
        }

        List<string> expected = File.Exists(file) ? File.ReadAllLines(file).Where(l => l.Length > 0).ToList() : [];
        List<string> added = actual.Except(expected, StringComparer.Ordinal).ToList();
        List<string> removed = expected.Except(actual, StringComparer.Ordinal).ToList();
        Assert.That(
            added.Count + removed.Count,
            Is.Zero,
            $"The public API differs from {file}.\n+ new or changed:\n  {string.Join("\n  ", added)}\n- gone or changed:\n  {string.Join("\n  ", removed)}\n"
            + $"If the change is deliberate, run this test with {AcceptVariable}=1 and commit the file.");
    }

    [Test]
    public void TheDescription_SeesMembersTypesAndSignatures()
    {
        List<string> lines = Describe(typeof(Context).Assembly);
        Assert.That(lines, Has.Some.StartWith("sealed class NetZlink.ZlinkSocket : System.IDisposable"));
        Assert.That(lines, Has.Some.Contains("NetZlink.ZlinkSocket.TrySend(System.ReadOnlySpan<System.Byte>, NetZlink.SendFlags = None) -> System.Boolean"));
        Assert.That(lines, Has.None.Contains("NativeMethods"), "internal types are not public API");
    }

    /// <summary>One sorted line per public type and per public or protected member.</summary>
    internal static List<string> Describe(Assembly assembly)
    {
        var lines = new List<string>();
        foreach (Type type in assembly.GetExportedTypes())
        {
            lines.Add($"{Kind(type)} {Name(type)}{BaseList(type)}");
            const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
            foreach (MemberInfo member in type.GetMembers(All))
            {
                if (Visible(member) && Describe(type, member) is { } line)
                {
                    lines.Add(line);
                }
            }
        }

        lines.Sort(StringComparer.Ordinal);
        return lines;
    }

    private static string? Describe(Type type, MemberInfo member)
    {
        string owner = Name(type);
        return member switch
        {
            ConstructorInfo c => $"{owner}.ctor({Parameters(c)})",
            MethodInfo m when m.IsSpecialName => null, // property and event accessors: covered by their member
            MethodInfo m => $"{Static(m.IsStatic)}{owner}.{m.Name}{Generic(m)}({Parameters(m)}) -> {Name(m.ReturnType)}",
            PropertyInfo p => $"{Static((p.GetMethod ?? p.SetMethod)!.IsStatic)}{owner}.{p.Name}{Indexer(p)} {{ {(IsVisible(p.GetMethod) ? "get; " : "")}{(IsVisible(p.SetMethod) ? (p.SetMethod!.ReturnParameter.GetRequiredCustomModifiers().Any(t => t.Name == "IsExternalInit") ? "init; " : "set; ") : "")}}} -> {Name(p.PropertyType)}",
            FieldInfo f when type.IsEnum => f.IsStatic ? $"{owner}.{f.Name} = {Convert.ToInt64(f.GetRawConstantValue(), System.Globalization.CultureInfo.InvariantCulture)}" : null,
            FieldInfo f => $"{Static(f.IsStatic)}{(f.IsLiteral ? "const " : f.IsInitOnly ? "readonly " : "")}{owner}.{f.Name} -> {Name(f.FieldType)}",
            EventInfo e => $"event {owner}.{e.Name} -> {Name(e.EventHandlerType!)}",
            Type => null, // nested types are listed as types
            _ => $"{owner}.{member.Name}",
        };
    }

    private static bool Visible(MemberInfo member) => member switch
    {
        MethodBase m => IsVisible(m),
        FieldInfo f => f.IsPublic || f.IsFamily || f.IsFamilyOrAssembly,
        PropertyInfo p => IsVisible(p.GetMethod) || IsVisible(p.SetMethod),
        EventInfo e => IsVisible(e.AddMethod),
        _ => false,
    };

    private static bool IsVisible(MethodBase? m) => m is not null && (m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly);

    private static string Kind(Type t) =>
        t.IsEnum ? "enum" : t.IsInterface ? "interface" : t.IsValueType ? (t.IsByRefLike ? "ref struct" : "struct")
        : typeof(Delegate).IsAssignableFrom(t) ? "delegate"
        : t.IsAbstract && t.IsSealed ? "static class" : t.IsAbstract ? "abstract class" : t.IsSealed ? "sealed class" : "class";

    private static string BaseList(Type t)
    {
        var bases = new List<string>();
        if (t.BaseType is { } b && b != typeof(object) && b != typeof(ValueType) && b != typeof(Enum) && !typeof(Delegate).IsAssignableFrom(t))
        {
            bases.Add(Name(b));
        }

        bases.AddRange(t.GetInterfaces().Select(Name).Order(StringComparer.Ordinal));
        return bases.Count == 0 ? "" : " : " + string.Join(", ", bases);
    }

    private static string Static(bool isStatic) => isStatic ? "static " : "";

    private static string Generic(MethodInfo m) => m.IsGenericMethodDefinition ? $"<{string.Join(", ", m.GetGenericArguments().Select(a => a.Name))}>" : "";

    private static string Indexer(PropertyInfo p) => p.GetIndexParameters() is { Length: > 0 } ps ? $"[{string.Join(", ", ps.Select(x => Name(x.ParameterType)))}]" : "";

    private static string Parameters(MethodBase m) => string.Join(", ", m.GetParameters().Select(p =>
        (p.ParameterType.IsByRef ? (p.IsOut ? "out " : p.IsIn ? "in " : "ref ") : "") + Name(p.ParameterType.IsByRef ? p.ParameterType.GetElementType()! : p.ParameterType)
        + (p.HasDefaultValue ? $" = {p.DefaultValue ?? "null"}" : "")));

    private static string Name(Type t)
    {
        if (t.IsGenericParameter)
        {
            return t.Name;
        }

        if (t.IsArray)
        {
            return Name(t.GetElementType()!) + "[]";
        }

        if (t.IsPointer)
        {
            return Name(t.GetElementType()!) + "*";
        }

        string name = (t.IsNested ? Name(t.DeclaringType!) + "." + t.Name : t.Namespace + "." + t.Name).Split('`')[0];
        return t.IsGenericType ? $"{name}<{string.Join(", ", t.GetGenericArguments().Select(Name))}>" : name;
    }

    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "NetZlink.sln")))
            {
                return dir.FullName;
            }
        }

        throw new DirectoryNotFoundException("NetZlink.sln not found above " + AppContext.BaseDirectory);
    }
}
