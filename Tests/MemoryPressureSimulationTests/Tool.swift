import Foundation
import MemoryTestSupport
import Synchronization

/// The `mempressure` executable built beside these tests, run as a user would.
enum Tool {
    /// How a run of the tool ended.
    struct Run {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs the tool with `arguments`, in `directory` when given, and waits for it to end.
    static func run(_ arguments: [String], in directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Standard error is read on another thread, so that neither pipe fills while the other
        // is read to its end.
        let errorData = Mutex(Data())
        let errorRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            errorRead.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorRead.wait()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self)
        )
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
