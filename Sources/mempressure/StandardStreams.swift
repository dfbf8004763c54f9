#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Standard error, unbuffered, for `print(_:to:)`.
struct StandardError: TextOutputStream {
    mutating func write(_ text: String) {
        writeAll(text, to: STDERR_FILENO)
    }
}

/// Standard output, unbuffered: each write reaches a terminal or a pipe at once (a progress line
/// must show when it is made, not when the tool exits). When the reader has gone (`EPIPE`, with
/// `SIGPIPE` ignored by the run) the text is dropped and the tool carries on.
struct StandardOutput: TextOutputStream {
    mutating func write(_ text: String) {
        writeAll(text, to: STDOUT_FILENO)
    }
}

private func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
