#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@_spi(_Unicode) import Swift
import SystemPackage
import MemoryPressureRuntime

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
/// whole file. Temporary files a crashed save left behind are removed by the app's next save,
/// under the lock. The file carries a header with the length and a checksum of the state, so a damaged
/// file is reported as corrupt instead of being handed back.
///
/// The archive trusts nothing below its directory: every file is opened relative to a directory
/// descriptor with `O_NOFOLLOW`, so a symbolic link planted at an app's directory, its state file
/// or a temporary name is refused, never followed. The archive's directory itself is refused when
/// others can write it (group- or world-writable, or owned by another user than us or root), unless
/// it is sticky and ours. A load reads only a regular file of at most ``maximumFileSize`` bytes
/// (64 MiB by default, header included; a save of a larger state fails): a FIFO, a device or a
/// larger file is a clear error, never a hang. An app's directory is named by its identifier in
/// Unicode Normalization Form C (NFC), so two identifiers that compare equal (NFC `café` and NFD
/// `café`) share one directory.
package final class StateArchive: Sendable {
    /// The directory holding one directory per app.
    package let directory: FilePath

    /// The largest state file a load reads and a save writes, in bytes, header included.
    package let maximumFileSize: Int

    /// The name of the next temporary file in an app's directory.
    private let temporaryName: @Sendable () -> String

    /// The default ``maximumFileSize``: 64 MiB.
    package static let defaultMaximumFileSize = 64 << 20

    static let fileName: FilePath.Component = "state"
    /// The prefix of the temporary files; a random suffix follows.
    static let temporaryPrefix = "state.tmp-"
    /// How many names a save tries when the temporary name it drew is taken.
    static let temporaryAttempts = 8

    /// An archive in `directory`, created (mode 0700, parents included) when missing.
    ///
    /// - Parameter temporaryName: The name of the next temporary file; for tests, which plant
    ///   files at a name they know. Random (``randomTemporaryName()``) by default.
    /// - Parameter maximumFileSize: The largest state file, header included.
    package init(
        directory: FilePath,
        maximumFileSize: Int = StateArchive.defaultMaximumFileSize,
        temporaryName: @escaping @Sendable () -> String = StateArchive.randomTemporaryName
    ) throws(MemoryPressureError) {
        guard !directory.isEmpty else {
            throw .stateArchiveUnusable(app: nil, reason: "the path is empty", path: directory)
        }
        try Self.makeDirectory(directory, app: nil, creatingParents: true)
        self.directory = directory
        self.maximumFileSize = maximumFileSize
        self.temporaryName = temporaryName
        let base = try openDirectory(for: nil)
        try? base.close()
    }

    /// The name of `app`'s directory: its identifier in NFC.
    package static func directoryName(for app: AppIdentifier) -> String {
        String(decoding: app.rawValue._nfcCodeUnits, as: UTF8.self)
    }

    /// The archive's directory, opened and checked to be safe: refused when others can write it,
    /// unless it is sticky and ours.
    private func openDirectory(for app: AppIdentifier?) throws(MemoryPressureError) -> FileDescriptor {
        let descriptor = open(directory.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = "open failed: \(Errno(rawValue: errno))"
            throw .stateArchiveUnusable(app: app, reason: reason, path: directory)
        }
        let file = FileDescriptor(rawValue: descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = "fstat failed: \(Errno(rawValue: errno))"
            try? file.close()
            throw .stateArchiveUnusable(app: app, reason: reason, path: directory)
        }
        let ours = status.st_uid == geteuid()
        let mode = String(status.st_mode & 0o7777, radix: 8)
        var refusal: String?
        if !ours && status.st_uid != 0 {
            refusal = "it belongs to user \(status.st_uid), who can write it"
        } else if status.st_mode & (S_IWGRP | S_IWOTH) != 0 && !(ours && status.st_mode & S_ISVTX != 0) {
            refusal = "others can write it (mode 0\(mode)) and it is not sticky and ours"
        }
        if let refusal {
            try? file.close()
            throw .stateArchiveUnusable(app: app, reason: refusal, path: directory)
        }
        return file
    }

    /// `app`'s directory, opened relative to `base` without following a symbolic link, and
    /// checked to be ours and writable by us alone; created (mode 0700) first when `creating`.
    /// Nil when it does not exist and is not created.
    private func openAppDirectory(
        _ app: AppIdentifier, in base: FileDescriptor, creating: Bool
    ) throws(MemoryPressureError) -> FileDescriptor? {
        let name = Self.directoryName(for: app)
        let path = directory.appending(name)
        if creating {
            if mkdirat(base.rawValue, name, 0o700) == 0 {
                // The new directory's entry in the archive's directory survives a crash.
                _ = fsync(base.rawValue)
            } else if errno != EEXIST {
                let reason = "mkdir failed: \(Errno(rawValue: errno))"
                throw .stateArchiveUnusable(app: app, reason: reason, path: path)
            }
        }
        let descriptor = openat(base.rawValue, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = Errno(rawValue: errno)
            if error == .noSuchFileOrDirectory && !creating { return nil }
            // With O_DIRECTORY, Linux reports a symbolic link as ENOTDIR.
            var status = stat()
            let isLink = fstatat(base.rawValue, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && status.st_mode & S_IFMT == S_IFLNK
            let reason = switch error {
            case _ where isLink, .tooManySymbolicLinkLevels: "it is a symbolic link, which is not followed"
            case .notDirectory: "it is not a directory"
            default: "open failed: \(error)"
            }
            throw .stateArchiveUnusable(app: app, reason: reason, path: path)
        }
        let file = FileDescriptor(rawValue: descriptor)
        var status = stat()
        var refusal: String?
        if fstat(descriptor, &status) != 0 {
            refusal = "fstat failed: \(Errno(rawValue: errno))"
        } else if status.st_uid != geteuid() {
            refusal = "it belongs to user \(status.st_uid), not to us"
        } else if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            refusal = "others can write it (mode 0\(String(status.st_mode & 0o7777, radix: 8)))"
        }
        if let refusal {
            try? file.close()
            throw .stateArchiveUnusable(app: app, reason: refusal, path: path)
        }
        return file
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
        let appDirectoryPath = directory.appending(Self.directoryName(for: app))
        let contents = StateArchiveFormat.encode(bytes)
        guard contents.count <= maximumFileSize else {
            throw .stateTooLarge(app: app, size: contents.count, limit: maximumFileSize, path: appDirectoryPath.appending(Self.fileName))
        }

        func failed(_ operation: String, _ error: Errno, at path: FilePath) -> MemoryPressureError {
            .stateWriteFailed(app: app, operation: operation, errno: error, path: path)
        }
        let base = try openDirectory(for: app)
        defer { try? base.close() }
        guard let appDirectory = try openAppDirectory(app, in: base, creating: true) else {
            throw failed("open directory", .noSuchFileOrDirectory, at: appDirectoryPath)
        }
        defer { try? appDirectory.close() }
        // Held until the descriptor is closed: the next save of this app waits for this one.
        while flock(appDirectory.rawValue, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failed("lock", Errno(rawValue: errno), at: appDirectoryPath) }
        }
        // No other save runs now: what temporary files remain were left by a save that crashed.
        Self.removeTemporaries(in: appDirectory)

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
    /// or is damaged, or when its file is not a regular file of at most ``maximumFileSize`` bytes.
    package func load(for app: AppIdentifier) throws(MemoryPressureError) -> [UInt8]? {
        let base = try openDirectory(for: app)
        defer { try? base.close() }
        guard let appDirectory = try openAppDirectory(app, in: base, creating: false) else { return nil }
        defer { try? appDirectory.close() }
        let path = directory.appending(Self.directoryName(for: app)).appending(Self.fileName)
        // O_NONBLOCK: opening a FIFO does not wait for a writer.
        let descriptor = openat(appDirectory.rawValue, Self.fileName.string, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = Errno(rawValue: errno)
            switch error {
            case .noSuchFileOrDirectory: return nil
            case .tooManySymbolicLinkLevels: throw .stateRefused(app: app, reason: "it is a symbolic link, which is not followed", path: path)
            default: throw .stateUnreadable(app: app, errno: error, path: path)
            }
        }
        let file = FileDescriptor(rawValue: descriptor)
        let contents: [UInt8]
        do {
            contents = try file.closeAfter { () throws(MemoryPressureError) -> [UInt8] in
                var status = stat()
                guard fstat(descriptor, &status) == 0 else {
                    throw .stateUnreadable(app: app, errno: Errno(rawValue: errno), path: path)
                }
                guard status.st_mode & S_IFMT == S_IFREG else {
                    throw .stateRefused(app: app, reason: "it is not a regular file but \(Self.kind(of: status.st_mode))", path: path)
                }
                guard Int(status.st_size) <= maximumFileSize else {
                    throw .stateRefused(app: app, reason: Self.tooLarge(Int(status.st_size), maximumFileSize), path: path)
                }
                // Reads up to one byte past the limit, in case the file grew since fstat.
                let limit = maximumFileSize + 1
                var bytes = [UInt8](repeating: 0, count: min(Int(status.st_size) + 1, limit))
                var count = 0
                while count < limit {
                    if count == bytes.count { bytes += [UInt8](repeating: 0, count: min(bytes.count, limit - count)) }
                    let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
                    if got == 0 { break }
                    if got < 0 {
                        if errno == EINTR { continue }
                        throw .stateUnreadable(app: app, errno: Errno(rawValue: errno), path: path)
                    }
                    count += got
                }
                guard count <= maximumFileSize else {
                    throw .stateRefused(app: app, reason: Self.tooLarge(count, maximumFileSize), path: path)
                }
                return Array(bytes.prefix(count))
            }
        } catch let error as MemoryPressureError {
            throw error
        } catch {
            throw .stateUnreadable(app: app, errno: error as? Errno ?? .ioError, path: path)
        }
        do throws(StateArchiveFormat.Damage) {
            return try StateArchiveFormat.decode(contents)
        } catch {
            throw .stateCorrupt(app: app, reason: error.reason, path: path)
        }
    }

    /// Removes the temporary files (`state.tmp-*`) in the app directory `directory`, without
    /// following any link.
    private static func removeTemporaries(in directory: FileDescriptor) {
        let copy = dup(directory.rawValue)
        guard copy >= 0 else { return }
        guard let stream = fdopendir(copy) else {
            _ = close(copy)
            return
        }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(temporaryPrefix) { names.append(name) }
        }
        closedir(stream)
        for name in names { _ = unlinkat(directory.rawValue, name, 0) }
    }

    /// What a file of mode `mode` is, for an error message.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "of type 0\(String(mode & S_IFMT, radix: 8))"
        }
    }

    private static func tooLarge(_ size: Int, _ limit: Int) -> String {
        "it is \(size) bytes or more, more than the \(limit)-byte limit"
    }

    /// Deletes `app`'s saved state, if any.
    package func remove(for app: AppIdentifier) {
        guard let base = try? openDirectory(for: app) else { return }
        defer { try? base.close() }
        guard let appDirectory = try? openAppDirectory(app, in: base, creating: false) else { return }
        _ = unlinkat(appDirectory.rawValue, Self.fileName.string, 0)
        try? appDirectory.close()
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
    package static let version: UInt8 = 1
    static let headerSize = 24

    /// Why stored bytes are not a valid state file.
    struct Damage: Error {
        package let reason: String
    }

    package static func encode(_ state: [UInt8]) -> [UInt8] {
        var contents = magic + [version, 0, 0, 0]
        contents.reserveCapacity(headerSize + state.count)
        append(UInt64(state.count), to: &contents)
        append(checksum(state), to: &contents)
        contents += state
        return contents
    }

    package static func decode(_ contents: [UInt8]) throws(Damage) -> [UInt8] {
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
