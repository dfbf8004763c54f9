import SystemPackage

/// A reading of a kernel file that could not be taken.
public struct MeasurementError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the reading failed.
    public enum Reason: Hashable, Sendable {
        /// The file does not exist: this kernel or container does not offer it.
        case missing
        /// The file exists but could not be opened or read.
        case unreadable(Errno)
        /// The file's contents are not in the format the kernel documents; the text is what was read.
        case malformed(String)
    }

    /// The file that was read.
    public let path: FilePath
    /// Why the reading failed.
    public let reason: Reason

    /// An error reading `path`, for `reason`.
    public init(path: FilePath, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// An error opening or reading `path`: a missing file is `.missing`, any other failure
    /// `.unreadable` (swift-system throws only `Errno`; anything else counts as an I/O error).
    init(path: FilePath, opening error: any Error) {
        let errno = error as? Errno ?? .ioError
        self.init(path: path, reason: errno == .noSuchFileOrDirectory ? .missing : .unreadable(errno))
    }

    public var description: String {
        switch reason {
        case .missing:
            return "\(path) is not present"
        case .unreadable(let errno):
            return "\(path) could not be read: \(errno)"
        case .malformed(let text):
            let excerpt = text.count > 80 ? String(text.prefix(80)) + "…" : text
            return "\(path) is malformed: \(excerpt.debugDescription)"
        }
    }
}
