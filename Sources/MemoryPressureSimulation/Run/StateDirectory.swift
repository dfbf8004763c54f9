#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import SystemPackage

/// Where a simulation's apps archive their state: a directory given, or a new temporary one that
/// ``removeIfTemporary()`` removes when the simulation ends.
struct StateDirectory {
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
            throw SimulationError(.runFailed, "cannot make a temporary directory for the apps' state under \(base): \(Errno(rawValue: errno))")
        }
        path = FilePath(String(cString: made))
        isTemporary = true
    }

    /// Removes the directory and everything in it, if it is a temporary one.
    func removeIfTemporary() {
        if isTemporary { try? FileManager.default.removeItem(atPath: path.string) }
    }
}
