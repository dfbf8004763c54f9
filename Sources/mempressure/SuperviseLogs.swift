import MemoryPressure
import SystemPackage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the apps' standard output and standard error go: a file per app (`DIR/NAME.log`,
/// appended to, reopened on ``reopen()`` so that logrotate may rename it), or the supervisor's
/// standard error with each line prefixed `NAME: `. Never the supervisor's standard output, where
/// `status` answers.
///
/// Each app's process writes into a FIFO of its own, in a private directory (mode 0700) the router
/// makes and removes: the app's command runs as `/bin/sh -c 'exec >"$0" 2>&1; exec "$@"' FIFO
/// PROGRAM ARGUMENTS…`, so its pid is the program's once `exec` has run. The router holds each FIFO
/// open for reading and writing, so a child's end is no end of file, and one thread of its own
/// copies what arrives to the file or to standard error.
final class LogRouter: Sendable {
    /// The directory of the files, or nil for standard error.
    let directory: String?
    /// The private directory of the FIFOs.
    private let pipes: String
    private struct Route {
        let fifo: Int32
        var output: Int32?
        /// The start of a line not yet ended, for prefixed output.
        var pending: [UInt8] = []
    }
    private let routes = Mutex<[String: Route]>([:])
    private let thread = Mutex<PollingThread?>(nil)

    init(directory: String?) throws(BadInput) {
        self.directory = directory
        var template = Array("/tmp/mempressure-logs-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BadInput("cannot make a private directory for the apps' output in /tmp (\(Errno(rawValue: errno)))")
        }
        pipes = String(cString: made)
    }

    /// Starts the thread that copies output.
    func start() throws(Errno) {
        let started = try PollingThread(name: "logs", waitingOn: []) { [self] ready in
            for descriptor in ready { copy(from: descriptor.fd) }
            return routes.withLock { $0.values.map { pollfd(fd: $0.fifo, events: Int16(POLLIN), revents: 0) } }
        }
        thread.withLock { $0 = started }
        started.nudge()
    }

    /// `process` with its output routed for the app `name`.
    func routed(_ process: ProcessSpecification, name: String) throws(MemoryPressureError) -> ProcessSpecification {
        let executable = try process.validated().executablePath
        let fifo = try self.fifo(for: name)
        var wrapped = process
        wrapped.executable = "/bin/sh"
        wrapped.arguments = ["-c", "exec >\"$0\" 2>&1; exec \"$@\"", fifo, executable] + process.arguments
        return wrapped
    }

    /// The FIFO of `name`, made and opened the first time.
    private func fifo(for name: String) throws(MemoryPressureError) -> String {
        let path = "\(pipes)/\(name)"
        let exists = routes.withLock { $0[name] != nil }
        if exists { return path }
        guard mkfifo(path, 0o600) == 0 || errno == EEXIST else {
            throw MemoryPressureError(.invalidConfiguration, "output of \(name) cannot be routed (mkfifo: \(Errno(rawValue: errno))); expected a writable /tmp")
        }
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw MemoryPressureError(.invalidConfiguration, "output of \(name) cannot be routed (open: \(Errno(rawValue: errno))); expected a writable /tmp")
        }
        let output = openOutput(name)
        routes.withLock { $0[name] = Route(fifo: descriptor, output: output) }
        thread.withLock { $0 }?.nudge()
        return path
    }

    /// `DIR/NAME.log` opened for appending, or nil for standard error.
    private func openOutput(_ name: String) -> Int32? {
        guard let directory else { return nil }
        let descriptor = open("\(directory)/\(name).log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Reopens every file, after logrotate has renamed them.
    func reopen() {
        guard directory != nil else { return }
        let names = routes.withLock { Array($0.keys) }
        for name in names {
            let fresh = openOutput(name)
            let old = routes.withLock { routes -> Int32? in
                let old = routes[name]?.output
                routes[name]?.output = fresh
                return old
            }
            if let old { close(old) }
        }
    }

    /// Copies what `fifo` holds now; returns the bytes read (0 or less when nothing was there).
    @discardableResult
    private func copy(from fifo: Int32) -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(fifo, $0.baseAddress, $0.count) }
        guard count > 0 else { return count }
        let bytes = chunk[..<count]
        // The write happens under the lock so that a reopen does not close the file under it; it
        // is a plain write to a file or to standard error, no call-out.
        routes.withLock { routes in
            guard let name = routes.first(where: { $0.value.fifo == fifo })?.key else { return }
            if let output = routes[name]?.output {
                writeFully(output, bytes)
            } else if directory == nil {
                var pending = routes[name]?.pending ?? []
                pending += bytes
                var lines: [UInt8] = []
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines += Array("\(name): ".utf8) + pending[...end]
                    pending.removeSubrange(...end)
                }
                if pending.count > 4096 {
                    lines += Array("\(name): ".utf8) + pending + [UInt8(ascii: "\n")]
                    pending.removeAll()
                }
                routes[name]?.pending = pending
                writeFully(STDERR_FILENO, lines)
            }
        }
        return count
    }

    /// Stops the thread, closes everything and removes the FIFOs.
    func stop() {
        let running = thread.withLock { thread -> PollingThread? in
            defer { thread = nil }
            return thread
        }
        running?.stop()
        // What the apps wrote last (they have ended: the system's shutdown came first).
        for fifo in routes.withLock({ $0.values.map(\.fifo) }) {
            while copy(from: fifo) > 0 {}
        }
        let all = routes.withLock { routes -> [String: Route] in
            defer { routes.removeAll() }
            return routes
        }
        for (name, route) in all {
            if !route.pending.isEmpty, directory == nil { writeFully(STDERR_FILENO, Array("\(name): ".utf8) + route.pending + [10]) }
            close(route.fifo)
            if let output = route.output { close(output) }
            unlink("\(pipes)/\(name)")
        }
        rmdir(pipes)
    }

    deinit { stop() }
}
