import Foundation
import MemoryTestSupport

/// The `mempressure` executable built beside these tests, run as a user would.
enum Tool {
    typealias Run = ExecutableRun

    /// Runs the tool with `arguments`, in `directory` when given, and waits for it to end.
    static func run(_ arguments: [String], in directory: URL? = nil) async throws -> Run {
        try await runBuiltExecutable(named: "mempressure", arguments, in: directory)
    }

    /// `mempressure` in the build directory this test runs from.
    static func executable() throws -> URL {
        try builtExecutable(named: "mempressure")
    }

    /// A new, empty directory under the temporary directory; the caller removes it.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "mempressure-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
