import Foundation
import SystemPackage

/// Reads of a pipe that outlast signals.
///
/// Foundation's `FileHandle.availableData` and `readDataToEndOfFile()` end the test process with a
/// fatal error when a `read` fails with `EINTR`, which a signal delivered to the reading thread
/// causes (the test process handles `SIGCHLD` for its children, and a busy machine delivers more of
/// them while a read waits). These read the handle's descriptor through swift-system, which retries
/// an interrupted read.
extension FileHandle {
    /// The bytes the pipe holds now, waiting until it holds some; empty at the end of the file (or
    /// on an error other than an interruption).
    public func availableBytes() -> Data {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let count = (try? buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: fileDescriptor).read(into: $0) }) ?? 0
        return Data(buffer.prefix(count))
    }

    /// Every byte until the end of the file.
    public func bytesToEnd() -> Data {
        var data = Data()
        while true {
            let bytes = availableBytes()
            if bytes.isEmpty { return data }
            data.append(bytes)
        }
    }
}
