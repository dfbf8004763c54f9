#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage
import MemoryPressureRuntime

/// What to run as a child process: the executable, its arguments, its environment and its working
/// directory.
///
/// It is checked when an app is registered with it (`MemorySystem.register(_:process:configuration:limits:options:)`)
/// and again before each launch, so a bad specification is one clear error and leaves no process
/// and no cgroup behind:
/// - the executable is not empty and holds no NUL; a path with a `/` is taken as it is (relative to
///   the working directory when it is relative), a bare name is looked up in `PATH` (the
///   specification's own, else the host's, else `/usr/local/bin:/usr/bin:/bin`);
/// - the file it names exists, is a regular file and is executable by us;
/// - arguments and environment entries hold no NUL, and environment names are not empty and hold no `=`;
/// - they fit where `execve` puts them: each at most 32 pages, all of them (with the environment
///   inherited, when the specification has none) within a quarter of the stack limit, at most 6 MiB;
/// - the working directory, when given, is an existing directory.
public struct ProcessSpecification: Hashable, Sendable {
    /// The program: an absolute path, a path relative to ``workingDirectory``, or a name looked up in `PATH`.
    public var executable: String
    /// The arguments after the program's name (`argv[1...]`); `argv[0]` is ``executable`` as given.
    public var arguments: [String]
    /// The child's whole environment, or nil to inherit the host's.
    public var environment: [String: String]?
    /// The child's working directory, or nil for the host's.
    public var workingDirectory: FilePath?

    /// A specification of these parts; nothing is checked until it is used.
    ///
    /// - Parameters:
    ///   - executable: An absolute path, a path relative to `workingDirectory`, or a name looked up
    ///     in `PATH`.
    ///   - arguments: The arguments after the program's name.
    ///   - environment: The child's whole environment, or nil to inherit the host's.
    ///   - workingDirectory: The child's working directory, or nil for the host's.
    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: FilePath? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    /// A specification that runs `command` with `/bin/sh -c`.
    public static func shell(_ command: String, environment: [String: String]? = nil) -> ProcessSpecification {
        ProcessSpecification(executable: "/bin/sh", arguments: ["-c", command], environment: environment)
    }

    /// This specification with `extra` added to its environment (to the host's, when it has none of
    /// its own); `extra` wins over a variable of the same name.
    func addingEnvironment(_ extra: [String: String]) -> ProcessSpecification {
        guard !extra.isEmpty else { return self }
        var copy = self
        copy.environment = (environment ?? Self.hostEnvironment).merging(extra) { _, added in added }
        return copy
    }

    /// The host's environment, as `environ` holds it.
    package static var hostEnvironment: [String: String] {
        var environment: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        return environment
    }

    /// The specification checked, with its executable resolved to the file that will run.
    package func validated() throws(MemoryPressureError) -> ValidatedProcessSpecification {
        guard !executable.isEmpty else {
            throw .processExecutableUnusable(executable, "is empty")
        }
        guard !executable.utf8.contains(0) else {
            throw .processExecutableUnusable(executable, "holds a NUL byte")
        }
        for (index, argument) in arguments.enumerated() where argument.utf8.contains(0) {
            throw .processSpecificationInvalid("argument \(index + 1)", "holds a NUL byte; expected text without NUL")
        }
        let environment = self.environment
        if let environment {
            for (name, value) in environment {
                if name.isEmpty || name.utf8.contains(UInt8(ascii: "=")) || name.utf8.contains(0) {
                    throw .processSpecificationInvalid(
                        "environment name \(name.debugDescription)",
                        "is not a valid name; expected a non-empty name without = or NUL"
                    )
                }
                if value.utf8.contains(0) {
                    throw .processSpecificationInvalid("environment value of \(name)", "holds a NUL byte; expected text without NUL")
                }
            }
        }
        try checkArgumentSpace()
        if let workingDirectory {
            guard Self.kind(of: workingDirectory.string) == .directory else {
                throw .processSpecificationInvalid(
                    "working directory \(workingDirectory.string.debugDescription)",
                    "is not an existing directory; expected an existing directory or none (the host's)"
                )
            }
        }
        let path = try resolveExecutable()
        return ValidatedProcessSpecification(specification: self, executablePath: path)
    }

    /// Checks that the arguments and the environment fit where `execve` puts them, as the kernel
    /// counts them (`fs/exec.c`): each string, with its NUL, in 32 pages (`MAX_ARG_STRLEN`), and all
    /// of them with their pointers in a quarter of the stack limit, at most 6 MiB and at least 32
    /// pages. Beyond either, `execve` fails with `E2BIG` once the child has been made.
    private func checkArgumentSpace() throws(MemoryPressureError) {
        let pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))
        let longestString = 32 * pageSize
        var stack = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_STACK.rawValue)
        #else
        let resource = RLIMIT_STACK
        #endif
        // An unlimited stack (RLIM_INFINITY) clamps to Int.max.
        let stackLimit = getrlimit(resource, &stack) == 0 ? Int(clamping: stack.rlim_cur) : Int.max
        let space = max(min(6 << 20, stackLimit / 4), longestString)
        let environment = self.environment ?? Self.hostEnvironment
        var total = (2 + arguments.count + environment.count) * MemoryLayout<UnsafeRawPointer>.size
        func add(_ bytes: Int, _ field: @autoclosure () -> String) throws(MemoryPressureError) {
            guard bytes <= longestString else {
                throw .processSpecificationInvalid(field(), "is \(bytes - 1) bytes long; expected at most \(longestString - 1) bytes (MAX_ARG_STRLEN)")
            }
            total += bytes
        }
        try add(executable.utf8.count + 1, "executable")
        for (index, argument) in arguments.enumerated() {
            try add(argument.utf8.count + 1, "argument \(index + 1)")
        }
        for (name, value) in environment {
            try add(name.utf8.count + 1 + value.utf8.count + 1, "environment entry \(name.debugDescription)")
        }
        guard total <= space else {
            throw .processSpecificationInvalid(
                "arguments and environment",
                "take \(total) bytes with their pointers; expected at most \(space) bytes (a quarter of the stack limit, at most 6 MiB)"
            )
        }
    }

    /// The file the executable names, checked to be an executable regular file.
    private func resolveExecutable() throws(MemoryPressureError) -> String {
        if executable.utf8.contains(UInt8(ascii: "/")) {
            var path = executable
            if !executable.hasPrefix("/"), let workingDirectory {
                path = workingDirectory.appending(executable).string
            }
            switch Self.kind(of: path) {
            case .missing:
                throw .processExecutableUnusable(executable, executable.hasPrefix("/") ? "does not exist" : "is not found relative to the working directory")
            case .directory, .other:
                throw .processExecutableUnusable(executable, "is not a regular file")
            case .regularFile:
                guard access(path, X_OK) == 0 else {
                    throw .processExecutableUnusable(executable, "is not executable", errno: Errno(rawValue: errno))
                }
                return path
            }
        }
        let searchPath = environment?["PATH"] ?? getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        var foundButUnusable = false
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let base = directory.isEmpty ? "." : String(directory)
            let candidate = base.hasSuffix("/") ? base + executable : base + "/" + executable
            switch Self.kind(of: candidate) {
            case .regularFile:
                if access(candidate, X_OK) == 0 { return candidate }
                foundButUnusable = true
            case .directory, .other:
                foundButUnusable = true
            case .missing:
                continue
            }
        }
        throw .processExecutableUnusable(
            executable,
            foundButUnusable ? "is found in PATH only as a file that is not executable" : "is not found in PATH (\(searchPath))"
        )
    }

    private enum Kind { case missing, regularFile, directory, other }

    private static func kind(of path: String) -> Kind {
        var status = stat()
        guard stat(path, &status) == 0 else { return .missing }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        default: return .other
        }
    }
}

/// A ``ProcessSpecification`` that passed ``ProcessSpecification/validated()``, with the path of
/// the file that will run.
package struct ValidatedProcessSpecification: Hashable, Sendable {
    /// The specification as given.
    package let specification: ProcessSpecification
    /// The executable resolved: the path handed to execve.
    package let executablePath: String

    /// `argv`: the executable as given, then the arguments.
    var argumentVector: [String] { [specification.executable] + specification.arguments }

    /// `envp`: the specification's environment as `NAME=value`, or the host's when it has none.
    var environmentVector: [String] {
        if let environment = specification.environment {
            return environment.map { "\($0.key)=\($0.value)" }.sorted()
        }
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            entries.append(String(cString: entry))
            cursor += 1
        }
        return entries
    }
}
