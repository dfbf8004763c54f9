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
/// identifier, holding one file (mode 0600). A save writes a temporary file, `fsync`s it, renames it
/// over the old one and `fsync`s the directory: after a crash or a failed write, the file holds
/// either the old state or the new one, never a mixture. The file carries a header with the length
/// and a checksum of the state, so a damaged file is reported as corrupt instead of being handed
/// back.
@_spi(Benchmarks) public final class StateArchive: Sendable {
    /// The directory holding one directory per app.
    package let directory: FilePath

    static let fileName: FilePath.Component = "state"
    static let temporaryFileName: FilePath.Component = "state.tmp"

    /// An archive in `directory`, created (mode 0700, parents included) when missing.
    package init(directory: FilePath) throws(MemoryPressureError) {
        guard !directory.isEmpty else {
            throw .stateArchiveUnusable(app: nil, reason: "the path is empty", path: directory)
        }
        try Self.makeDirectory(directory, app: nil, creatingParents: true)
        self.directory = directory
    }

    /// Saves `bytes` as `app`'s state, replacing what was saved before only once the new state is
    /// safely on disk.
    package func save(_ bytes: [UInt8], for app: AppIdentifier) throws(MemoryPressureError) {
        let appDirectory = directory.appending(app.rawValue)
        try Self.makeDirectory(appDirectory, app: app, creatingParents: false)
        let temporary = appDirectory.appending(Self.temporaryFileName)
        let final = appDirectory.appending(Self.fileName)
        let contents = StateArchiveFormat.encode(bytes)

        func failed(_ operation: String, _ error: any Error, at path: FilePath) -> MemoryPressureError {
            .stateWriteFailed(app: app, operation: operation, errno: error as? Errno ?? .ioError, path: path)
        }
        do {
            let file = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite]
            )
            try file.closeAfter {
                _ = try file.writeAll(contents)
                try Self.sync(file)
            }
        } catch {
            _ = unlink(temporary.string)
            throw failed("write", error, at: temporary)
        }
        guard rename(temporary.string, final.string) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlink(temporary.string)
            throw failed("rename", error, at: final)
        }
        do {
            let directoryDescriptor = try FileDescriptor.open(appDirectory, .readOnly, options: [.directory, .closeOnExec])
            try directoryDescriptor.closeAfter { try Self.sync(directoryDescriptor) }
        } catch {
            throw failed("fsync directory", error, at: appDirectory)
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
