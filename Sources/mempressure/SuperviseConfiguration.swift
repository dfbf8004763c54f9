import MemoryPressure
import SystemPackage

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

/// The file `mempressure supervise --config` reads: the budget, and the commands to run as apps.
///
/// ```json
/// {
///   "budget": "auto",
///   "apps": [
///     { "name": "editor", "command": ["python3", "editor.py"], "start": "foreground", "importance": "foreground" },
///     { "name": "indexer", "command": ["./indexer"], "inBackground": "run", "channel": "systemd" },
///     { "name": "thumbs", "command": "./thumbs --fast", "limits": { "soft": "256MiB", "hard": "512MiB" } }
///   ]
/// }
/// ```
///
/// - `budget`: `"auto"` (the default: 90% of the cgroup's limit, else of physical memory, following
///   the limit as it changes) or a size such as `"768MiB"` (or a number of bytes), at most the
///   cgroup's `memory.max` or the machine's memory.
/// - `warningInterval`: how often warnings are repeated while the level stays raised and the
///   footprint rises (a duration, `"25s"` by default); none is repeated while the ladder rests with
///   nothing left to reclaim.
/// - `compression`: `"auto"` (the default: under critical pressure, suspended and background apps
///   are paged out to a zram swap device, where one is on, before any is terminated) or `"off"`.
/// - `apps`: at least one app, each an object of:
///   - `name` (required): the app's name, unique in the file, without whitespace (the console's
///     commands name apps by it);
///   - `command` (required): an array of the program and its arguments (the program a path, or a
///     name looked up in `PATH`), or a string run with `/bin/sh -c`;
///   - `start`: `foreground` (at most one app) or `background` (the default);
///   - `inBackground`: `suspend` (the default: frozen once in the background) or `run`;
///   - `importance`: `cached`, `service` (the default), `perceptible` or `foreground`;
///   - `channel`: how the process hears of memory warnings and its lifecycle: `none` (the default),
///     `client`, `systemd`, or `signal:NAME` (`signal:USR1`, `signal:SIGUSR1` or `signal:10`);
///   - `limits`: the app's own memory limits: `soft` and `hard` sizes for every state, and
///     `foreground` and `background` objects of `soft` and `hard` that override them in those
///     states;
///   - `env`: an object of variables added to the supervisor's environment;
///   - `cwd`: the process's working directory;
///   - `protected`: `true` for an app never terminated for memory pressure, whatever its state
///     (`oom_score_adj` -1000 where the supervisor may set it); any number of apps;
///   - `launchGrace`: how long the app, launched into the background, runs before it may be frozen
///     (a duration, `"10s"` by default, up to `"10m"`); a `client` app needs none.
///
/// Relative paths (`cwd`, a program given as a relative path) are taken from the supervisor's own
/// working directory, not the file's. Unknown keys, values of the wrong kind or out of range,
/// duplicate names and two `foreground` apps are errors, each one line naming the key, the app and
/// what is accepted (``Problem``).
struct SuperviseConfiguration {
    /// Where an app starts.
    enum Start: String, CaseIterable {
        /// Launched as the user's app: active.
        case foreground
        /// Launched into the background, as for a background event.
        case background
    }

    /// One app of the file, ready to register.
    struct AppEntry {
        var identifier: AppIdentifier
        var process: ProcessSpecification
        var start: Start
        var configuration: AppConfiguration
        var limits: AppMemoryLimits
        var options: ProcessAppOptions
        /// Where the file gives it: `apps[2]`.
        var field: String
        /// When the supervisor launches the app again after its process ends by itself.
        var restart: RestartPolicy = RestartPolicy()
        /// The app's object as the file gives it: a reload restarts the app when it differs.
        var source: JSONValue = .null
    }

    /// `restart`, `restartDelay`, `restartDelayMax` and `startRetries`: whether an app whose
    /// process ends by itself is launched again, after a delay that doubles with each attempt up to
    /// its cap, and how many attempts in a row before giving up. An app the system terminated (for
    /// pressure or its own limit) is never restarted by policy, as iOS does not relaunch a
    /// jettisoned app; nor is one ended by the supervisor (`stop`, `quit`, a reload).
    struct RestartPolicy: Equatable {
        enum When: String, CaseIterable {
            /// Never (the default).
            case never
            /// When the process exits with a status other than 0, or is killed by a signal.
            case onFailure = "on-failure"
            /// Whenever the process ends by itself.
            case always
        }
        var when: When = .never
        /// The first delay (1 s by default).
        var delay: Duration = .seconds(1)
        /// The longest delay (60 s by default).
        var maximumDelay: Duration = .seconds(60)
        /// Restarts in a row, without a run of ``stableRun`` between them, before giving up (3 by default).
        var retries = 3
        /// A run at least this long resets the attempts and the delay.
        static let stableRun: Duration = .seconds(10)

        /// The delay before attempt `attempt` (1 for the first restart): `delay` doubled, at most
        /// `maximumDelay`.
        func delay(before attempt: Int) -> Duration {
            var delay = self.delay
            for _ in 1..<max(1, attempt) {
                delay *= 2
                if delay >= maximumDelay { return maximumDelay }
            }
            return min(delay, maximumDelay)
        }
    }

    /// The budget the apps are held to.
    var budget: MemoryBudget
    /// The apps, in the file's order.
    var apps: [AppEntry]
    /// `socket`: the control socket's path, when the file gives one.
    var socket: String?
    /// `logs`: the directory of the apps' log files (`NAME.log`); nil for the supervisor's
    /// standard error, each line prefixed with the app's name.
    var logs: String?
    /// `metrics`: the address (`127.0.0.1:9464`) to serve Prometheus text on, when the file gives one.
    var metrics: String?
    /// `warningInterval`: how often a warning is repeated while the level stays raised and the
    /// footprint keeps rising (the monitor's repeat interval); nil for its default, 25 s.
    var warningInterval: Duration?
    /// `compression`: whether suspended and background apps are compressed before any is terminated.
    var compression: Compression = .automatic

    /// The largest file read: 1 MiB, far beyond any real configuration.
    static let maximumSize = 1 << 20

    /// The configuration in the file at `path`, its budget checked against `limits`.
    static func load(_ path: String, limits: MemoryLimits) throws(Problem) -> SuperviseConfiguration {
        let source = Self.source(path)
        let bytes = try read(path, source: source)
        return try parse(bytes, source: source, limits: limits)
    }

    /// How errors name the file at `path`: `--config "apps.json"`.
    static func source(_ path: String) -> String {
        "--config \(path.echoed(limit: 256))"
    }

    /// The contents of the regular file at `path`, opened without waiting (a FIFO would wait for a
    /// writer) and refused unless it is a regular file of at most ``maximumSize``.
    private static func read(_ path: String, source: String) throws(Problem) -> [UInt8] {
        let unreadable = { (problem: String, expected: String) in Problem(source: source, problem: problem, expected: expected) }
        let tooLarge = unreadable("is larger than \(ByteCount(maximumSize))", "a JSON file of at most \(ByteCount(maximumSize))")
        do {
            let file = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
            return try file.closeAfter {
                var status = stat()
                guard fstat(file.rawValue, &status) == 0 else { throw Errno(rawValue: errno) }
                if let kind = FileKind.irregular(status.st_mode) {
                    throw unreadable("is \(kind)", "a regular JSON file")
                }
                guard Int(status.st_size) <= maximumSize else { throw tooLarge }
                return try file.readToEnd(limit: maximumSize)
            }
        } catch let problem as Problem {
            throw problem
        } catch Errno.fileTooLarge {
            throw tooLarge
        } catch {
            throw unreadable("cannot be read (\(error))", "a readable JSON file")
        }
    }

    /// The configuration in `bytes`; errors name `source`.
    static func parse(
        _ bytes: [UInt8], source: String, limits: MemoryLimits, hostEnvironment: [String: String] = hostEnvironment
    ) throws(Problem) -> SuperviseConfiguration {
        guard bytes.contains(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) else {
            throw Problem(source: source, problem: "is empty", expected: "a JSON object with \"apps\" and optionally \"budget\"")
        }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw Problem(source: source, problem: "is not valid JSON (\(reason(error)))", expected: "a JSON object with \"apps\" and optionally \"budget\"")
        }
        do {
            return try Reader(hostEnvironment: hostEnvironment, machineLimits: limits).configuration(document)
        } catch {
            throw error.from(source)
        }
    }

    private static func reason(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "\(error)" }
        return context.underlyingError.map { "\($0)" } ?? context.debugDescription
    }

    /// The supervisor's environment, which `env` adds to.
    static var hostEnvironment: [String: String] { ProcessSpecification.hostEnvironment }
}

// MARK: Errors

extension SuperviseConfiguration {
    /// A configuration that cannot run, in one line: the file, the key (`apps[1].channel`) and the
    /// app it belongs to, what is wrong with the value given, and what is accepted.
    ///
    /// ```
    /// --config "apps.json": apps[1].channel (app "indexer") "usr1" is not a channel; expected none, client, systemd or signal:NAME …
    /// ```
    struct Problem: Error, CustomStringConvertible {
        private var source: String?
        private let field: String?
        private let app: String?
        private let message: String

        /// `problem` with the value at `field`, of `app`; `expected` is what is accepted.
        init(source: String? = nil, field: String? = nil, app: String? = nil, problem: String, expected: String) {
            self.source = source
            self.field = field
            self.app = app
            message = "\(problem); expected \(expected)"
        }

        /// The value at `field`, of `app`, refused by the library: its message names the value and
        /// what is accepted.
        init(field: String?, app: String?, cause: MemoryPressureError) {
            source = nil
            self.field = field
            self.app = app
            message = "\(cause)"
        }

        /// The problem, in the file `source`.
        func from(_ source: String) -> Problem {
            var problem = self
            problem.source = source
            return problem
        }

        var description: String {
            let place = [field, app.map { "(app \($0.echoed(limit: 40)))" }].compactMap(\.self).joined(separator: " ")
            let line = [source.map { "\($0):" }, place.isEmpty ? nil : place, message].compactMap(\.self).joined(separator: " ")
            return line.split(whereSeparator: \.isNewline).joined(separator: " ").escapedForTerminal()
        }
    }
}

// MARK: Reading

extension SuperviseConfiguration {
    /// Any JSON value, as the decoder reads it; the reader checks it key by key.
    enum JSONValue: Decodable, Equatable {
        case null
        case bool(Bool)
        case integer(Int)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        private struct AnyKey: CodingKey {
            let stringValue: String
            let intValue: Int?
            init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
            init?(intValue: Int) { (stringValue, self.intValue) = ("\(intValue)", intValue) }
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: AnyKey.self) {
                var fields: [String: JSONValue] = [:]
                for key in object.allKeys { fields[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
                self = .object(fields)
            } else if var array = try? decoder.unkeyedContainer() {
                var elements: [JSONValue] = []
                while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
                self = .array(elements)
            } else {
                let value = try decoder.singleValueContainer()
                if value.decodeNil() { self = .null }
                else if let bool = try? value.decode(Bool.self) { self = .bool(bool) }
                else if let integer = try? value.decode(Int.self) { self = .integer(integer) }
                else if let number = try? value.decode(Double.self) { self = .number(number) }
                else { self = .string(try value.decode(String.self)) }
            }
        }

        /// What the value is, for messages: `the number 7`, `the string "x"`, `an array`.
        var found: String {
            switch self {
            case .null: "null"
            case .bool(let bool): "\(bool)"
            case .integer(let integer): "the number \(integer)"
            case .number(let number): "the number \(number)"
            case .string(let string): "the string \(string.echoed())"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }

    /// Reads the document into a configuration, checking every key; its errors have no source yet.
    private struct Reader {
        let hostEnvironment: [String: String]
        let machineLimits: MemoryLimits

        func configuration(_ document: JSONValue) throws(Problem) -> SuperviseConfiguration {
            let fields = try Fields(
                document, field: nil, app: nil, keys: ["budget", "apps", "socket", "logs", "metrics", "warningInterval", "compression"],
                expected: "a JSON object with \"apps\" and optionally \"budget\", \"socket\", \"logs\", \"metrics\", \"warningInterval\" and \"compression\""
            )
            let budget = try self.budget(fields)
            guard let entries = fields["apps"] else {
                throw Problem(field: "apps", problem: "is missing", expected: "an array of apps, each an object with \"name\" and \"command\"")
            }
            guard case .array(let values) = entries, !values.isEmpty else {
                throw Problem(field: "apps", problem: entries.isEmptyArray ? "is empty" : "is \(entries.found)", expected: "an array of at least one app, each an object with \"name\" and \"command\"")
            }
            var apps: [AppEntry] = []
            var places: [AppIdentifier: String] = [:]
            for (index, value) in values.enumerated() {
                let app = try self.app(value, field: "apps[\(index)]")
                if let first = places[app.identifier] {
                    throw Problem(
                        field: "\(app.field).name", app: app.identifier.rawValue, problem: "is given twice (also at \(first))",
                        expected: "a name of its own for each app"
                    )
                }
                places[app.identifier] = app.field
                apps.append(app)
            }
            let foreground = apps.filter { $0.start == .foreground }
            if foreground.count > 1 {
                throw Problem(
                    field: "\(foreground[1].field).start", app: foreground[1].identifier.rawValue,
                    problem: "\"foreground\" is given to a second app (\(foreground[0].identifier.rawValue.echoed(limit: 40)) at \(foreground[0].field) starts in the foreground)",
                    expected: "at most one app with \"start\": \"foreground\", the others \"background\""
                )
            }
            let socket = try fields.string("socket", expected: "the path of the control socket, such as \"/run/mempressure/supervise.sock\"")
            if let socket, let problem = ControlSocket.problem(with: socket) {
                throw fields.problem("socket", problem, expected: ControlSocket.expectedPath)
            }
            let logs = try fields.string("logs", expected: "the path of an existing directory for the apps' log files")
            if let logs {
                var status = stat()
                guard !logs.isEmpty, stat(logs, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                    throw fields.problem("logs", "\(logs.echoed(limit: 80)) is not an existing directory", expected: "the path of an existing directory for the apps' log files")
                }
            }
            let metrics = try fields.string("metrics", expected: MetricsServer.expectedAddress)
            if let metrics, (try? MetricsServer.Address(parsing: metrics)) == nil {
                throw fields.problem("metrics", "\(metrics.echoed(limit: 80)) is not an address", expected: MetricsServer.expectedAddress)
            }
            let compression: Compression
            switch try fields.string("compression", expected: Self.compressionForms) {
            case nil, "auto": compression = .automatic
            case "off": compression = .off
            case let text?: throw fields.problem("compression", "\(text.echoed(limit: 40)) is not a setting", expected: Self.compressionForms)
            }
            return SuperviseConfiguration(
                budget: budget, apps: apps, socket: socket, logs: logs, metrics: metrics,
                warningInterval: try fields.duration("warningInterval"), compression: compression
            )
        }

        /// The accepted forms of `compression`, as messages state them.
        static let compressionForms = "\"auto\" (compress suspended apps to zram where a zram swap device is on) or \"off\""

        private func budget(_ fields: Fields) throws(Problem) -> MemoryBudget {
            let expected = "\"auto\" or a size such as \"768MiB\", at most the cgroup's limit or the machine's memory"
            do {
                switch fields["budget"] {
                case nil, .null, .string("auto"):
                    return try MemoryBudget.resolve(.automatic(), limits: machineLimits)
                case .string(let text):
                    return try MemoryBudget(parsing: text, limits: machineLimits)
                case .integer(let bytes):
                    return try MemoryBudget(totalBytes: bytes, limits: machineLimits)
                case let value?:
                    throw Problem(field: "budget", problem: "is \(value.found)", expected: expected)
                }
            } catch let problem as Problem {
                throw problem
            } catch let error as MemoryPressureError {
                throw Problem(field: "budget", app: nil, cause: error)
            } catch {
                throw Problem(field: "budget", problem: "cannot be resolved (\(error))", expected: expected)
            }
        }

        private static let appKeys = [
            "name", "command", "start", "inBackground", "importance", "channel", "limits", "env", "cwd",
            "restart", "restartDelay", "restartDelayMax", "startRetries", "protected", "launchGrace",
        ]

        private func app(_ value: JSONValue, field: String) throws(Problem) -> AppEntry {
            var fields = try Fields(value, field: field, app: nil, keys: Self.appKeys, expected: "an object with \"name\" and \"command\"")
            let expectedName = "a name of 1 to \(AppIdentifier.maximumByteCount) bytes without whitespace, '/', '\\' or control characters"
            guard let name = try fields.string("name", expected: expectedName) else {
                throw Problem(field: fields.path("name"), problem: "is missing", expected: expectedName)
            }
            let identifier: AppIdentifier
            do {
                identifier = try AppIdentifier(name)
            } catch {
                throw Problem(field: fields.path("name"), app: nil, cause: error)
            }
            if name.contains(where: \.isWhitespace) {
                throw Problem(field: fields.path("name"), problem: "\(name.echoed(limit: 40)) holds whitespace", expected: expectedName)
            }
            fields.app = name

            var process = try command(fields)
            if let directory = try fields.string("cwd", expected: "the path of a directory") {
                guard !directory.isEmpty else {
                    throw fields.problem("cwd", "is empty", expected: "the path of a directory")
                }
                process.workingDirectory = FilePath(directory)
            }
            if let variables = try environment(fields) {
                process.environment = hostEnvironment.merging(variables) { _, given in given }
            }

            let start: Start = try fields.choice("start", noun: "a start") ?? .background
            let background: ProcessAppOptions.BackgroundMode = try fields.choice("inBackground", noun: "a background mode") ?? .suspend
            let importance: AppImportance = try fields.choice("importance", noun: "an importance") ?? .service
            let channel = try self.channel(fields)
            let isProtected: Bool
            switch fields["protected"] {
            case nil, .null: isProtected = false
            case .bool(let value): isProtected = value
            case let value?: throw fields.problem("protected", "is \(value.found)", expected: "true or false")
            }
            let configuration: AppConfiguration
            do {
                configuration = try AppConfiguration(importance: importance, isProtected: isProtected)
            } catch {
                throw Problem(field: fields.path("importance"), app: name, cause: error)
            }
            var options = ProcessAppOptions(channel: channel, inBackground: background)
            if let grace = try fields.duration("launchGrace") {
                guard ProcessAppOptions.acceptedLaunchGraces.contains(grace) else {
                    throw fields.problem("launchGrace", "\(grace) is out of range", expected: "a duration from 0 to 10m")
                }
                options.launchGrace = grace
            }
            return AppEntry(
                identifier: identifier, process: process, start: start, configuration: configuration,
                limits: try memoryLimits(fields), options: options, field: field,
                restart: try restart(fields), source: value
            )
        }

        /// `restart`, `restartDelay`, `restartDelayMax`, `startRetries`.
        private func restart(_ fields: Fields) throws(Problem) -> RestartPolicy {
            var policy = RestartPolicy()
            policy.when = try fields.choice("restart", noun: "a restart policy") ?? .never
            if let delay = try fields.duration("restartDelay") { policy.delay = delay }
            if let cap = try fields.duration("restartDelayMax") { policy.maximumDelay = cap }
            if policy.maximumDelay < policy.delay {
                throw fields.problem("restartDelayMax", "is shorter than restartDelay", expected: "a duration at least restartDelay's")
            }
            switch fields["startRetries"] {
            case nil, .null: break
            case .integer(let count) where (0...1000).contains(count): policy.retries = count
            case let value?: throw fields.problem("startRetries", "is \(value.found)", expected: "a whole number from 0 to 1000")
            }
            return policy
        }

        /// `command`: an array of the program and its arguments, or a string for `/bin/sh -c`.
        private func command(_ fields: Fields) throws(Problem) -> ProcessSpecification {
            let expected = "an array of the program and its arguments, such as [\"python3\", \"editor.py\"], or a string run with /bin/sh -c"
            switch fields["command"] {
            case nil, .null:
                throw fields.problem("command", "is missing", expected: expected)
            case .string(let line):
                guard line.contains(where: { !$0.isWhitespace }) else { throw fields.problem("command", "is empty", expected: expected) }
                return .shell(line)
            case .array(let values):
                guard !values.isEmpty else { throw fields.problem("command", "is empty", expected: expected) }
                var words: [String] = []
                for (index, value) in values.enumerated() {
                    guard case .string(let word) = value else {
                        throw fields.problem("command[\(index)]", "is \(value.found)", expected: "each element a string")
                    }
                    words.append(word)
                }
                guard !words[0].isEmpty else {
                    throw fields.problem("command[0]", "is empty", expected: "the program first: a path, or a name found in PATH")
                }
                return ProcessSpecification(executable: words[0], arguments: Array(words.dropFirst()))
            case let value?:
                throw fields.problem("command", "is \(value.found)", expected: expected)
            }
        }

        /// `env`: an object of strings.
        private func environment(_ fields: Fields) throws(Problem) -> [String: String]? {
            let expected = "an object of variables, such as {\"LANG\": \"C.UTF-8\"}, each value a string"
            switch fields["env"] {
            case nil, .null:
                return nil
            case .object(let values):
                var variables: [String: String] = [:]
                for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                    let field = "env.\(name.escapedForTerminal(limit: 40))"
                    guard !name.isEmpty, !name.contains("="), !name.utf8.contains(0) else {
                        throw fields.problem(field, "is not a valid variable name", expected: "a name that is not empty and holds no '=' or NUL")
                    }
                    guard case .string(let text) = value else {
                        throw fields.problem(field, "is \(value.found)", expected: "a string")
                    }
                    guard !text.utf8.contains(0) else {
                        throw fields.problem(field, "holds a NUL character", expected: "a string without NUL")
                    }
                    variables[name] = text
                }
                return variables
            case let value?:
                throw fields.problem("env", "is \(value.found)", expected: expected)
            }
        }

        /// The accepted forms of `channel`, as messages state them.
        static let channelForms = "none, client, systemd or signal:NAME (such as signal:USR1, signal:SIGUSR1 or signal:10)"

        /// `channel`: `none`, `client`, `systemd` or `signal:NAME`.
        private func channel(_ fields: Fields) throws(Problem) -> ProcessAppOptions.Channel {
            guard let text = try fields.string("channel", expected: Self.channelForms) else { return .none }
            switch text {
            case "none": return .none
            case "client": return .client
            case "systemd": return .systemd
            default: break
            }
            guard text.hasPrefix("signal:") else {
                throw fields.problem("channel", "\(text.echoed(limit: 40)) is not a channel", expected: Self.channelForms)
            }
            let name = String(text.dropFirst("signal:".count))
            guard let number = SignalName.number(of: name) else {
                throw fields.problem(
                    "channel", "\(name.echoed(limit: 40)) is not a signal",
                    expected: "a signal's name such as USR1 or SIGUSR1 (one of \(SignalName.names.map(\.name).joined(separator: ", "))) or its number"
                )
            }
            let accepted = ProcessAppOptions.Channel.acceptedSignals
            guard accepted.contains(number), ![SIGKILL, SIGSTOP, SIGCONT].contains(number) else {
                throw fields.problem(
                    "channel", "\(text.echoed(limit: 40)) (signal \(number)) cannot carry memory warnings",
                    expected: "a signal from \(accepted.lowerBound) to \(accepted.upperBound) other than KILL, STOP and CONT, which would end or stop the process"
                )
            }
            return .signal(number)
        }

        /// `limits`: `soft` and `hard` for every state, overridden by `foreground` and `background`.
        private func memoryLimits(_ fields: Fields) throws(Problem) -> AppMemoryLimits {
            guard let value = fields["limits"], !value.isNull else { return .none }
            let expected = "an object of \"soft\" and \"hard\" sizes, and \"foreground\" and \"background\" objects of them"
            let limits = try Fields(value, field: fields.path("limits"), app: fields.app, keys: ["soft", "hard", "foreground", "background"], expected: expected)
            let soft = try limits.size("soft")
            let hard = try limits.size("hard")
            func limit(_ key: String) throws(Problem) -> AppMemoryLimits.Limit {
                var (stateSoft, stateHard) = (soft, hard)
                var place = limits.path
                if let value = limits[key], !value.isNull {
                    let state = try Fields(value, field: limits.path(key), app: fields.app, keys: ["soft", "hard"], expected: "an object of \"soft\" and \"hard\" sizes")
                    stateSoft = try state.size("soft") ?? soft
                    stateHard = try state.size("hard") ?? hard
                    place = state.path
                }
                do {
                    return try AppMemoryLimits.Limit(softBytes: stateSoft, hardBytes: stateHard)
                } catch {
                    throw Problem(field: place, app: fields.app, cause: error)
                }
            }
            return AppMemoryLimits(foreground: try limit("foreground"), background: try limit("background"))
        }
    }

    /// An object's fields, checked to hold only `keys`, and where it is in the file.
    private struct Fields {
        /// Where the object is: nil for the document, else `apps[1]`, `apps[1].limits`.
        let path: String?
        /// The app the object belongs to, once its name is known.
        var app: String?
        private let values: [String: JSONValue]

        init(_ value: JSONValue, field: String?, app: String?, keys: [String], expected: String) throws(Problem) {
            guard case .object(let values) = value else {
                throw Problem(field: field, app: app, problem: "is \(value.found)", expected: expected)
            }
            (path, self.app, self.values) = (field, app, values)
            if let unknown = values.keys.filter({ !keys.contains($0) }).min() {
                throw Problem(
                    field: self.path(unknown.escapedForTerminal(limit: 40)), app: app, problem: "is not a known key",
                    expected: "one of \(keys.joined(separator: ", "))"
                )
            }
        }

        subscript(key: String) -> JSONValue? { values[key] }

        /// The path of `key` in this object: `apps[1].limits.soft`.
        func path(_ key: String) -> String {
            path.map { "\($0).\(key)" } ?? key
        }

        /// A problem with the value at `key`, which may go on into it (`command[0]`, `env.LANG`).
        func problem(_ key: String, _ problem: String, expected: String) -> Problem {
            Problem(field: path(key), app: app, problem: problem, expected: expected)
        }

        /// The string at `key`, nil when it is missing or null.
        func string(_ key: String, expected: String) throws(Problem) -> String? {
            switch values[key] {
            case nil, .null: return nil
            case .string(let text): return text
            case let value?: throw problem(key, "is \(value.found)", expected: expected)
            }
        }

        /// The case of `Choice` named at `key`, nil when it is missing or null.
        func choice<Choice: RawRepresentable<String> & CaseIterable>(_ key: String, noun: String) throws(Problem) -> Choice? {
            let expected = "one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))"
            guard let name = try string(key, expected: expected) else { return nil }
            guard let choice = Choice(rawValue: name) else {
                throw problem(key, "\(name.echoed(limit: 40)) is not \(noun)", expected: expected)
            }
            return choice
        }

        /// The duration at `key`, nil when it is missing or null: a number of seconds, or a string
        /// such as "500ms", "2s" or "1m"; from 0 to an hour.
        func duration(_ key: String) throws(Problem) -> Duration? {
            let expected = "a duration such as \"500ms\", \"2s\" or \"1m\", or a number of seconds, from 0 to 1h"
            let seconds: Double
            switch values[key] {
            case nil, .null: return nil
            case .integer(let integer): seconds = Double(integer)
            case .number(let number): seconds = number
            case .string(let text):
                let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
                guard let (suffix, scale) = units.first(where: { text.hasSuffix($0.0) && Double(text.dropLast($0.0.count)) != nil }),
                      let value = Double(text.dropLast(suffix.count)) else {
                    throw problem(key, "\(text.echoed(limit: 40)) is not a duration", expected: expected)
                }
                seconds = value * scale
            case let value?:
                throw problem(key, "is \(value.found)", expected: expected)
            }
            guard seconds.isFinite, (0...3600).contains(seconds) else { throw problem(key, "\(seconds) s is out of range", expected: expected) }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }

        /// The size at `key` in bytes, nil when it is missing or null: a string such as "512MiB",
        /// or a number of bytes; positive.
        func size(_ key: String) throws(Problem) -> Int? {
            let expected = "a positive size such as \"512MiB\", \"1.5GiB\" or a number of bytes"
            let bytes: Int
            switch values[key] {
            case nil, .null:
                return nil
            case .integer(let integer):
                bytes = integer
            case .string(let text):
                do {
                    bytes = try ByteCount(parsing: text).bytes
                } catch {
                    throw Problem(field: path(key), app: app, cause: error)
                }
            case let value?:
                throw problem(key, "is \(value.found)", expected: expected)
            }
            guard bytes > 0 else { throw problem(key, "\(ByteCount(bytes)) is not positive", expected: expected) }
            return bytes
        }
    }
}

extension SuperviseConfiguration.JSONValue {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    var isEmptyArray: Bool {
        if case .array(let elements) = self { return elements.isEmpty }
        return false
    }
}

/// Signals by name, as `channel: "signal:NAME"` gives them: `USR1`, `SIGUSR1`, or a number.
enum SignalName {
    /// Linux's signals by name, without the `SIG` prefix.
    static let names: [(name: String, number: Int32)] = [
        ("HUP", SIGHUP), ("INT", SIGINT), ("QUIT", SIGQUIT), ("ILL", SIGILL), ("TRAP", SIGTRAP), ("ABRT", SIGABRT),
        ("BUS", SIGBUS), ("FPE", SIGFPE), ("KILL", SIGKILL), ("USR1", SIGUSR1), ("SEGV", SIGSEGV), ("USR2", SIGUSR2),
        ("PIPE", SIGPIPE), ("ALRM", SIGALRM), ("TERM", SIGTERM), ("CHLD", SIGCHLD), ("CONT", SIGCONT), ("STOP", SIGSTOP),
        ("TSTP", SIGTSTP), ("TTIN", SIGTTIN), ("TTOU", SIGTTOU), ("URG", SIGURG), ("XCPU", SIGXCPU), ("XFSZ", SIGXFSZ),
        ("VTALRM", SIGVTALRM), ("PROF", SIGPROF), ("WINCH", SIGWINCH), ("IO", SIGIO), ("PWR", SIGPWR), ("SYS", SIGSYS),
    ]

    /// The number of the signal `text` names: `USR1`, `SIGUSR1` (any case) or `10`; nil for none.
    static func number(of text: String) -> Int32? {
        if let number = Int32(text) { return number }
        var name = text.uppercased()
        if name.hasPrefix("SIG") { name.removeFirst(3) }
        return names.first { $0.name == name }?.number
    }
}
