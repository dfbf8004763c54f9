import Logging
import MemoryPressure
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The supervisor's apps, and what it does with them: commands, restarts by policy, reloads.
///
/// Used by the supervisor's main loop alone (one command or event at a time); what other threads
/// read (the metrics server) it publishes on its ``FleetBoard``.
final class Fleet {
    /// One app of the file.
    struct Member {
        var entry: SuperviseConfiguration.AppEntry
        /// The app registered for it under the file's name; a reload that changes the entry
        /// unregisters it and registers a new one.
        var app: App
        /// Launches by the supervisor after the first: by policy, `restart`, and `start` of an app
        /// that ended.
        var restarts = 0
        /// Restarts by policy in a row, reset by a run of ``SuperviseConfiguration/RestartPolicy/stableRun``
        /// and by a command.
        var attempts = 0
        /// When its process was last launched, while it runs.
        var launchedAt: ContinuousClock.Instant?
        var lastTermination: TerminationRecord?
        /// Bumped by anything that overtakes a restart scheduled by policy.
        var token = 0
        /// The sleep before a restart by policy.
        var pendingRestart: Task<Void, Never>?

        var name: String { entry.identifier.rawValue }
    }

    enum Origin { case console, control }

    enum Result {
        case done(String)
        case failed(String)
        case quit
    }

    private(set) var members: [Member] = []
    let system: MemorySystem
    let logger: Logger
    let logs: LogRouter
    let board: FleetBoard
    let configPath: String
    let continuation: AsyncStream<Supervise.Event>.Continuation
    /// The number of the standard input line being handled, for messages.
    var lineNumber = 0

    /// The options of a launch into the background.
    static let backgroundLaunch = LaunchOptions(reason: .backgroundEvent("mempressure supervise"))

    init(
        system: MemorySystem, logger: Logger, logs: LogRouter, board: FleetBoard, configPath: String,
        continuation: AsyncStream<Supervise.Event>.Continuation
    ) {
        (self.system, self.logger, self.logs, self.board, self.configPath, self.continuation) = (system, logger, logs, board, configPath, continuation)
    }

    // MARK: Registration

    /// Registers `entry`'s app under its name and adds it last.
    func add(_ entry: SuperviseConfiguration.AppEntry) throws(MemoryPressureError) {
        members.append(Member(entry: entry, app: try register(entry)))
        publish()
    }

    private func register(_ entry: SuperviseConfiguration.AppEntry) throws(MemoryPressureError) -> App {
        let process = try logs.routed(entry.process, name: entry.identifier.rawValue)
        return try system.register(entry.identifier, process: process, configuration: entry.configuration, limits: entry.limits, options: entry.options)
    }

    /// Terminates `app` if it runs and removes it from the system, so that its name can be
    /// registered again; nil when done, else what failed.
    private func retire(_ app: App, _ what: String) async -> String? {
        if app.state != .notRunning, let failure = await stop(app, what) { return failure }
        do throws(MemoryPressureError) {
            try system.unregister(app.identifier)
            return nil
        } catch {
            return "\(what): \(error)"
        }
    }

    private func index(of name: String) -> Int? {
        members.firstIndex { $0.name == name }
    }

    /// What the metrics server reads.
    private func publish() {
        board.set(members.map { FleetBoard.Row(name: $0.name, app: $0.app, restarts: $0.restarts) })
    }

    // MARK: Launching

    /// Launches every app at once: the foreground one active, the others into the background.
    func launchAll() async {
        let launches = members.map { ($0.name, $0.app, $0.entry.start) }
        let logger = logger
        await withTaskGroup(of: Void.self) { group in
            for (_, app, start) in launches {
                group.addTask {
                    let options = start == .foreground ? LaunchOptions() : Fleet.backgroundLaunch
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
        let now = ContinuousClock.now
        for index in members.indices where members[index].app.state != .notRunning {
            members[index].launchedAt = now
        }
    }

    /// Launches the app at `index` as its `start` says: into the foreground when it starts there
    /// and no other app is in the foreground, else into the background.
    private func launch(_ index: Int) async -> String? {
        let app = members[index].app
        let foreground = members[index].entry.start == .foreground
            && !members.contains { $0.app !== app && [.active, .inactive].contains($0.app.state) }
        members[index].launchedAt = ContinuousClock.now
        return await transition("launch \(members[index].name)", of: app) { () throws(MemoryPressureError) in
            try await app.launch(options: foreground ? LaunchOptions() : Self.backgroundLaunch)
        }
    }

    /// Runs `move`; nil when done, else what went wrong (an error, or the app's end on the way).
    private func transition(_ what: String, of app: App, _ move: () async throws(MemoryPressureError) -> AppState) async -> String? {
        do {
            if try await move() == .notRunning {
                return "\(what): app \(app.identifier) is not running (terminated for \(app.terminationReason.map(\.description) ?? "a reason unknown"))"
            }
            return nil
        } catch {
            return "\(what): \(error)"
        }
    }

    /// Terminates `app` (reason explicit); nil when done, else the error.
    private func stop(_ app: App, _ what: String) async -> String? {
        do {
            _ = try await app.terminate(reason: .explicit)
            return nil
        } catch {
            return "\(what): \(error)"
        }
    }

    /// Cancels a pending restart of the app at `index`, and any later one scheduled before now.
    private func overtake(_ index: Int) {
        members[index].token += 1
        members[index].pendingRestart?.cancel()
        members[index].pendingRestart = nil
    }

    /// Cancels every pending restart (the shutdown).
    func stopRestarts() {
        for index in members.indices { overtake(index) }
    }

    // MARK: Commands

    /// Carries out the command on `line`.
    func handle(_ line: String, from origin: Origin) async -> Result {
        let command: SuperviseConsole.Command?
        do {
            command = try SuperviseConsole.parse(line, json: origin == .control)
        } catch {
            return .failed("\(error)")
        }
        guard let command else {
            return origin == .control ? .failed("an empty command; expected \(SuperviseConsole.usage)") : .done("")
        }
        switch command {
        case .quit:
            return .quit
        case .status(let json):
            switch (origin, json) {
            case (.console, _): return .done(consoleStatus())
            case (.control, false): return .done(status().map(\.line).joined(separator: "\n") + "\n")
            case (.control, true): return .done(statusJSON())
            }
        case .reload:
            return await reload()
        case .reopenLogs:
            logs.reopen()
            logger.notice("reopened the apps' log files")
            return .done(logs.directory == nil ? "no log files: the apps' output goes to the supervisor's standard error\n" : "reopened the log files in \(logs.directory!)\n")
        case .foreground(let name), .background(let name), .start(let name), .stop(let name), .restart(let name):
            guard let index = index(of: name) else {
                return .failed("\(name.echoed(limit: 40)): no such app; expected one of \(members.map(\.name).joined(separator: ", "))")
            }
            overtake(index)
            members[index].attempts = 0
            let app = members[index].app
            var failure: String?
            switch command {
            case .foreground:
                for other in members.map(\.app) where other !== app && [.active, .inactive].contains(other.state) {
                    failure = await transition("foreground \(name): moving \(other.identifier) to the background", of: other) { () throws(MemoryPressureError) in
                        try await other.enterBackground()
                    } ?? failure
                }
                if app.state == .notRunning { launched(index) }
                failure = await transition("foreground \(name)", of: app) { () throws(MemoryPressureError) in
                    switch app.state {
                    case .notRunning: try await app.launch()
                    case .background, .suspended: try await app.enterForeground()
                    case .inactive: try await app.activate()
                    case .active: .active
                    }
                } ?? failure
            case .background:
                if app.state == .notRunning { launched(index) }
                failure = await transition("background \(name)", of: app) { () throws(MemoryPressureError) in
                    switch app.state {
                    case .notRunning: try await app.launch(options: Self.backgroundLaunch)
                    case .active, .inactive: try await app.enterBackground()
                    case .background, .suspended: app.state
                    }
                }
            case .start:
                guard app.state == .notRunning else { return .done("\(name) is already running (\(app.state))\n") }
                members[index].restarts += members[index].lastTermination == nil ? 0 : 1
                failure = await launch(index)
            case .stop:
                guard app.state != .notRunning else { return .done("\(name) is not running\n") }
                failure = await stop(app, "stop \(name)")
            case .restart:
                if app.state != .notRunning {
                    _ = await stop(app, "restart \(name)")
                }
                members[index].restarts += 1
                failure = await launch(index)
            default:
                break
            }
            publish()
            if let failure { return .failed(failure) }
            return .done(origin == .control ? "\(name) \(members[index].app.state)\n" : "")
        }
    }

    /// Notes a launch by a command, from not running.
    private func launched(_ index: Int) {
        if members[index].lastTermination != nil { members[index].restarts += 1 }
        members[index].launchedAt = ContinuousClock.now
    }

    /// `status` on standard input: one six-word line per app.
    private func consoleStatus() -> String {
        members.map { member in
            SuperviseConsole.statusLine(name: member.name, state: member.app.state, process: system.process(of: member.app.identifier))
        }.joined(separator: "\n") + "\n"
    }

    /// One app's status, for `ctl status`.
    struct Status: Encodable {
        var name: String
        var state: String
        var footprintBytes: Int
        var pid: Int32?
        var uptimeSeconds: Double?
        var restarts: Int
        var frozen: Bool
        var restart: String
        var lastTermination: LastTermination?

        struct LastTermination: Encodable {
            var reason: String
            var state: String
            var exit: String?
            var footprintBytes: Int
        }

        /// `editor active 12.0 MiB pid 4242 uptime 3.1s restarts 0 frozen no last -`, or
        /// `… last processExited exit:1`: words split on spaces, `-` for none.
        var line: String {
            let mebibytes = DecimalText.format(Double(footprintBytes) / Double(1 << 20), places: 1)
            let last = lastTermination.map { "\($0.reason) \($0.exit ?? "-")" } ?? "- -"
            return "\(name) \(state) \(mebibytes) MiB pid \(pid.map(String.init) ?? "-") uptime \(uptimeSeconds.map { DecimalText.format($0, places: 1) + "s" } ?? "-") "
                + "restarts \(restarts) frozen \(frozen ? "yes" : "no") last \(last)"
        }
    }

    func status() -> [Status] {
        let now = ContinuousClock.now
        return members.map { member in
            let process = system.process(of: member.app.identifier)
            let state = member.app.state
            let uptime = state == .notRunning ? nil : member.launchedAt.map { now - $0 }
            return Status(
                name: member.name, state: "\(state)", footprintBytes: process?.footprintBytes ?? 0, pid: process?.pid,
                uptimeSeconds: uptime.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 },
                restarts: member.restarts, frozen: process?.isFrozen ?? false, restart: member.entry.restart.when.rawValue,
                lastTermination: member.lastTermination.map { record in
                    Status.LastTermination(
                        reason: record.reason.rawValue, state: "\(record.state)", exit: record.processExit.map(Self.exitWord),
                        footprintBytes: record.footprintBytes
                    )
                }
            )
        }
    }

    private func statusJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(status()) else { return "[]\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `exit:1`, `signal:9`, `unknown`.
    static func exitWord(_ exit: ProcessExit) -> String {
        switch exit {
        case .exited(let status): "exit:\(status)"
        case .signaled(let signal, _, _, _): "signal:\(signal)"
        default: "unknown"
        }
    }

    // MARK: Restarts by policy

    /// An app was terminated: restarts it by its policy when its process ended by itself.
    func terminated(_ record: TerminationRecord) {
        guard let index = members.firstIndex(where: { $0.app.identifier == record.app }) else { return }
        let launchedAt = members[index].launchedAt
        members[index].lastTermination = record
        members[index].launchedAt = nil
        let name = members[index].name
        let policy = members[index].entry.restart
        let failed: Bool
        switch record.reason {
        case .processExited:
            if case .exited(status: 0)? = record.processExit { failed = false } else { failed = true }
        case .processKilled:
            failed = true
        case .systemPressure, .perAppLimit:
            if policy.when != .never {
                logger.notice("app \(name) is not restarted: the system terminated it for \(record.reason), as iOS does not relaunch a jettisoned app; `ctl start \(name)` or `foreground \(name)` launches it")
            }
            return
        default:
            return
        }
        guard policy.when == .always || (policy.when == .onFailure && failed) else { return }
        if let launchedAt, ContinuousClock.now - launchedAt >= SuperviseConfiguration.RestartPolicy.stableRun {
            members[index].attempts = 0
        }
        members[index].attempts += 1
        let attempt = members[index].attempts
        guard attempt <= policy.retries else {
            logger.error("app \(name) gave up: \(policy.retries) restarts in a row ended (restart \(policy.when.rawValue), startRetries \(policy.retries)); `ctl start \(name)` launches it again")
            return
        }
        let delay = policy.delay(before: attempt)
        logger.notice("app \(name) restarts in \(delay) (attempt \(attempt) of \(policy.retries), restart \(policy.when.rawValue))")
        overtake(index)
        let token = members[index].token
        let identifier = record.app
        let continuation = continuation
        members[index].pendingRestart = Task {
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            continuation.yield(.restartDue(identifier, token: token))
        }
    }

    /// A restart by policy whose delay has passed.
    func restartDue(_ identifier: AppIdentifier, token: Int) async {
        guard let index = members.firstIndex(where: { $0.app.identifier == identifier }), members[index].token == token,
              members[index].app.state == .notRunning else { return }
        members[index].pendingRestart = nil
        members[index].restarts += 1
        publish()
        if let failure = await launch(index) {
            logger.warning("restart of \(members[index].name) failed: \(failure)")
        }
    }

    // MARK: Reload

    /// Reads the file again: apps added are registered and launched, removed ones terminated,
    /// changed ones terminated and launched anew; unchanged ones are left as they are. A bad file
    /// changes nothing.
    func reload() async -> Result {
        let file: SuperviseConfiguration
        do {
            file = try SuperviseConfiguration.load(configPath, limits: Supervise.limits)
        } catch {
            return .failed("reload refused, nothing changed: \(error)")
        }
        let source = SuperviseConfiguration.source(configPath)
        // Checked before anything changes: what registration would refuse.
        for entry in file.apps {
            if let index = index(of: entry.identifier.rawValue), members[index].entry.source == entry.source { continue }
            do throws(MemoryPressureError) {
                _ = try entry.process.validated()
            } catch {
                return .failed("reload refused, nothing changed: " + SuperviseConfiguration.Problem(field: entry.field, app: entry.identifier.rawValue, cause: error).from(source).description)
            }
        }
        if file.budget.totalBytes != system.budget.totalBytes {
            logger.warning("reload: the budget is the one the supervisor started with (\(ByteCount(system.budget.totalBytes))); a new budget takes a restart of the supervisor")
        }
        var removed: [String] = []
        var added: [String] = []
        var changed: [String] = []
        var kept: [Member] = []
        var failures: [String] = []
        let newNames = Set(file.apps.map(\.identifier.rawValue))
        for index in members.indices where !newNames.contains(members[index].name) {
            overtake(index)
            if let failure = await retire(members[index].app, "reload: stop \(members[index].name)") { failures.append(failure) }
            removed.append(members[index].name)
        }
        var toLaunch: [Int] = []
        for entry in file.apps {
            let name = entry.identifier.rawValue
            if let index = index(of: name) {
                var member = members[index]
                if member.entry.source == entry.source {
                    member.entry.field = entry.field
                    kept.append(member)
                    continue
                }
                overtake(index)
                if let failure = await retire(member.app, "reload: stop \(name)") {
                    failures.append(failure)
                    kept.append(member)
                    continue
                }
                do throws(MemoryPressureError) {
                    member.app = try register(entry)
                } catch {
                    failures.append("reload: \(name): \(error)")
                    continue
                }
                member.entry = entry
                member.attempts = 0
                member.launchedAt = nil
                member.lastTermination = nil
                kept.append(member)
                toLaunch.append(kept.count - 1)
                changed.append(name)
            } else {
                do throws(MemoryPressureError) {
                    kept.append(Member(entry: entry, app: try register(entry)))
                } catch {
                    failures.append("reload: \(name): \(error)")
                    continue
                }
                toLaunch.append(kept.count - 1)
                added.append(name)
            }
        }
        members = kept
        for index in toLaunch {
            if let failure = await launch(index) { failures.append(failure) }
        }
        publish()
        let summary = "reloaded \(configPath): added \(Self.list(added)), removed \(Self.list(removed)), changed \(Self.list(changed)), \(members.count - added.count - changed.count) unchanged"
        logger.notice("\(summary)")
        if !failures.isEmpty { return .failed(summary + "; but " + failures.joined(separator: "; ")) }
        return .done(summary + "\n")
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: " ")
    }

    /// One line on standard error: `mempressure: …`.
    func report(_ message: String) {
        var standardError = StandardError()
        print("mempressure: \(message.split(whereSeparator: \.isNewline).joined(separator: " ").escapedForTerminal(limit: MemPressure.longestErrorLine))", to: &standardError)
    }
}

/// What the metrics server reads of the fleet, from its own thread: the apps (whose state and
/// footprint it reads when scraped, outside this lock) and the counters.
final class FleetBoard: Sendable {
    struct Row: Sendable {
        var name: String
        var app: App
        var restarts: Int
    }

    private struct Counts {
        var rows: [Row] = []
        var warnings: [String: Int] = [:]
        var terminations: [String: [TerminationReason: Int]] = [:]
    }

    private let system: MemorySystem
    private let counts = Mutex(Counts())

    init(system: MemorySystem) { self.system = system }

    func set(_ rows: [Row]) { counts.withLock { $0.rows = rows } }
    func countWarning(step: String) { counts.withLock { $0.warnings[step, default: 0] += 1 } }
    /// Counts a termination, as the system publishes it (before the main loop hears of it).
    func countTermination(_ identifier: AppIdentifier, reason: TerminationReason) {
        counts.withLock { counts in
            let name = counts.rows.first { $0.app.identifier == identifier }?.name ?? identifier.rawValue
            counts.terminations[name, default: [:]][reason, default: 0] += 1
        }
    }

    /// The Prometheus text exposition: the service module's names where they overlap
    /// (`memory_pressure_app_footprint_bytes`, `memory_pressure_terminations_total`,
    /// `memory_pressure_warnings_total`, `memory_pressure_budget_bytes`).
    func metricsText() -> String {
        let counts = counts.withLock { $0 }
        let states: [AppState] = [.notRunning, .inactive, .active, .background, .suspended]
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP memory_pressure_\(name) \(help)\n# TYPE memory_pressure_\(name) \(type)\n"
        }
        func label(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        }
        family("budget_bytes", "gauge", "The budget in force.")
        text += "memory_pressure_budget_bytes \(system.budget.totalBytes)\n"
        family("app_footprint_bytes", "gauge", "Each app's footprint: its process's memory.")
        let processes = counts.rows.map { system.process(of: $0.app.identifier) }
        for (row, process) in zip(counts.rows, processes) {
            text += "memory_pressure_app_footprint_bytes{app=\"\(label(row.name))\"} \(process?.footprintBytes ?? 0)\n"
        }
        family("app_state", "gauge", "1 for each app's state, 0 for the others.")
        for row in counts.rows {
            let current = row.app.state
            for state in states {
                text += "memory_pressure_app_state{app=\"\(label(row.name))\",state=\"\(state)\"} \(state == current ? 1 : 0)\n"
            }
        }
        family("app_frozen", "gauge", "1 while an app's process is frozen.")
        for (row, process) in zip(counts.rows, processes) {
            text += "memory_pressure_app_frozen{app=\"\(label(row.name))\"} \(process?.isFrozen == true ? 1 : 0)\n"
        }
        family("app_restarts_total", "counter", "Launches of an app by the supervisor after its first.")
        for row in counts.rows {
            text += "memory_pressure_app_restarts_total{app=\"\(label(row.name))\"} \(row.restarts)\n"
        }
        family("terminations_total", "counter", "Terminations, by reason.")
        for reason in TerminationReason.allCases {
            let total = counts.terminations.values.reduce(0) { $0 + ($1[reason] ?? 0) }
            text += "memory_pressure_terminations_total{reason=\"\(reason.rawValue)\"} \(total)\n"
        }
        family("app_terminations_total", "counter", "Terminations of each app, by reason.")
        for row in counts.rows {
            for reason in TerminationReason.allCases {
                text += "memory_pressure_app_terminations_total{app=\"\(label(row.name))\",reason=\"\(reason.rawValue)\"} \(counts.terminations[row.name]?[reason] ?? 0)\n"
            }
        }
        family("warnings_total", "counter", "Memory-warning fan-outs, by step.")
        for step in ["warning", "softLimit"] {
            text += "memory_pressure_warnings_total{step=\"\(step)\"} \(counts.warnings[step] ?? 0)\n"
        }
        return text
    }
}

/// `sd_notify`: datagrams to `$NOTIFY_SOCKET` (a path, or `@` for the abstract namespace), and the
/// watchdog's interval, half of `$WATCHDOG_USEC`, when it is meant for this process.
struct SystemdNotifier {
    private let path: String?
    let watchdogInterval: Duration?

    init() {
        path = getenv("NOTIFY_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        let forUs = getenv("WATCHDOG_PID").map { Int32(String(cString: $0)) == getpid() } ?? true
        if forUs, let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = Int64(text), microseconds > 0 {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    func send(_ message: String) {
        guard let path, path.utf8.count <= ControlSocket.longestPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var (address, length) = ControlSocket.address(path)
        if path.hasPrefix("@") {
            withUnsafeMutableBytes(of: &address.sun_path) { $0[0] = 0 }
            length -= 1
        }
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), target, length) }
            }
        }
    }
}
