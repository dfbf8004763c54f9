import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure ctl VERB [NAME]`: one command to a running `mempressure supervise`, through its
/// control socket.
struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one command to a running `mempressure supervise` through its control socket.",
        discussion: """
            Verbs: status (one line per app: NAME STATE FOOTPRINT MiB pid PID uptime SECONDS s restarts N frozen yes|no \
            last REASON EXIT; --json for a JSON array), foreground NAME, background NAME (each launches NAME if it is \
            not running), start NAME (launches it into the background, or the foreground if its "start" says so), \
            stop NAME, restart NAME, reload (reads the config again, as SIGHUP does), reopen-logs (reopens the apps' \
            log files, as SIGUSR1 does), quit (terminates every app and the supervisor).

            The socket is --socket, else \(ControlSocket.defaultPath) (for root /run/mempressure/supervise.sock, \
            else $XDG_RUNTIME_DIR/mempressure.sock, else /tmp/mempressure-UID.sock). Exit status: 0 done; 2 a bad \
            command, an unknown app or a bad socket path (one line on standard error, nothing changed); 1 no \
            supervisor answering on the socket.
            """
    )

    @Option(help: "The supervisor's control socket.")
    var socket: String?

    @Flag(help: "status as JSON, for machines.")
    var json = false

    @Argument(help: "The command: status, foreground NAME, background NAME, start NAME, stop NAME, restart NAME, reload, reopen-logs or quit.")
    var words: [String] = []

    static let usage = "status, foreground NAME, background NAME, start NAME, stop NAME, restart NAME, reload, reopen-logs or quit"

    func run() throws {
        let line = try Self.request(words, json: json)
        let path = socket ?? ControlSocket.defaultPath
        if let problem = ControlSocket.problem(with: path) {
            throw BadInput("--socket \(path.echoed(limit: 256)) \(problem); expected \(ControlSocket.expectedPath)")
        }
        let descriptor: Int32
        do {
            descriptor = try ControlSocket.connect(path)
        } catch {
            Self.report("no supervisor answers on \(path.echoed(limit: 256)) (\(error)); expected a running `mempressure supervise` with --socket \(path.echoed(limit: 256))")
            throw ExitCode(1)
        }
        defer { close(descriptor) }
        guard writeFully(descriptor, (line + "\n").utf8),
              let reply = ControlSocket.readAll(descriptor, limit: 16 << 20, timeout: 60_000) else {
            Self.report("the supervisor on \(path.echoed(limit: 256)) did not answer; expected an answer within 60 s")
            throw ExitCode(1)
        }
        let text = String(decoding: reply, as: UTF8.self)
        if text.hasPrefix("ok\n") {
            var output = StandardOutput()
            output.write(String(text.dropFirst(3)))
        } else if text.hasPrefix("error\n") {
            Self.report(String(text.dropFirst(6)).trimmingTrailingNewlines)
            throw ExitCode(2)
        } else {
            Self.report("the supervisor on \(path.echoed(limit: 256)) answered \(text.echoed(limit: 60)); expected ok or error")
            throw ExitCode(1)
        }
    }

    /// The line to send for `words`, checked here so that a bad command never reaches the daemon.
    static func request(_ words: [String], json: Bool) throws(BadInput) -> String {
        guard let verb = words.first else { throw BadInput("ctl needs a command; expected \(usage)") }
        let arguments = words.dropFirst()
        let named = ["foreground", "background", "start", "stop", "restart"]
        let alone = ["status", "reload", "reopen-logs", "quit"]
        if named.contains(verb) {
            guard arguments.count == 1, let name = arguments.first, !name.isEmpty else {
                throw BadInput("ctl \(verb) takes one app's name, not \(arguments.count); expected \(verb) NAME")
            }
            guard !name.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw BadInput("ctl \(verb) \(name.echoed(limit: 40)): an app's name holds no whitespace; expected \(verb) NAME")
            }
        } else if alone.contains(verb) {
            guard arguments.isEmpty else {
                throw BadInput("ctl \(verb) takes no arguments, not \(arguments.count); expected \(verb) alone")
            }
        } else {
            throw BadInput("ctl \(verb.echoed(limit: 40)) is not a command; expected \(usage)")
        }
        if json, verb != "status" {
            throw BadInput("ctl --json goes with status only; expected ctl --json status")
        }
        return (words + (json ? ["--json"] : [])).joined(separator: " ")
    }

    private static func report(_ message: String) {
        var standardError = StandardError()
        print("mempressure: \(message.escapedForTerminal(limit: MemPressure.longestErrorLine))", to: &standardError)
    }
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }
}
