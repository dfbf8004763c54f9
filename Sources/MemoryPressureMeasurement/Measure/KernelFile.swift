import SystemPackage
import MemoryPressureRuntime

/// Reads the small text files the kernel exposes under /proc and /sys.
package enum KernelFile {
    /// Reads the whole of `path` as UTF-8 text.
    package static func read(_ path: FilePath) throws(MemoryPressureError) -> String {
        try withOpenFile(path) { descriptor in
            String(decoding: try descriptor.readToEnd(chunkSize: 4096), as: UTF8.self)
        }
    }

    /// Reads `path` and parses its trimmed text with `parse`, reporting text it rejects as malformed.
    package static func parse<Value>(
        _ path: FilePath,
        _ parse: (Substring) -> Value?
    ) throws(MemoryPressureError) -> Value {
        let text = try read(path)
        let trimmed = text.trimmingSuffix(while: \.isWhitespace)
        guard let value = parse(trimmed) else {
            throw .kernelFileMalformed(path, text: String(trimmed))
        }
        return value
    }

    /// Opens `path`, parses its text with `parse` as ``OpenKernelFile/parse(capacity:_:)`` does,
    /// and closes it. Files sampled many times a second are kept open instead.
    static func parseBytes<Value>(
        _ path: FilePath,
        capacity: Int,
        _ parse: (UnsafeRawBufferPointer) -> Value?
    ) throws(MemoryPressureError) -> Value {
        try OpenKernelFile(path).parse(capacity: capacity, parse)
    }

    /// Opens `path` for reading, runs `body` with it and closes it, turning failures into
    /// errors: a missing file is ``/MemoryPressureRuntime/MemoryPressureError/Code/measurementUnavailable``, any other failure
    /// ``/MemoryPressureRuntime/MemoryPressureError/Code/unreadableKernelFile``.
    private static func withOpenFile<Value>(
        _ path: FilePath,
        _ body: (FileDescriptor) throws -> Value
    ) throws(MemoryPressureError) -> Value {
        do {
            let descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
            return try descriptor.closeAfter { try body(descriptor) }
        } catch {
            throw .kernelFile(path, opening: error)
        }
    }
}
