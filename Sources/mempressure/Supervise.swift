import ArgumentParser
import Logging
import MemoryPressure
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure supervise --config FILE`: the commands of a JSON file run as apps under a memory
/// budget, moved between the foreground and the background by commands on standard input or
/// `mempressure ctl` through a control socket, until `quit` or SIGTERM/SIGINT.
struct Supervise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the commands of a JSON file as apps under a memory budget, as a daemon, until quit, SIGTERM or SIGINT.",
        discussion: """
            Each app is a child process with an app's lifecycle: the one with "start": "foreground" is launched active, \
            the others into the background, where they are frozen (or keep running, "inBackground": "run"); under \
            pressure the memory system warns them and terminates background apps, least important first.

            Control: `mempressure ctl [--socket PATH] VERB` through the control socket (--socket, or the file's \
            "socket", else \(ControlSocket.defaultPath); mode 0600, this user only; a second supervisor on a socket \
            a live one answers is refused, a stale socket file replaced), or the same commands on standard input, one \
            a line: `foreground NAME` (the app in the foreground before goes to the background; NAME is launched if \
            it is not running), `background NAME` (launched into the background if it is not running), `start NAME`, \
            `stop NAME`, `restart NAME`, `reload`, `reopen-logs`, `status` (on standard input: one line per app on \
            standard output, NAME STATE FOOTPRINT MiB pid PID) and `quit`. A bad line is one line on standard error. \
            The end of standard input does not quit (it may be /dev/null for a daemon). SIGHUP reloads the file, \
            SIGUSR1 reopens the log files; quit, SIGTERM and SIGINT terminate every app (willTerminate and SIGTERM \
            for running ones, SIGKILL at their deadline) and exit 0; signals during that shutdown are ignored.

            The file: {"budget": "auto" or a size such as "768MiB", "socket": PATH, "logs": DIR (each app's output \
            in DIR/NAME.log; without it, on standard error with each line prefixed NAME:), "metrics": "127.0.0.1:PORT" \
            (Prometheus text on GET /metrics), "warningInterval" (how often a warning repeats while the footprint \
            rises at a raised level, 25s; none repeats while nothing is left to reclaim), "compression" (auto: \
            suspended and background apps are paged out to a zram swap device, where one is on, before any is \
            terminated; or off), \
            "apps": [{"name", "command" (an array, or a string for /bin/sh -c), \
            "start" (foreground or background), "inBackground" (suspend or run), "importance" (cached, service, \
            perceptible or foreground), "channel" (none, client, systemd or signal:NAME), "limits" ({"soft", "hard", \
            "foreground": {…}, "background": {…}}), "env" (added to this environment), "cwd", "restart" (never, \
            on-failure or always), "restartDelay" (1s, doubling at each attempt up to "restartDelayMax", 60s), \
            "startRetries" (3 restarts in a row before giving up; a run of 10 s resets the count), "protected" \
            (true: never terminated for pressure), "launchGrace" (how long an app launched into the background \
            runs before it may be frozen, 10s by default)}]}. An app the \
            system terminated for pressure or its own limit is not restarted by policy (iOS does not relaunch a \
            jettisoned app): foreground NAME or start NAME launches it again. A bad file is one line on standard error \
            and exit status 2 (on reload: the one line, and nothing changes). Terminations are logged on standard \
            error with their reason and how the process ended.
            """
    )

    @Option(help: "The JSON file of the budget and the apps.")
    var config: String

    @Option(help: "The control socket's path (default: the file's \"socket\", else \(ControlSocket.defaultPath)).")
    var socket: String?

    @Option(help: "Serve Prometheus text on HOST:PORT, GET /metrics (default: the file's \"metrics\", else none).")
    var metrics: String?

    @Flag(help: "Log the memory system's notices and routine steps too (launches, pressure levels, purges).")
    var verbose = false

    func run() async throws {
        let file: SuperviseConfiguration
        do {
            file = try SuperviseConfiguration.load(config, limits: Self.limits)
        } catch {
            throw BadInput(error.description)
        }
        let logger = Self.logger(level: verbose ? .info : .notice)
        let logs = try LogRouter(directory: file.logs)
        defer { logs.stop() }

        var configuration = MemorySystem.Configuration(budget: file.budget, logger: Self.logger(level: verbose ? .info : .warning))
        configuration.compression = file.compression
        if let interval = file.warningInterval { configuration.monitor.repeatInterval = interval }
        let system = try MemorySystem(configuration: configuration)
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let board = FleetBoard(system: system)
        let fleet = Fleet(system: system, logger: logger, logs: logs, board: board, configPath: config, continuation: continuation)
        for entry in file.apps {
            do throws(MemoryPressureError) {
                try fleet.add(entry)
            } catch {
                throw BadInput(SuperviseConfiguration.Problem(field: entry.field, app: entry.identifier.rawValue, cause: error).from(SuperviseConfiguration.source(config)).description)
            }
        }

        // After the apps are checked: a bad file is its own error, whatever the socket.
        let socketPath = socket ?? file.socket ?? ControlSocket.defaultPath
        if socket == nil, file.socket == nil, geteuid() == 0 {
            mkdir("/run/mempressure", 0o700)
        }
        let control = try ControlSocket.Server(path: socketPath)
        defer { control.stop() }
        let metricsServer = try (metrics ?? file.metrics).map { text throws(BadInput) in try MetricsServer(text) }
        defer { metricsServer?.stop() }
        // Replies to `status` go to standard output, which may be a pipe whose reader goes away.
        signal(SIGPIPE, SIG_IGN)
        Signals.install()
        let observation = system.events.observe { event in
            switch event {
            case .termination(let record):
                board.countTermination(record.app, reason: record.reason)
                logger.notice("\(record)", metadata: record.decision.map(Self.metadata(of:)))
                continuation.yield(.terminated(record))
            case .warning(_, let step):
                board.countWarning(step: "\(step)")
            default:
                break
            }
        }
        defer { observation.cancel() }

        let running = Task {
            do {
                try await system.run()
                continuation.yield(.runEnded(nil))
            } catch {
                continuation.yield(.runEnded(error))
            }
        }
        let signals = Task {
            while !Task.isCancelled {
                for signal in Signals.take() { continuation.yield(.signal(signal)) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { signals.cancel() }
        let notifier = SystemdNotifier()
        let watchdog = notifier.watchdogInterval.map { interval in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    continuation.yield(.watchdog)
                }
            }
        }
        defer { watchdog?.cancel() }

        try logs.start()
        try control.start { continuation.yield(.control($0)) }
        try metricsServer?.start { board.metricsText() }
        let metricsNote = metricsServer.map { ", metrics on http://\($0.address)/metrics" } ?? ""
        logger.notice("supervising \(file.apps.count) \(file.apps.count == 1 ? "app" : "apps"), budget \(ByteCount(system.budget.totalBytes)), control socket \(socketPath)\(metricsNote)")
        // Lines read while the apps launch wait in the stream.
        try SuperviseConsole.startReading(STDIN_FILENO) { continuation.yield(.input($0)) }
        await fleet.launchAll()
        notifier.send("READY=1\nSTATUS=supervising \(fleet.members.count) apps")

        var failure: (any Error)?
        loop: for await event in events {
            switch event {
            case .input(.line(let line)):
                fleet.lineNumber += 1
                let result = await fleet.handle(line, from: .console)
                switch result {
                case .quit:
                    logger.notice("quit: terminating every app")
                    break loop
                case .done(let text):
                    if !text.isEmpty {
                        var output = StandardOutput()
                        output.write(text)
                    }
                case .failed(let message):
                    fleet.report("line \(fleet.lineNumber): \(message)")
                }
            case .input(.tooLong):
                fleet.lineNumber += 1
                fleet.report("line \(fleet.lineNumber) is longer than \(SuperviseConsole.longestLine) bytes and was skipped; expected \(SuperviseConsole.usage)")
            case .input(.end):
                // Said quietly when the input is /dev/null (a daemon's), where its end is expected.
                logger.log(level: Self.inputIsNullDevice ? .info : .notice, "standard input ended; supervising until quit, SIGTERM or SIGINT")
            case .control(let request):
                switch await fleet.handle(request.line, from: .control) {
                case .quit:
                    request.succeed("quitting: terminating every app\n")
                    logger.notice("ctl quit: terminating every app")
                    break loop
                case .done(let text):
                    request.succeed(text)
                case .failed(let message):
                    request.fail(message)
                }
            case .signal(SIGHUP):
                logger.notice("SIGHUP: reloading \(config)")
                notifier.send("RELOADING=1")
                if case .failed(let message) = await fleet.reload() { fleet.report(message) }
                notifier.send("READY=1")
            case .signal(SIGUSR1):
                logs.reopen()
                logger.notice("SIGUSR1: reopened the apps' log files")
            case .signal(let number):
                logger.notice("\(Interruption.name(number)): terminating every app")
                break loop
            case .terminated(let record):
                fleet.terminated(record)
            case .restartDue(let identifier, let token):
                await fleet.restartDue(identifier, token: token)
            case .watchdog:
                notifier.send("WATCHDOG=1")
            case .runEnded(let error):
                failure = error ?? CancellationError()
                break loop
            }
        }
        notifier.send("STOPPING=1")
        fleet.stopRestarts()
        control.stop()
        running.cancel()
        await running.value
        await system.shutDown()
        if let failure {
            fleet.report("the memory system stopped: \(failure)")
            throw ExitCode(1)
        }
    }

    /// What the supervisor waits for.
    enum Event: Sendable {
        case input(SuperviseConsole.Input)
        case control(ControlSocket.Request)
        case signal(Int32)
        /// An app was terminated (its record, as the system published it).
        case terminated(TerminationRecord)
        /// A restart by policy is due, unless something else happened to the app since (`token`).
        case restartDue(AppIdentifier, token: Int)
        /// Time to tell systemd the supervisor is alive.
        case watchdog
        /// The memory system's run ended (it ends only when cancelled, or when it cannot start).
        case runEnded((any Error)?)
    }

    /// Whether standard input is a character device other than a terminal: `/dev/null`.
    private static var inputIsNullDevice: Bool {
        var status = stat()
        return fstat(STDIN_FILENO, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR && isatty(STDIN_FILENO) == 0
    }

    /// The machine's limits, read with warnings only: a notice would break the one-line error.
    static var limits: MemoryLimits {
        MemoryLimits.current(logger: logger(level: .warning))
    }

    /// A logger writing to standard error from `level` up.
    /// A ladder decision's figures in bytes, for a termination's log line: what a reader or a tool
    /// checks a kill against (footprint above target, and never more than the run's measurement
    /// less what its earlier terminations returned).
    private static func metadata(of decision: TerminationRecord.LadderDecision) -> Logger.Metadata {
        [
            "footprint": "\(decision.footprintBytes)", "target": "\(decision.targetBytes)",
            "runFootprint": "\(decision.runFootprintBytes)", "earlierReturned": "\(decision.earlierReturnedBytes)",
        ]
    }

    private static func logger(level: Logger.Level) -> Logger {
        Logger(label: "mempressure") { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

extension Supervise {
    /// SIGINT and SIGTERM start the shutdown, and later ones are ignored (the tool's other commands
    /// exit at once on a second signal, ``Interruption``; the supervisor must not, or the apps'
    /// processes would be left with no one to end them). SIGHUP reloads the file and SIGUSR1
    /// reopens the log files, each as often as sent.
    enum Signals {
        /// The signals received and not yet taken, a bit each.
        private static let pending = Atomic<UInt64>(0)

        static let handled = [SIGINT, SIGTERM, SIGHUP, SIGUSR1]

        /// Installs the handlers.
        static func install() {
            for signal in handled {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { number in
                    // Async-signal-safe: a lock-free or.
                    Signals.pending.bitwiseOr(1 << UInt64(number), ordering: .sequentiallyConsistent)
                }
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(signal, &action, nil)
            }
        }

        /// The signals received since the last call.
        static func take() -> [Int32] {
            let bits = pending.exchange(0, ordering: .sequentiallyConsistent)
            return handled.filter { bits & (1 << UInt64($0)) != 0 }
        }
    }
}
