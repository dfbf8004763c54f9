#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// A directory under /tmp that is removed, with the files and directories in it, when the value
/// goes away.
public final class TemporaryDirectory {
    /// The directory.
    public let path: FilePath

    /// Makes a new, empty directory.
    public init() throws {
        var template = Array("/tmp/mempressure-test-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Errno(rawValue: errno)
        }
        path = FilePath(String(cString: created))
    }

    /// Writes `contents` to the file `name` in the directory, replacing it.
    public func write(_ name: String, _ contents: String) throws {
        let file = try FileDescriptor.open(path.appending(name), .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        _ = try file.closeAfter { try file.writeAll(contents.utf8) }
    }

    /// Makes an empty directory `name` in the directory: a path that exists but cannot be read as a file.
    public func makeDirectory(_ name: String) throws {
        guard mkdir(path.appending(name).string, 0o700) == 0 else { throw Errno(rawValue: errno) }
    }

    deinit {
        Self.remove(path)
    }

    /// Removes `path`, and everything in it when it is a directory.
    private static func remove(_ path: FilePath) {
        guard unlink(path.string) != 0 else { return }
        if let entries = opendir(path.string) {
            while let entry = readdir(entries) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { remove(path.appending(name)) }
            }
            closedir(entries)
        }
        rmdir(path.string)
    }
}
