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
/// budget, moved between the foreground and the background by commands on standard input, until
/// `quit` or a signal.
struct Supervise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the commands of a JSON file as apps under a memory budget, until quit or interrupted.",
        discussion: """
            Each app is a child process with an app's lifecycle: the one with "start": "foreground" is launched active, \
            the others into the background, where they are frozen (or keep running, "inBackground": "run"); under \
            pressure the memory system warns them and terminates background apps, least important first.

            Commands on standard input, one a line: `foreground NAME` (the app in the foreground before goes to the \
            background; NAME is launched if it is not running), `background NAME`, `status` (one line per app on \
            standard output: NAME STATE FOOTPRINT MiB pid PID, with - for the pid of an app not running) and `quit`. \
            A bad line is one line on standard error. The end of standard input does not quit (standard input may be \
            /dev/null for a daemon): quit, SIGTERM, SIGINT and SIGHUP terminate every app (willTerminate and SIGTERM \
            for running ones, SIGKILL at their deadline) and exit 0; signals during that shutdown are ignored.

            The file: {"budget": "auto" or a size such as "768MiB", "apps": [{"name", "command" (an array, or a \
            string for /bin/sh -c), "start" (foreground or background), "inBackground" (suspend or run), \
            "importance" (cached, service, perceptible or foreground), "channel" (none, client, systemd or \
            signal:NAME), "limits" ({"soft", "hard", "foreground": {…}, "background": {…}}), "env" (added to this \
            environment), "cwd"}]}. A bad file is one line on standard error and exit status 2. Terminations are \
            logged on standard error with their reason and how the process ended.
            """
    )

    @Option(help: "The JSON file of the budget and the apps.")
    var config: String

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
        let system = try MemorySystem(configuration: .init(budget: file.budget, logger: Self.logger(level: verbose ? .info : .warning)))
        var apps: [(entry: SuperviseConfiguration.AppEntry, app: App)] = []
        for entry in file.apps {
            do {
                let app = try system.register(
                    entry.identifier, process: entry.process, configuration: entry.configuration, limits: entry.limits, options: entry.options
                )
                apps.append((entry, app))
            } catch {
                throw BadInput(SuperviseConfiguration.Problem(field: entry.field, app: entry.identifier.rawValue, cause: error).from(SuperviseConfiguration.source(config)).description)
            }
        }

        // Replies to `status` go to standard output, which may be a pipe whose reader goes away.
        signal(SIGPIPE, SIG_IGN)
        Signals.install()
        let terminations = system.events.observe { event in
            if case .termination(let record) = event { logger.notice("\(record)") }
        }
        defer { terminations.cancel() }

        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
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
                if let signal = Signals.received {
                    continuation.yield(.signal(signal))
                    return
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { signals.cancel() }
        logger.notice("supervising \(apps.count) \(apps.count == 1 ? "app" : "apps"), budget \(ByteCount(system.budget.totalBytes))")
        // Lines read while the apps launch wait in the stream.
        try SuperviseConsole.startReading(STDIN_FILENO) { continuation.yield(.input($0)) }
        await Self.launch(apps, logger: logger)

        let session = Session(apps: apps, system: system, logger: logger)
        var failure: (any Error)?
        loop: for await event in events {
            switch event {
            case .input(.line(let line)):
                session.lineNumber += 1
                if await session.handle(line) == .quit {
                    logger.notice("quit: terminating every app")
                    break loop
                }
            case .input(.tooLong):
                session.lineNumber += 1
                session.report("line \(session.lineNumber) is longer than \(SuperviseConsole.longestLine) bytes and was skipped; expected \(SuperviseConsole.usage)")
            case .input(.end):
                // Said quietly when the input is /dev/null (a daemon's), where its end is expected.
                logger.log(level: Self.inputIsNullDevice ? .info : .notice, "standard input ended; supervising until SIGTERM, SIGINT or SIGHUP")
            case .signal(let number):
                logger.notice("\(Interruption.name(number)): terminating every app")
                break loop
            case .runEnded(let error):
                failure = error ?? CancellationError()
                break loop
            }
        }
        running.cancel()
        await running.value
        await system.shutDown()
        if let failure {
            session.report("the memory system stopped: \(failure)")
            throw ExitCode(1)
        }
    }

    /// What the supervisor waits for.
    private enum Event: Sendable {
        case input(SuperviseConsole.Input)
        case signal(Int32)
        /// The memory system's run ended (it ends only when cancelled, or when it cannot start).
        case runEnded((any Error)?)
    }

    /// Launches every app at once: the foreground one active, the others into the background.
    private static func launch(_ apps: [(entry: SuperviseConfiguration.AppEntry, app: App)], logger: Logger) async {
        await withTaskGroup(of: Void.self) { group in
            for (entry, app) in apps {
                group.addTask {
                    let options = entry.start == .foreground ? LaunchOptions() : Session.backgroundLaunch
                    do {
                        let state = try await app.launch(options: options)
                        if state == .notRunning {
                            logger.warning("app \(app.identifier) did not start", metadata: ["reason": "\(app.terminationReason.map(\.description) ?? "unknown")"])
                        }
                    } catch {
                        logger.warning("app \(app.identifier) could not be launched: \(error)")
                    }
                }
            }
        }
    }

    /// Whether standard input is a character device other than a terminal: `/dev/null`.
    private static var inputIsNullDevice: Bool {
        var status = stat()
        return fstat(STDIN_FILENO, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR && isatty(STDIN_FILENO) == 0
    }

    /// The machine's limits, read with warnings only: a notice would break the one-line error.
    private static var limits: MemoryLimits {
        MemoryLimits.current(logger: logger(level: .warning))
    }

    /// A logger writing to standard error from `level` up.
    private static func logger(level: Logger.Level) -> Logger {
        Logger(label: "mempressure") { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

extension Supervise {
    /// SIGINT, SIGTERM and SIGHUP while supervising: the first starts the shutdown, and later ones
    /// are ignored. The tool's other commands exit at once on a second signal (``Interruption``);
    /// the supervisor must not, or the apps' processes would be left running, or frozen, with no one
    /// to end them (`timeout` and an impatient Ctrl-C send a second one). The shutdown ends within
    /// the apps' termination deadlines.
    enum Signals {
        /// The first signal received, or 0.
        private static let first = Atomic<Int32>(0)

        /// Installs the handlers.
        static func install() {
            for signal in Interruption.signals {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { number in
                    // Async-signal-safe: a lock-free exchange.
                    _ = Signals.first.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
                }
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(signal, &action, nil)
            }
        }

        /// The first signal received, if any.
        static var received: Int32? {
            let number = first.load(ordering: .sequentiallyConsistent)
            return number == 0 ? nil : number
        }
    }

    /// The commands read from standard input, carried out one at a time.
    final class Session {
        let apps: [(entry: SuperviseConfiguration.AppEntry, app: App)]
        let system: MemorySystem
        let logger: Logger
        /// The number of the line being handled, for messages.
        var lineNumber = 0

        /// The options of a launch into the background.
        static let backgroundLaunch = LaunchOptions(reason: .backgroundEvent("mempressure supervise"))

        init(apps: [(entry: SuperviseConfiguration.AppEntry, app: App)], system: MemorySystem, logger: Logger) {
            self.apps = apps
            self.system = system
            self.logger = logger
        }

        /// Carries out the command on `line`; a bad one is reported on standard error.
        func handle(_ line: String) async -> SuperviseConsole.Command? {
            let command: SuperviseConsole.Command?
            do {
                command = try SuperviseConsole.parse(line)
            } catch {
                report("line \(lineNumber): \(error)")
                return nil
            }
            switch command {
            case nil, .quit?:
                break
            case .status?:
                var output = StandardOutput()
                output.write(apps.map { entry, app in
                    SuperviseConsole.statusLine(name: entry.identifier.rawValue, state: app.state, process: system.process(of: app.identifier))
                }.joined(separator: "\n") + "\n")
            case .foreground(let name)?:
                guard let app = app(named: name, command: "foreground") else { break }
                for (_, other) in apps where other !== app && [.active, .inactive].contains(other.state) {
                    await transition("foreground \(name): moving \(other.identifier) to the background", of: other) { () throws(MemoryPressureError) in
                        try await other.enterBackground()
                    }
                }
                await transition("foreground \(name)", of: app) { () throws(MemoryPressureError) in
                    switch app.state {
                    case .notRunning: try await app.launch()
                    case .background, .suspended: try await app.enterForeground()
                    case .inactive: try await app.activate()
                    case .active: .active
                    }
                }
            case .background(let name)?:
                guard let app = app(named: name, command: "background") else { break }
                await transition("background \(name)", of: app) { () throws(MemoryPressureError) in
                    switch app.state {
                    case .notRunning: try await app.launch(options: Self.backgroundLaunch)
                    case .active, .inactive: try await app.enterBackground()
                    case .background, .suspended: app.state
                    }
                }
            }
            return command
        }

        /// The app named `name`, or nil after saying there is none.
        private func app(named name: String, command: String) -> App? {
            if let found = apps.first(where: { $0.entry.identifier.rawValue == name }) { return found.app }
            report("line \(lineNumber): \(command) \(name.echoed(limit: 40)): no such app; expected one of \(apps.map(\.entry.identifier.rawValue).joined(separator: ", "))")
            return nil
        }

        /// Runs `move`, which moves `app`, reporting an error, or the app's end on the way, as `what`.
        private func transition(_ what: String, of app: App, _ move: () async throws(MemoryPressureError) -> AppState) async {
            do {
                if try await move() == .notRunning {
                    report("line \(lineNumber): \(what): app \(app.identifier) is not running (terminated for \(app.terminationReason.map(\.description) ?? "a reason unknown"))")
                }
            } catch {
                report("line \(lineNumber): \(what): \(error)")
            }
        }

        /// One line on standard error: `mempressure: …`.
        func report(_ message: String) {
            var standardError = StandardError()
            print("mempressure: \(message.split(whereSeparator: \.isNewline).joined(separator: " ").escapedForTerminal(limit: MemPressure.longestErrorLine))", to: &standardError)
        }
    }
}
