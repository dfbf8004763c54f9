import SystemPackage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The supervisor's control socket: a Unix stream socket, mode 0600 and owned by the user who
/// started the supervisor, that `mempressure ctl` connects to.
///
/// The protocol is a line each way: the client sends one command (the console's, or `ctl`'s:
/// `status`, `status --json`, `foreground NAME`, …) and a newline; the supervisor answers with a
/// first line of `ok` or `error`, then the text (status's lines, or the one-line error), and closes
/// the connection. A peer of another user (other than root) is refused, whatever the file's mode.
enum ControlSocket {
    /// The longest path `sun_path` holds, without its NUL.
    static let longestPath = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    static let expectedPath = "the path of a Unix socket of at most \(longestPath) bytes, in an existing directory"

    /// The default path: `/run/mempressure/supervise.sock` for root, else
    /// `$XDG_RUNTIME_DIR/mempressure.sock`, else `/tmp/mempressure-UID.sock`.
    static var defaultPath: String {
        if geteuid() == 0 { return "/run/mempressure/supervise.sock" }
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty {
            return "\(runtime)/mempressure.sock"
        }
        return "/tmp/mempressure-\(geteuid()).sock"
    }

    /// What is wrong with `path` as a socket's path, or nil.
    static func problem(with path: String) -> String? {
        if path.isEmpty { return "is empty" }
        if path.utf8.contains(0) { return "holds a NUL byte" }
        if path.utf8.count > longestPath { return "is \(path.utf8.count) bytes long" }
        return nil
    }

    /// `path` as a socket address.
    static func address(_ path: String) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1))
    }

    /// Connects to the socket at `path`.
    static func connect(_ path: String) throws(Errno) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        var (address, length) = address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, length) }
        }
        guard result == 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Reads from `descriptor` to its end, or to `limit` bytes, waiting at most `timeout` ms for
    /// each read; nil on a timeout or an error.
    static func readAll(_ descriptor: Int32, limit: Int, timeout: Int32, untilNewline: Bool = false) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, timeout)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if untilNewline, bytes.contains(UInt8(ascii: "\n")) { return bytes }
        }
        return nil
    }

    /// A request read from a client: its line, and how to answer it.
    struct Request: Sendable {
        let line: String
        private let connection: Connection

        init(line: String, connection: Connection) {
            (self.line, self.connection) = (line, connection)
        }

        /// Answers `ok` and `text` (lines, each ended with a newline), and closes the connection.
        func succeed(_ text: String) { connection.answer("ok\n" + text) }

        /// Answers `error` and `message`, one line, and closes the connection.
        func fail(_ message: String) {
            connection.answer("error\n" + message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n")
        }
    }

    /// A client's connection, closed once answered (or when let go unanswered).
    final class Connection: Sendable {
        private let descriptor: Mutex<Int32?>

        init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }

        func answer(_ text: String) {
            guard let descriptor = descriptor.withLock({ value -> Int32? in
                defer { value = nil }
                return value
            }) else { return }
            writeFully(descriptor, text.utf8)
            close(descriptor)
        }

        deinit { if let descriptor = descriptor.withLock({ $0 }) { close(descriptor) } }
    }

    /// The listening socket and the thread that accepts on it.
    final class Server: Sendable {
        let path: String
        private let listener: Int32
        private let thread: Mutex<PollingThread?> = Mutex(nil)

        /// Binds `path`, mode 0600. A live supervisor answering there is refused; a socket file
        /// no one listens on (a supervisor that died) is replaced; any other file is refused.
        ///
        /// - Throws: ``BadInput``: one line naming the path and what was expected.
        init(path: String) throws(BadInput) {
            self.path = path
            let named = "--socket \(path.echoed(limit: 256))"
            if let problem = ControlSocket.problem(with: path) {
                throw BadInput("\(named) \(problem); expected \(expectedPath)")
            }
            var status = stat()
            if lstat(path, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFSOCK else {
                    throw BadInput("\(named) is a file that is not a socket; expected \(expectedPath), or no file there")
                }
                if let live = try? ControlSocket.connect(path) {
                    close(live)
                    throw BadInput("\(named): another supervisor is listening there; expected one supervisor per socket (stop it with `mempressure ctl --socket \(path) quit`, or give another --socket)")
                }
                unlink(path)
            }
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw BadInput("\(named) cannot be made (\(Errno(rawValue: errno)))") }
            var (address, length) = ControlSocket.address(path)
            // The file is made 0600 from the start: no moment when another user could connect.
            let mask = umask(0o177)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            let bindError = errno
            umask(mask)
            guard bound == 0, listen(descriptor, 16) == 0 else {
                close(descriptor)
                throw BadInput("\(named) cannot be bound (\(Errno(rawValue: bound == 0 ? errno : bindError))); expected \(expectedPath)")
            }
            chmod(path, 0o600)
            listener = descriptor
        }

        /// Starts accepting; each request goes to `deliver`, which answers it.
        func start(deliver: @escaping @Sendable (Request) -> Void) throws(Errno) {
            let listener = listener
            let owner = geteuid()
            let started = try PollingThread(name: "ctl", waitingOn: [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]) { _ in
                let client = acceptClosingOnExec(listener)
                if client >= 0 {
                    let connection = Connection(client)
                    // struct ucred: pid, uid, gid.
                    var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
                    var size = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
                    let peerCredentials: Int32 = 17 // SO_PEERCRED
                    if getsockopt(client, SOL_SOCKET, peerCredentials, &credentials, &size) != 0
                        || (credentials.uid != owner && credentials.uid != 0) {
                        Request(line: "", connection: connection).fail("the supervisor's control socket accepts only its own user")
                    } else if let bytes = ControlSocket.readAll(client, limit: SuperviseConsole.longestLine, timeout: 2000, untilNewline: true),
                              let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                        deliver(Request(line: String(decoding: bytes[..<end], as: UTF8.self), connection: connection))
                    } else {
                        Request(line: "", connection: connection).fail("expected one command line of at most \(SuperviseConsole.longestLine) bytes, within 2 s")
                    }
                }
                return [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            }
            thread.withLock { $0 = started }
        }

        /// Stops accepting, closes the socket and removes its file.
        func stop() {
            let running = thread.withLock { thread -> PollingThread? in
                defer { thread = nil }
                return thread
            }
            running?.stop()
            guard !closed.exchange(true, ordering: .sequentiallyConsistent) else { return }
            unlink(path)
            close(listener)
        }

        private let closed = Atomic<Bool>(false)

        deinit { stop() }
    }
}
