import SystemPackage
import MemoryPressureRuntime

// The errors of the state archive.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// The archive's directory `path` cannot be used, for `reason`.
    static func stateArchiveUnusable(app: AppIdentifier?, reason: String, path: FilePath) -> Self {
        Self(
            .stateArchiveUnusable,
            "\(stateSubject(app, path)) cannot be used: \(reason); expected a writable directory (created with mode 0700 if missing)",
            app: app
        )
    }

    /// `app` was made without a state archive.
    static func noStateArchive(app: AppIdentifier) -> Self {
        Self(
            .stateArchiveUnusable,
            "\(stateSubject(app, nil)): the app was made without a state archive; register it with a MemorySystem that has an archive directory",
            app: app
        )
    }

    /// A file `operation` failed with `errno` while saving `app`'s state at `path`.
    static func stateWriteFailed(app: AppIdentifier, operation: String, errno: Errno, path: FilePath) -> Self {
        Self(
            .stateNotSaved,
            "\(stateSubject(app, path)) could not be saved (\(operation): \(errno)); the state saved before is kept",
            app: app,
            errno: errno
        )
    }

    /// `app`'s saved state at `path` exists but could not be read.
    static func stateUnreadable(app: AppIdentifier, errno: Errno, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is unreadable: \(errno); the app launches fresh", app: app, errno: errno)
    }

    /// `app`'s saved state at `path` is damaged, for `reason`.
    static func stateCorrupt(app: AppIdentifier, reason: String, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is corrupt: \(reason); the app launches fresh", app: app)
    }

    /// `app`'s state, `size` bytes once encoded, is larger than the archive's `limit`.
    static func stateTooLarge(app: AppIdentifier, size: Int, limit: Int, path: FilePath) -> Self {
        Self(
            .stateNotSaved,
            "\(stateSubject(app, path)) could not be saved: the state file would be \(size) bytes, more than the \(limit)-byte limit; the state saved before is kept",
            app: app
        )
    }

    /// `app`'s saved state at `path` is not read, for `reason` (not a regular file, too large, a link).
    static func stateRefused(app: AppIdentifier, reason: String, path: FilePath) -> Self {
        Self(.stateNotRestored, "\(stateSubject(app, path)) is refused: \(reason); the app launches fresh", app: app)
    }

    /// `app`'s state could not be encoded.
    static func stateEncodingFailed(app: AppIdentifier, reason: String) -> Self {
        Self(.stateNotSaved, "\(stateSubject(app, nil)) could not encode the state: \(reason)", app: app)
    }

    /// Restored bytes could not be decoded as the type asked for.
    static func stateDecodingFailed(reason: String) -> Self {
        Self(.stateNotRestored, "\(stateSubject(nil, nil)) could not decode the restored state: \(reason)")
    }

    /// `state archive of <app> at <path>`, leaving out what is not known.
    private static func stateSubject(_ app: AppIdentifier?, _ path: FilePath?) -> String {
        let subject = app.map { "state archive of \($0)" } ?? "state archive"
        let location = path.map { " at \($0)" } ?? ""
        return subject + location
    }
}
