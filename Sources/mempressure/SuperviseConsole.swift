import MemoryPressure
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure supervise`'s line protocol on standard input, one command a line:
///
/// ```
/// foreground NAME   NAME to the foreground (launched if not running); the app there before goes to the background
/// background NAME   NAME to the background (launched into it if not running)
/// status            one line per app on standard output: NAME STATE FOOTPRINT MiB pid PID
/// quit              terminate every app (willTerminate, SIGTERM, SIGKILL at the deadline) and exit 0
/// ```
///
/// Blank lines and lines starting with `#` are ignored. A bad line is one line on standard error,
/// and the supervisor goes on. The end of standard input is not `quit`: a supervisor run as a
/// daemon, its standard input `/dev/null`, would otherwise stop as it starts. It goes on until
/// `quit` or SIGTERM, SIGINT or SIGHUP.
enum SuperviseConsole {
    /// One command.
    enum Command: Equatable {
        case foreground(String)
        case background(String)
        /// Launches the app as its `start` says, if it is not running.
        case start(String)
        /// Terminates the app; no restart by policy follows.
        case stop(String)
        /// Terminates the app if it runs, and launches it as its `start` says.
        case restart(String)
        /// `status`, or `status --json` (through `ctl` only).
        case status(json: Bool)
        case reload
        case reopenLogs
        case quit

        static let status = Command.status(json: false)
    }

    /// What standard input gave.
    enum Input: Sendable, Equatable {
        /// A line, without its newline (nor a carriage return before it).
        case line(String)
        /// A line longer than ``longestLine`` bytes, skipped.
        case tooLong
        /// The end of standard input, or a read that failed.
        case end
    }

    /// The accepted commands, as messages state them.
    static let usage = "foreground NAME, background NAME, start NAME, stop NAME, restart NAME, status, reload, reopen-logs or quit"

    /// The longest line read, in bytes; the rest of a longer line is skipped.
    static let longestLine = 4096

    /// The command on `line`; nil for a blank line or a comment.
    ///
    /// - Throws: ``BadLine`` naming the word that is wrong and what is accepted.
    static func parse(_ line: String, json: Bool = false) throws(BadLine) -> Command? {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first, !verb.hasPrefix("#") else { return nil }
        let arguments = words.dropFirst()
        switch verb {
        case "foreground", "background", "start", "stop", "restart":
            guard let name = arguments.first else {
                throw BadLine("\(verb) needs an app's name; expected \(verb) NAME")
            }
            guard arguments.count == 1 else {
                throw BadLine("\(verb) takes one app's name, not \(arguments.count) words; expected \(verb) NAME")
            }
            switch verb {
            case "foreground": return .foreground(name)
            case "background": return .background(name)
            case "start": return .start(name)
            case "stop": return .stop(name)
            default: return .restart(name)
            }
        case "status" where Array(arguments) == ["--json"] && json:
            return .status(json: true)
        case "status", "quit", "reload", "reopen-logs":
            guard arguments.isEmpty else {
                throw BadLine("\(verb) takes no arguments; expected \(verb) alone")
            }
            switch verb {
            case "status": return .status
            case "quit": return .quit
            case "reload": return .reload
            default: return .reopenLogs
            }
        default:
            throw BadLine("\(verb.echoed(limit: 40)) is not a command; expected \(usage)")
        }
    }

    /// A line that is not a command: what is wrong, and what is accepted.
    struct BadLine: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    /// `status`'s line for an app: `editor active 12.0 MiB pid 4242`, or
    /// `thumbs notRunning 0.0 MiB pid -` for one whose process does not run. Always six words, the
    /// footprint in MiB with one decimal, so a script can split it on spaces.
    static func statusLine(name: String, state: AppState, process: ProcessAppStatus?) -> String {
        let mebibytes = DecimalText.format(Double(process?.footprintBytes ?? 0) / Double(1 << 20), places: 1)
        return "\(name) \(state) \(mebibytes) MiB pid \(process.map { "\($0.pid)" } ?? "-")"
    }

    // MARK: Reading standard input

    /// Reads lines from `descriptor` on a thread of its own (a blocking read must not hold one of
    /// the few threads of Swift's cooperative pool) and hands each to `deliver`, then ``Input/end``
    /// once at its end. The thread is detached; it ends with the input, or with the process.
    ///
    /// - Throws: The error of `pthread_create`.
    static func startReading(_ descriptor: Int32, deliver: @escaping @Sendable (Input) -> Void) throws(Errno) {
        let start = Unmanaged.passRetained(Reading(descriptor: descriptor, deliver: deliver)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Reading>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<Reading>.fromOpaque(start).release()
            throw Errno(rawValue: status)
        }
        pthread_detach(thread)
    }

    /// The reader thread's work.
    private final class Reading: Sendable {
        let descriptor: Int32
        let deliver: @Sendable (Input) -> Void

        init(descriptor: Int32, deliver: @escaping @Sendable (Input) -> Void) {
            self.descriptor = descriptor
            self.deliver = deliver
        }

        func run() {
            var splitter = LineSplitter()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                for input in splitter.append(chunk[..<count]) { deliver(input) }
            }
            for input in splitter.finish() { deliver(input) }
            deliver(.end)
        }
    }

    /// Cuts bytes into lines of at most ``longestLine`` bytes.
    struct LineSplitter {
        private var pending: [UInt8] = []
        /// Whether the line under way is too long, and skipped to its newline.
        private var skipping = false

        /// The lines `bytes` completes.
        mutating func append(_ bytes: some Collection<UInt8>) -> [Input] {
            var inputs: [Input] = []
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if let input = take() { inputs.append(input) }
                } else if !skipping {
                    pending.append(byte)
                    if pending.count > SuperviseConsole.longestLine {
                        pending.removeAll()
                        skipping = true
                    }
                }
            }
            return inputs
        }

        /// The last line, when the input ends without a newline.
        mutating func finish() -> [Input] {
            guard !pending.isEmpty || skipping else { return [] }
            return take().map { [$0] } ?? []
        }

        private mutating func take() -> Input? {
            defer {
                pending.removeAll(keepingCapacity: true)
                skipping = false
            }
            if skipping { return .tooLong }
            if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
            return .line(String(decoding: pending, as: UTF8.self))
        }
    }
}
