import SystemPackage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `--metrics HOST:PORT`: a minimal HTTP/1.1 responder serving Prometheus text on `GET /metrics`
/// (and 404 elsewhere, 405 for other methods), one request per connection, on a thread of its own.
final class MetricsServer: Sendable {
    static let expectedAddress = "an IPv4 address and a port, such as 127.0.0.1:9464 (port 0 picks a free one)"

    /// An IPv4 address and a port.
    struct Address: Equatable, CustomStringConvertible {
        var host: in_addr
        var port: UInt16

        init(parsing text: String) throws(BadInput) {
            let bad = BadInput("--metrics \(text.echoed(limit: 80)) is not an address; expected \(MetricsServer.expectedAddress)")
            guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { throw bad }
            var host = in_addr()
            let name = text[..<colon] == "localhost" ? "127.0.0.1" : String(text[..<colon])
            guard inet_pton(AF_INET, name, &host) == 1 else { throw bad }
            (self.host, self.port) = (host, port)
        }

        var description: String {
            var copy = host
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &copy, &buffer, socklen_t(buffer.count))
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            return "\(String(decoding: bytes, as: UTF8.self)):\(port)"
        }

        static func == (a: Address, b: Address) -> Bool { a.host.s_addr == b.host.s_addr && a.port == b.port }
    }

    /// The address bound (its port the one picked, for port 0).
    let address: String
    private let listener: Int32
    private let thread = Mutex<PollingThread?>(nil)

    /// Binds `text`.
    ///
    /// - Throws: ``BadInput``, one line.
    init(_ text: String) throws(BadInput) {
        var address = try Address(parsing: text)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BadInput("--metrics \(text.echoed(limit: 80)): cannot make a socket (\(Errno(rawValue: errno)))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = address.port.bigEndian
        socketAddress.sin_addr = address.host
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw BadInput("--metrics \(text.echoed(limit: 80)) cannot be bound (\(error)); expected \(Self.expectedAddress), free")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        address.port = UInt16(bigEndian: socketAddress.sin_port)
        self.address = address.description
        listener = descriptor
    }

    /// Starts answering; `render` makes the text of each scrape (on the server's thread).
    func start(render: @escaping @Sendable () -> String) throws(Errno) {
        let listener = listener
        let started = try PollingThread(name: "metrics", waitingOn: [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]) { _ in
            let client = acceptClosingOnExec(listener)
            if client >= 0 {
                Self.answer(client, render: render)
                close(client)
            }
            return [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        }
        thread.withLock { $0 = started }
    }

    private static func answer(_ client: Int32, render: () -> String) {
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while request.count < 16384, request.firstRange(of: end) == nil {
            var waiting = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 2000) > 0 else { return }
            let count = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            request += chunk[..<count]
        }
        let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let words = line.split(separator: " ")
        let status: String
        var body: String
        var type = "text/plain; charset=utf-8"
        if words.count != 3 || !words[2].hasPrefix("HTTP/1.") {
            (status, body) = ("400 Bad Request", "expected GET /metrics HTTP/1.1\n")
        } else if words[0] != "GET" && words[0] != "HEAD" {
            (status, body) = ("405 Method Not Allowed", "expected GET /metrics\n")
        } else if words[1] != "/metrics" && !words[1].hasPrefix("/metrics?") {
            (status, body) = ("404 Not Found", "expected GET /metrics\n")
        } else {
            (status, body) = ("200 OK", render())
            type = "text/plain; version=0.0.4; charset=utf-8"
        }
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        if words.first == "HEAD" { body = "" }
        writeFully(client, (head + body).utf8)
    }

    func stop() {
        let running = thread.withLock { thread -> PollingThread? in
            defer { thread = nil }
            return thread
        }
        running?.stop()
        if !closed.value.exchange(true, ordering: .sequentiallyConsistent) { close(listener) }
    }

    private let closed = StopFlag()

    deinit {
        stop()
    }
}

