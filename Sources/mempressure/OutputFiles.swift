import MemoryPressure
import MemoryPressureSimulation

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The files a run writes: checked before it starts (so bad paths are bad input, with nothing
/// written), and each written whole (to a temporary file renamed into place) after it ends.
///
/// Only a regular file, or no file, is ever replaced: a directory, a symbolic link, a device, a
/// FIFO or a socket at an output's path is refused. Each temporary file has an unpredictable name
/// in its target's directory and is created with `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing planted
/// there beforehand is followed or overwritten.
struct OutputFiles {
    /// `path` as errors show it: quoted, escaped, and cut after 1024 characters
    /// (``StringProtocol/echoed(limit:)``).
    static func shown(_ path: String) -> String {
        path.echoed(limit: 1024)
    }

    let report: String?
    let timeline: String?
    let chart: String?

    /// Checks that each path given can be written: a regular file or none, in an existing
    /// directory where a file can be created (tried), with a name the filesystem accepts, and no
    /// two naming one file (by resolved path, or device and inode).
    init(report: String?, timeline: String?, chart: String?) throws(BadInput) {
        let given = [("--report", report), ("--timeline", timeline), ("--chart", chart)].compactMap { option, path in
            path.map { (option, $0) }
        }
        var seen: [(option: String, path: String, identity: Identity)] = []
        for (option, path) in given {
            let identity = try Self.check(path, option: option)
            if let other = seen.first(where: { $0.identity.matches(identity) }) {
                throw BadInput("\(other.option) \(Self.shown(other.path)) and \(option) \(Self.shown(path)) name one file; expected a different file for each")
            }
            seen.append((option, path, identity))
        }
        self.report = report
        self.timeline = timeline
        self.chart = chart
    }

    /// Writes the report as JSON, the timeline as CSV and the chart as SVG, where asked: each to a
    /// temporary file beside its target first, then all renamed into place, so that a failure
    /// leaves none of them written.
    func write(_ result: SimulationResult) throws(OutputError) {
        var contents: [(path: String, data: [UInt8])] = []
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                contents.append((report, Array(try encoder.encode(result.report)) + Array("\n".utf8)))
            } catch {
                throw OutputError(path: report, reason: "cannot encode the report: \(error)")
            }
        }
        if let timeline {
            contents.append((timeline, Array(result.timeline.csv.utf8)))
        }
        if let chart {
            contents.append((chart, Array(TimelineChart(timeline: result.timeline).svg.utf8)))
        }
        try Self.write(contents)
    }

    /// Writes each of `contents` to a new temporary file in its target's directory, then renames
    /// them all into place; on any failure removes every temporary file and throws, leaving
    /// none of the targets changed by this call except those already renamed.
    static func write(_ contents: [(path: String, data: [UInt8])]) throws(OutputError) {
        var written: [(temporary: String, path: String)] = []
        func discard() {
            for file in written { unlink(file.temporary) }
        }
        for (path, data) in contents {
            do throws(OutputError) {
                try refuseAnythingButARegularFile(at: path)
                let (temporary, descriptor) = try createTemporaryFile(beside: path)
                written.append((temporary, path))
                defer { close(descriptor) }
                try writeAll(data, to: descriptor, path: path)
                guard fsync(descriptor) == 0 else { throw OutputError(path: path, reason: Self.reason(errno)) }
            } catch {
                discard()
                throw error
            }
        }
        for file in written {
            do throws(OutputError) {
                try refuseAnythingButARegularFile(at: file.path)
            } catch {
                discard()
                throw error
            }
            if rename(file.temporary, file.path) != 0 {
                let reason = Self.reason(errno)
                discard()
                throw OutputError(path: file.path, reason: reason)
            }
        }
    }

    /// A file that could not be put in place: one line naming it and why.
    struct OutputError: Error, CustomStringConvertible {
        let path: String
        let reason: String

        var description: String { "cannot write \(OutputFiles.shown(path)): \(reason)" }
    }

    /// A new, empty file in the directory of `path`, named `.mempressure-` and 16 random hex
    /// digits, created exclusively without following a link; its path and open descriptor.
    static func createTemporaryFile(beside path: String) throws(OutputError) -> (path: String, descriptor: Int32) {
        let directory = Self.directory(of: path)
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 16 {
            let name = String(generator.next(), radix: 16)
            let temporary = "\(directory)/.mempressure-\(String(repeating: "0", count: 16 - name.count) + name).tmp"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if descriptor >= 0 { return (temporary, descriptor) }
            guard errno == EEXIST else {
                throw OutputError(path: path, reason: "cannot create a file in directory \(Self.shown(directory)): \(Self.reason(errno))")
            }
        }
        throw OutputError(path: path, reason: "cannot create a temporary file in directory \(Self.shown(directory)): every name tried exists")
    }

    private static func writeAll(_ data: [UInt8], to descriptor: Int32, path: String) throws(OutputError) {
        var remaining = data[...]
        while !remaining.isEmpty {
            let count = remaining.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw OutputError(path: path, reason: Self.reason(errno))
            }
            remaining = remaining.dropFirst(count)
        }
    }

    /// Throws unless `path` names nothing or a regular file (not following a link).
    private static func refuseAnythingButARegularFile(at path: String) throws(OutputError) {
        var status = stat()
        if lstat(path, &status) != 0 {
            guard errno == ENOENT else { throw OutputError(path: path, reason: Self.reason(errno)) }
            return
        }
        if let kind = FileKind.irregular(status.st_mode) {
            throw OutputError(path: path, reason: "is \(kind); expected a regular file or a new one")
        }
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// What an output names: the device and inode of the file there, or, for a new file, its
    /// directory's resolved path and its name.
    enum Identity {
        case existing(device: UInt64, inode: UInt64)
        case new(resolved: String)

        func matches(_ other: Identity) -> Bool {
            switch (self, other) {
            case let (.existing(a, b), .existing(c, d)): a == c && b == d
            case let (.new(a), .new(b)): a == b
            default: false
            }
        }
    }

    /// Checks `path` as ``init(report:timeline:chart:)`` says, creating and removing a temporary
    /// file in its directory; its identity.
    private static func check(_ path: String, option: String) throws(BadInput) -> Identity {
        let named = "\(option) \(Self.shown(path))"
        guard !path.isEmpty else { throw BadInput("\(option) is empty; expected the path of a file to write") }
        guard !path.hasSuffix("/") else { throw BadInput("\(named) ends in \"/\"; expected the path of a file to write") }
        var status = stat()
        let exists = lstat(path, &status) == 0
        if exists, status.st_mode & S_IFMT == S_IFDIR {
            throw BadInput("\(named) is a directory; expected the path of a file to write")
        }
        if exists, let kind = FileKind.irregular(status.st_mode) {
            throw BadInput("\(named) is \(kind); expected a regular file or a new one")
        }
        let directory = directory(of: path)
        var directoryStatus = stat()
        guard stat(directory, &directoryStatus) == 0, directoryStatus.st_mode & S_IFMT == S_IFDIR else {
            throw BadInput("\(named): directory \(Self.shown(directory)) does not exist; expected a file in an existing directory")
        }
        guard access(directory, W_OK) == 0 else {
            throw BadInput("\(named): directory \(Self.shown(directory)) is not writable; expected a file in a writable directory")
        }
        let name = String(path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...])
        let limit = pathconf(directory, Int32(_PC_NAME_MAX))
        if limit > 0, name.utf8.count > limit {
            throw BadInput("\(named): the file name is \(name.utf8.count) bytes long; expected at most \(limit)")
        }
        do throws(OutputError) {
            let (temporary, descriptor) = try createTemporaryFile(beside: path)
            close(descriptor)
            unlink(temporary)
        } catch {
            throw BadInput("\(named): \(error.reason)")
        }
        if exists {
            return .existing(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        }
        guard let resolved = realpath(directory, nil) else {
            throw BadInput("\(named): directory \(Self.shown(directory)) cannot be resolved: \(reason(errno))")
        }
        defer { free(resolved) }
        return .new(resolved: String(cString: resolved) + "/" + name)
    }
}
