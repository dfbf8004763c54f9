#if canImport(Glibc)
import Glibc
#endif
@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import Synchronization
import SystemPackage

/// A source whose file is never there.
struct MissingSource: MemorySampleSource {
    var name: String { "/nonexistent/memory.file" }
    var depth: SampleDepth { .cheap }
    func read(into sample: inout MemorySample) throws {
        throw MemoryPressureError.kernelFileMissing("/nonexistent/memory.file")
    }
}

extension PressureEvent {
    var change: PressureChange? {
        if case .change(let change) = self { change } else { nil }
    }

    var sample: MemorySample? {
        if case .sample(let sample, _) = self { sample } else { nil }
    }
}

/// A descriptor the process has open: its number and what it refers to (`readlink` of
/// `/proc/self/fd/N`: a path, or `pipe:[inode]`).
struct OpenDescriptor: Hashable {
    var number: Int
    var target: String
}

/// The process's open descriptors whose targets begin with one of `prefixes`.
func openDescriptors(to prefixes: [String]) -> Set<OpenDescriptor> {
    var found: Set<OpenDescriptor> = []
    for descriptor in 0..<4096 {
        var target = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(descriptor)", &target, target.count - 1)
        guard length > 0 else { continue }
        let path = String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if prefixes.contains(where: path.hasPrefix) { found.insert(OpenDescriptor(number: descriptor, target: path)) }
    }
    return found
}

/// The names of the process's threads, from `/proc/self/task/*/comm`.
func threadNames() -> [String] {
    guard let tasks = opendir("/proc/self/task") else { return [] }
    defer { closedir(tasks) }
    var names: [String] = []
    while let entry = readdir(tasks) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard task.first?.isNumber == true, let name = try? KernelFile.read(FilePath("/proc/self/task/\(task)/comm")) else { continue }
        names.append(String(name.trimmingSuffix(while: \.isNewline)))
    }
    return names
}
