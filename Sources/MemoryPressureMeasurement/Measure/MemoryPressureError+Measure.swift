import SystemPackage
import MemoryPressureRuntime

// The errors of reading the kernel's files.
// The factories sit beside the code that throws them.
extension MemoryPressureError {
    /// `path` does not exist: this kernel or container does not offer it.
    static func kernelFileMissing(_ path: FilePath) -> Self {
        Self(.measurementUnavailable, "\(path) is not present")
    }

    /// `path` exists but could not be opened or read.
    static func kernelFileUnreadable(_ path: FilePath, errno: Errno) -> Self {
        Self(.measurementFailed, "\(path) could not be read: \(errno)", errno: errno)
    }

    /// `path`'s contents, `text`, are not in the format the kernel documents.
    static func kernelFileMalformed(_ path: FilePath, text: String) -> Self {
        let excerpt = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return Self(.measurementFailed, "\(path) is malformed: \(excerpt.debugDescription)")
    }

    /// The process has no memory cgroup, v2 or v1, for `reason`.
    static func noMemoryControlGroup(reason: String) -> Self {
        Self(.measurementUnavailable, "no memory cgroup: \(reason)")
    }

    /// An error opening or reading `path`: a missing file is ``Code/measurementUnavailable``, any
    /// other failure ``Code/measurementFailed`` (swift-system throws only `Errno`; anything else
    /// counts as an I/O error).
    static func kernelFile(_ path: FilePath, opening error: any Error) -> Self {
        let errno = error as? Errno ?? .ioError
        return errno == .noSuchFileOrDirectory ? kernelFileMissing(path) : kernelFileUnreadable(path, errno: errno)
    }

    /// A sample source set `figure` to `bytes`, outside 0 through `maximum`: its figures are left
    /// unknown for that sample.
    package static func sampleFigureOutOfRange(source: String, figure: String, bytes: Int, maximum: Int) -> Self {
        Self(
            .measurementFailed,
            "memory source \(source.debugDescription) set \(figure) to \(bytes), out of range; "
                + "expected 0 to \(maximum) bytes, or nil when unknown"
        )
    }
}
