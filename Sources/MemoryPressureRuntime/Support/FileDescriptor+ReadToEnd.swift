import SystemPackage

extension FileDescriptor {
    /// Reads from the current offset to the end of the file, `chunkSize` bytes at a time.
    ///
    /// Throws `Errno.fileTooLarge` once more than `limit` bytes have been read, and whatever
    /// `read(into:)` throws.
    package func readToEnd(chunkSize: Int = 64 << 10, limit: Int = .max) throws -> [UInt8] {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[..<count])
            guard contents.count <= limit else { throw Errno.fileTooLarge }
        }
    }
}
