#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import SystemPackage

/// Where a simulation's apps archive their state: a directory given, or a new temporary one that is
/// removed when the simulation ends.
struct StateDirectory: ~Copyable {
    let path: FilePath
    private let isTemporary: Bool

    /// `given`, or a new directory under the temporary directory.
    init(_ given: FilePath?) throws(SimulationError) {
        if let given {
            path = given
            isTemporary = false
            return
        }
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/mempressure-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SimulationError("cannot make a temporary directory for the apps' state under \(base): \(Errno(rawValue: errno))")
        }
        path = FilePath(String(cString: made))
        isTemporary = true
    }

    deinit {
        if isTemporary { try? FileManager.default.removeItem(atPath: path.string) }
    }
}
