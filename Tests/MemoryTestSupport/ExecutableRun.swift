import Foundation
import Synchronization

/// How a run of an executable built beside the tests ended.
public struct ExecutableRun: Sendable {
    /// The exit status, or the signal that ended it.
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs the executable `name` built beside the tests (``builtExecutable(named:)``) as a user would,
/// and waits for it to end, on a thread of its own (``blockingWait(_:)``).
///
/// Its standard input is `/dev/null` (a daemon reads to the end of it); standard error is read on a
/// thread of its own, so that neither pipe fills while the other is read to its end.
///
/// - Parameters:
///   - name: The executable, `mempressure` say.
///   - arguments: Its arguments.
///   - directory: Its working directory; the tests' own when nil.
///   - environment: Changes to the host's environment: a value sets a name, nil removes it.
///   - timeout: How long it may run before it is killed with `SIGKILL` (its run then reports the
///     signal).
public func runBuiltExecutable(
    named name: String,
    _ arguments: [String],
    in directory: URL? = nil,
    environment: [String: String?] = [:],
    timeout: Duration = .seconds(600)
) async throws -> ExecutableRun {
    try await blockingWait {
        try runBuiltExecutableHere(named: name, arguments, in: directory, environment: environment, timeout: timeout)
    }
}

/// ``runBuiltExecutable(named:_:in:environment:timeout:)``, waiting on the calling thread.
private func runBuiltExecutableHere(
    named name: String,
    _ arguments: [String],
    in directory: URL?,
    environment: [String: String?],
    timeout: Duration
) throws -> ExecutableRun {
    let process = Process()
    process.executableURL = try builtExecutable(named: name)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    if !environment.isEmpty {
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
    }
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let errorData = Mutex(Data())
    let errorRead = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let data = error.fileHandleForReading.bytesToEnd()
        errorData.withLock { $0 = data }
        errorRead.signal()
    }
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)), execute: watchdog)
    let outputData = output.fileHandleForReading.bytesToEnd()
    errorRead.wait()
    process.waitUntilExit()
    watchdog.cancel()
    return ExecutableRun(
        status: process.terminationStatus,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self)
    )
}
