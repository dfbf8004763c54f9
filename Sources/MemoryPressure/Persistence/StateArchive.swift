#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// A durable store of each app's saved state, so that an app the system terminates loses nothing it
/// saved: the state is handed back in `LaunchOptions.restoredState` when the app launches again.
///
/// Each app has a directory of its own (mode 0700) under the archive's directory, named by its
/// identifier, holding one file (mode 0600). A save writes a temporary file with an unpredictable
/// name (created with `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing planted there is followed or
/// reused), `fsync`s it, renames it over the old one and `fsync`s the directory: after a crash or a
/// failed write, the file holds either the old state or the new one, never a mixture. Saves for one
/// app are serialized by an exclusive `flock` on its directory, across threads and processes: the
/// last save to report success is the one on disk, and a load, which never takes the lock, sees a
/// whole file. The file carries a header with the length and a checksum of the state, so a damaged
/// file is reported as corrupt instead of being handed back.
@_spi(Benchmarks) public final class StateArchive: Sendable {
    /// The directory holding one directory per app.
    package let directory: FilePath

    /// The name of the next temporary file in an app's directory.
    private let temporaryName: @Sendable () -> String

    static let fileName: FilePath.Component = "state"
    /// The prefix of the temporary files; a random suffix follows.
    static let temporaryPrefix = "state.tmp-"
    /// How many names a save tries when the temporary name it drew is taken.
    static let temporaryAttempts = 8

    /// An archive in `directory`, created (mode 0700, parents included) when missing.
    ///
    /// - Parameter temporaryName: The name of the next temporary file; for tests, which plant
    ///   files at a name they know. Random (``randomTemporaryName()``) by default.
    package init(
        directory: FilePath,
        temporaryName: @escaping @Sendable () -> String = StateArchive.randomTemporaryName
    ) throws(MemoryPressureError) {
        guard !directory.isEmpty else {
            throw .stateArchiveUnusable(app: nil, reason: "the path is empty", path: directory)
        }
        try Self.makeDirectory(directory, app: nil, creatingParents: true)
        self.directory = directory
        self.temporaryName = temporaryName
    }

    /// `state.tmp-` and 16 random hexadecimal digits.
    package static func randomTemporaryName() -> String {
        var generator = SystemRandomNumberGenerator()
        let suffix = String(generator.next() as UInt64, radix: 16)
        return temporaryPrefix + String(repeating: "0", count: 16 - suffix.count) + suffix
    }

    /// Saves `bytes` as `app`'s state, replacing what was saved before only once the new state is
    /// safely on disk. Waits for any other save of `app`'s state to finish first.
    package func save(_ bytes: [UInt8], for app: AppIdentifier) throws(MemoryPressureError) {
        let appDirectoryPath = directory.appending(app.rawValue)
        try Self.makeDirectory(appDirectoryPath, app: app, creatingParents: false)
        let contents = StateArchiveFormat.encode(bytes)

        func failed(_ operation: String, _ error: Errno, at path: FilePath) -> MemoryPressureError {
            .stateWriteFailed(app: app, operation: operation, errno: error, path: path)
        }
        let appDirectory: FileDescriptor
        do {
            appDirectory = try FileDescriptor.open(appDirectoryPath, .readOnly, options: [.directory, .closeOnExec])
        } catch {
            throw failed("open directory", error as? Errno ?? .ioError, at: appDirectoryPath)
        }
        defer { try? appDirectory.close() }
        // Held until the descriptor is closed: the next save of this app waits for this one.
        while flock(appDirectory.rawValue, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failed("lock", Errno(rawValue: errno), at: appDirectoryPath) }
        }

        var name = temporaryName()
        var file: FileDescriptor?
        for attempt in 1...Self.temporaryAttempts {
            let descriptor = openat(
                appDirectory.rawValue, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600
            )
            if descriptor >= 0 {
                file = FileDescriptor(rawValue: descriptor)
                break
            }
            let error = Errno(rawValue: errno)
            guard error == .fileExists, attempt < Self.temporaryAttempts else {
                throw failed("write", error, at: appDirectoryPath.appending(name))
            }
            name = temporaryName()
        }
        guard let file else { throw failed("write", .fileExists, at: appDirectoryPath.appending(name)) }
        let temporaryPath = appDirectoryPath.appending(name)
        do {
            try file.closeAfter {
                _ = try file.writeAll(contents)
                try Self.sync(file)
            }
        } catch {
            _ = unlinkat(appDirectory.rawValue, name, 0)
            throw failed("write", error as? Errno ?? .ioError, at: temporaryPath)
        }
        guard renameat(appDirectory.rawValue, name, appDirectory.rawValue, Self.fileName.string) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlinkat(appDirectory.rawValue, name, 0)
            throw failed("rename", error, at: appDirectoryPath.appending(Self.fileName))
        }
        do {
            try Self.sync(appDirectory)
        } catch {
            throw failed("fsync directory", error, at: appDirectoryPath)
        }
    }
    /// `app`'s saved state, or nil when it has none. Throws when a state exists but cannot be read
    /// or is damaged.
    package func load(for app: AppIdentifier) throws(MemoryPressureError) -> [UInt8]? {
        let path = directory.appending(app.rawValue).appending(Self.fileName)
        let contents: [UInt8]
        do {
            let file = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
            contents = try file.closeAfter { try file.readToEnd() }
        } catch Errno.noSuchFileOrDirectory {
            return nil
        } catch {
            throw .stateUnreadable(app: app, errno: error as? Errno ?? .ioError, path: path)
        }
        do throws(StateArchiveFormat.Damage) {
            return try StateArchiveFormat.decode(contents)
        } catch {
            throw .stateCorrupt(app: app, reason: error.reason, path: path)
        }
    }

    /// Deletes `app`'s saved state, if any.
    package func remove(for app: AppIdentifier) {
        _ = unlink(directory.appending(app.rawValue).appending(Self.fileName).string)
    }

    /// Creates `path` with mode 0700 unless it is already a directory.
    private static func makeDirectory(_ path: FilePath, app: AppIdentifier?, creatingParents: Bool) throws(MemoryPressureError) {
        var status = stat()
        if stat(path.string, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw .stateArchiveUnusable(app: app, reason: "it is not a directory", path: path)
            }
            return
        }
        let parent = path.removingLastComponent()
        if creatingParents, parent != path, !parent.isEmpty {
            try makeDirectory(parent, app: app, creatingParents: true)
        }
        guard mkdir(path.string, 0o700) == 0 || errno == EEXIST else {
            let reason = "mkdir failed: \(Errno(rawValue: errno))"
            throw .stateArchiveUnusable(app: app, reason: reason, path: path)
        }
    }

    private static func sync(_ file: FileDescriptor) throws(Errno) {
        guard fsync(file.rawValue) == 0 else { throw Errno(rawValue: errno) }
    }
}

/// The layout of a state file: a 24-byte header (the magic `MPSA`, a version byte, three zero
/// bytes, the state's length and its FNV-1a 64-bit checksum, both little-endian), then the state.
enum StateArchiveFormat {
    static let magic: [UInt8] = Array("MPSA".utf8)
    static let version: UInt8 = 1
    static let headerSize = 24

    /// Why stored bytes are not a valid state file.
    struct Damage: Error {
        let reason: String
    }

    static func encode(_ state: [UInt8]) -> [UInt8] {
        var contents = magic + [version, 0, 0, 0]
        contents.reserveCapacity(headerSize + state.count)
        append(UInt64(state.count), to: &contents)
        append(checksum(state), to: &contents)
        contents += state
        return contents
    }

    static func decode(_ contents: [UInt8]) throws(Damage) -> [UInt8] {
        guard contents.count >= headerSize else {
            throw Damage(reason: "\(contents.count) bytes is shorter than the \(headerSize)-byte header")
        }
        guard Array(contents[0..<4]) == magic else { throw Damage(reason: "the header's magic is not MPSA") }
        guard contents[4] == version else { throw Damage(reason: "unknown version \(contents[4]); expected \(version)") }
        let length = readUInt64(contents, at: 8)
        let state = Array(contents[headerSize...])
        guard length == UInt64(state.count) else {
            throw Damage(reason: "the header gives \(length) bytes of state but \(state.count) follow")
        }
        guard readUInt64(contents, at: 16) == checksum(state) else {
            throw Damage(reason: "the checksum does not match the state")
        }
        return state
    }

    /// FNV-1a, 64 bits.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) }
    }
}
