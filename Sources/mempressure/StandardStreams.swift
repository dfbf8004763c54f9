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

/// Standard output, unbuffered: for the live progress line, which must show before its newline.
/// Lines printed with `print` end in a newline, so a terminal has them flushed already.
struct StandardOutput: TextOutputStream {
    mutating func write(_ text: String) {
        writeAll(text, to: STDOUT_FILENO)
    }
}

private func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
