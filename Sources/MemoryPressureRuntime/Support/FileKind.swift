#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kinds of file an error names when it refuses one that is not a regular file.
package enum FileKind {
    /// What a file of `mode` (from `stat`) is, such as `a FIFO` or `a directory`; nil for a regular
    /// file.
    package static func irregular(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}
