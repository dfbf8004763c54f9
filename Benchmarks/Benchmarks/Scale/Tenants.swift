#if canImport(Glibc)
import Glibc
#endif
import BenchmarkSupport
import MemoryPressure
import MemoryPressureTestKit

/// The apps of the Scale suite: N tenants of one system, each made with or without a heap.
enum Tenants {
    /// The app counts each benchmark runs at: 100, 1,000 and 10,000 (and 100,000 where it fits in
    /// memory and time); 100 and 1,000 in the short mode of CI.
    static func counts(upTo largest: Int = 10_000) -> [Int] {
        [100, 1_000, 10_000, 100_000].filter { $0 <= (RunMode.current == .short ? 1_000 : largest) }
    }

    /// The identifier of tenant `index`.
    static func identifier(_ index: Int) throws -> AppIdentifier {
        try AppIdentifier("tenant-\(index)")
    }

    /// The cores of this machine, and the threads a warning to every app may take the process to.
    static let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    static var threadLimit: Int { cores * 2 + 8 }
}

/// A tenant's code: at launch it makes its heap and one buffer in it (4 KiB unless told; its first
/// byte written), held until the app is terminated.
final class TenantDelegate: AppDelegate {
    private let heap: @Sendable (AppIdentifier) throws -> AppHeap
    private let bytes: Int
    private let onFailure: @Sendable (String) -> Void
    private var buffer: HeapBuffer?

    init(
        heap: @escaping @Sendable (AppIdentifier) throws -> AppHeap, bytes: Int = 4_096,
        onFailure: @escaping @Sendable (String) -> Void
    ) {
        self.heap = heap
        self.bytes = bytes
        self.onFailure = onFailure
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        do {
            let buffer = try heap(app.identifier).allocate(byteCount: bytes)
            buffer.withUnsafeMutableBytes { $0[0] = 1 }
            self.buffer = buffer
        } catch {
            onFailure("heap for \(app.identifier): \(error)")
        }
    }
}

/// The resident bytes the process gained from `before` to now, after jemalloc's dirty pages went back.
func residentGrowth(since before: Int) throws -> Int {
    try settledResidentBytes() - before
}
