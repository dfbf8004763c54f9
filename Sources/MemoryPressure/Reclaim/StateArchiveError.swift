import SystemPackage

/// A state archive that could not be opened, written or read, or whose contents are damaged.
public struct StateArchiveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Hashable, Sendable {
        /// The archive's directory cannot be used: the path is empty, is not a directory, or could
        /// not be created or opened.
        case unusableDirectory(reason: String)
        /// A file operation failed (the directory is read-only, the disk is full, …). The archive
        /// saved before is intact.
        case writeFailed(operation: String, Errno)
        /// The saved state exists but could not be read.
        case unreadable(Errno)
        /// The saved state is damaged: its header, length or checksum does not match.
        case corrupt(reason: String)
        /// The state could not be encoded.
        case encodingFailed(String)
        /// The restored bytes could not be decoded as the requested type.
        case decodingFailed(String)
        /// The app has no archive to save into.
        case noArchive
    }

    /// The app whose state it is, when known.
    public let app: AppIdentifier?
    /// What went wrong.
    public let problem: Problem
    /// The file or directory involved.
    public let path: FilePath?

    /// An error for `problem` with `app`'s state at `path`.
    public init(app: AppIdentifier?, problem: Problem, path: FilePath? = nil) {
        self.app = app
        self.problem = problem
        self.path = path
    }

    public var description: String {
        let subject = app.map { "state archive of \($0)" } ?? "state archive"
        let location = path.map { " at \($0)" } ?? ""
        switch problem {
        case .unusableDirectory(let reason):
            return "\(subject)\(location) cannot be used: \(reason); expected a writable directory (created with mode 0700 if missing)"
        case .writeFailed(let operation, let errno):
            return "\(subject)\(location) could not be saved (\(operation): \(errno)); the state saved before is kept"
        case .unreadable(let errno):
            return "\(subject)\(location) is unreadable: \(errno); the app launches fresh"
        case .corrupt(let reason):
            return "\(subject)\(location) is corrupt: \(reason); the app launches fresh"
        case .encodingFailed(let reason):
            return "\(subject) could not encode the state: \(reason)"
        case .decodingFailed(let reason):
            return "\(subject) could not decode the restored state: \(reason)"
        case .noArchive:
            return "\(subject): the app was made without a state archive; register it with a MemorySystem that has an archive directory"
        }
    }
}
