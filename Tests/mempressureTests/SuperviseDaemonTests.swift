import Foundation
import MemoryPressure
@testable import mempressure
import MemoryPressureTestKit
import MemoryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure supervise` as a daemon (standard input `/dev/null`) driven by `mempressure ctl`:
/// the control socket, restarts, reloads, logs and metrics, through the real tool.
///
/// Serialized: most of its tests wait for the tool synchronously, each holding a thread of Swift's
/// cooperative pool (two on a two-core machine) for as long as the tool takes. Side by side under
/// ThreadSanitizer in CI they held the whole pool, and 36 other tests ran out of their time limit.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SuperviseDaemonTests {
    /// One app's `ctl --json status`.
    struct AppStatus: Decodable {
        var name: String
        var state: String
        var pid: Int32?
        var restarts: Int
        var frozen: Bool
        var lastTermination: Last?
        struct Last: Decodable {
            var reason: String
            var exit: String?
        }
    }

    static func status(_ supervisor: SuperviseTool.Supervisor) async throws -> [String: AppStatus] {
        let run = try await supervisor.ctl("--json", "status")
        try #require(run.status == 0, "stderr: \(run.standardError)")
        let apps = try JSONDecoder().decode([AppStatus].self, from: Data(run.standardOutput.utf8))
        return Dictionary(uniqueKeysWithValues: apps.map { ($0.name, $0) })
    }

    /// Checks `run` failed with `status` and one line on standard error that starts with `prefix`.
    static func checkOneLine(_ run: ExecutableRun, status: Int32, _ prefix: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == status, "stderr: \(run.standardError)", sourceLocation: sourceLocation)
        #expect(run.standardError.hasPrefix("mempressure: " + prefix), "stderr: \(run.standardError)", sourceLocation: sourceLocation)
        #expect(run.standardError.split(separator: "\n").count == 1 && run.standardOutput.isEmpty, "\(run)", sourceLocation: sourceLocation)
    }

    static func isGone(_ pid: Int32) -> Bool {
        kill(pid, 0) == -1 && errno == ESRCH
    }

    @Test func ctlDrivesADaemonThroughEveryVerb() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [
                { "name": "editor", "command": ["sh", "-c", "echo hello from editor; exec sleep 300"], "start": "foreground" },
                { "name": "sleeper", "command": ["sleep", "300"], "inBackground": "run" }
            ] }
            """, input: false)
        defer { supervisor.stop() }
        try await supervisor.waitForError(containing: "supervising 2 apps")
        try await supervisor.waitForError(containing: "editor: hello from editor")

        let text = try await supervisor.ctl("status")
        #expect(text.status == 0)
        let lines = text.standardOutput.split(separator: "\n")
        try #require(lines.count == 2, "\(text)")
        #expect(lines[0].hasPrefix("editor active ") && lines[0].contains(" restarts 0 frozen no last - -"), "\(lines)")
        #expect(lines[1].hasPrefix("sleeper background ") && lines[1].split(separator: " ").count == 15, "\(lines)")

        var apps = try await Self.status(supervisor)
        let sleeperPid = try #require(apps["sleeper"]?.pid)
        let editorPid = try #require(apps["editor"]?.pid)

        await #expect(try supervisor.ctl("foreground", "sleeper").standardOutput == "sleeper active\n")
        apps = try await Self.status(supervisor)
        #expect(apps["sleeper"]?.state == "active" && ["background", "suspended"].contains(apps["editor"]?.state), "\(apps)")
        await #expect(try supervisor.ctl("background", "sleeper").standardOutput == "sleeper background\n")

        await #expect(try supervisor.ctl("stop", "editor").status == 0)
        apps = try await Self.status(supervisor)
        #expect(apps["editor"]?.state == "notRunning" && apps["editor"]?.pid == nil && apps["editor"]?.lastTermination?.reason == "explicit", "\(apps)")
        #expect(Self.isGone(editorPid))
        await #expect(try supervisor.ctl("start", "editor").status == 0)
        apps = try await Self.status(supervisor)
        #expect(apps["editor"]?.state == "active" && apps["editor"]?.restarts == 1, "\(apps)")

        await #expect(try supervisor.ctl("restart", "sleeper").status == 0)
        apps = try await Self.status(supervisor)
        #expect(apps["sleeper"]?.pid != sleeperPid && apps["sleeper"]?.pid != nil && apps["sleeper"]?.restarts == 1, "\(apps)")
        #expect(Self.isGone(sleeperPid))

        let reopened = try await supervisor.ctl("reopen-logs")
        #expect(reopened.status == 0 && reopened.standardOutput.contains("standard error"), "\(reopened)")
        let reload = try await supervisor.ctl("reload")
        #expect(reload.standardOutput.contains("added none, removed none, changed none, 2 unchanged"), "\(reload)")

        // Every bad input: one line, nothing changed.
        let before = try await Self.status(supervisor).mapValues(\.pid)
        await Self.checkOneLine(try supervisor.ctl("frobnicate"), status: 2, #"ctl "frobnicate" is not a command; expected status, foreground NAME"#)
        await Self.checkOneLine(try supervisor.ctl("foreground", "nobody"), status: 2, #""nobody": no such app; expected one of editor, sleeper"#)
        await Self.checkOneLine(try supervisor.ctl("stop"), status: 2, "ctl stop takes one app's name, not 0; expected stop NAME")
        await Self.checkOneLine(try supervisor.ctl("status", "now"), status: 2, "ctl status takes no arguments")
        await Self.checkOneLine(try supervisor.ctl("--json", "quit"), status: 2, "ctl --json goes with status only")
        await Self.checkOneLine(try SuperviseTool.run(["ctl", "--socket", String(repeating: "x", count: 200), "status"]), status: 2, "--socket \"xxx")
        await Self.checkOneLine(try SuperviseTool.run(["ctl", "--socket", "\(supervisor.directory)/none.sock", "status"]), status: 1, "no supervisor answers on")
        await #expect(try Self.status(supervisor).mapValues(\.pid) == before)

        let pids = try await Self.status(supervisor).values.compactMap(\.pid)
        await #expect(try supervisor.ctl("quit").status == 0)
        await #expect(supervisor.waitForExit() == 0, "stderr: \(supervisor.currentError)")
        await #expect(supervisor.standardOutput.isEmpty, "the apps' output is not on standard output")
        for pid in pids { #expect(Self.isGone(pid)) }
        #expect(!FileManager.default.fileExists(atPath: supervisor.socket), "the socket is removed at the end")
    }

    /// The socket is 0600; a second supervisor on it is refused; a process of another user cannot
    /// connect (`setpriv` to nobody), and the supervisor goes on.
    @Test func theSocketIsTheUsersAlone() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: #"{ "apps": [{ "name": "a", "command": ["sleep", "300"], "start": "foreground" }] }"#, input: false)
        defer { supervisor.stop() }
        try await supervisor.waitForError(containing: "supervising 1 app")
        var status = stat()
        try #require(lstat(supervisor.socket, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK && status.st_mode & 0o777 == 0o600 && status.st_uid == geteuid())

        let second = try await SuperviseTool.run(["supervise", "--config", "\(supervisor.directory)/apps.json", "--socket", supervisor.socket])
        Self.checkOneLine(second, status: 2, "--socket \"\(supervisor.socket)\": another supervisor is listening there")

        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            // Only root can become another user here; a plain user's peers are refused by the
            // mode and by SO_PEERCRED alike.
            return
        }
        // The directory traversable, so that only the socket's own mode stands in the way.
        chmod(supervisor.directory, 0o755)
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", try SuperviseTool.executable().path, "ctl", "--socket", supervisor.socket, "stop", "a"]
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = await blockingWait {
            let message = String(decoding: errorPipe.fileHandleForReading.bytesToEnd(), as: UTF8.self)
            process.waitUntilExit()
            return message
        }
        #expect(process.terminationStatus == 1, "\(message)")
        #expect(message.contains("Permission denied"), "\(message)")
        await #expect(try Self.status(supervisor)["a"]?.state == "active", "nothing changed")
    }

    /// `on-failure` restarts an app that exits 1 after 100 ms, then 200 ms, and gives up after
    /// `startRetries` 2; `ctl start` launches it again.
    @Test func aFailingAppIsRestartedWithBackoffThenGivenUp() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [{ "name": "crash", "command": ["sh", "-c", "echo run; exit 1"], "start": "foreground",
                         "restart": "on-failure", "restartDelay": "100ms", "startRetries": 2 },
                       { "name": "done", "command": ["true"], "inBackground": "run", "restart": "on-failure" }] }
            """, input: false)
        defer { supervisor.stop() }
        let log = try await supervisor.waitForError(containing: "app crash gave up")
        #expect(log.contains("app crash restarts in 0.1 seconds (attempt 1 of 2, restart on-failure)"), "\(log)")
        #expect(log.contains("app crash restarts in 0.2 seconds (attempt 2 of 2, restart on-failure)"), "\(log)")
        #expect(log.components(separatedBy: "crash: run").count - 1 == 3, "three runs: \(log)")
        #expect(!log.contains("app done restarts"), "an exit 0 is no failure")
        let crash = try await #require(try Self.status(supervisor)["crash"])
        #expect(crash.state == "notRunning" && crash.restarts == 2 && crash.lastTermination?.reason == "processExited" && crash.lastTermination?.exit == "exit:1")
        _ = try await supervisor.ctl("start", "crash")
        try await supervisor.waitForError(containing: "crash: run", count: 4)
    }

    /// An app the system terminates for its own limit is not restarted by policy, even `always`.
    @Test func anAppTerminatedByTheSystemIsNotRestarted() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [{ "name": "hog", "command": ["sh", "-c", "x=$(head -c 8000000 /dev/zero | tr '\\\\0' a); echo held; sleep 300"],
                         "start": "foreground", "restart": "always", "restartDelay": "10ms", "limits": { "hard": "4MiB" } }] }
            """, input: false)
        defer { supervisor.stop() }
        let log = try await supervisor.waitForError(containing: "app hog is not restarted: the system terminated it for per-app limit")
        #expect(log.contains("app hog terminated from active for per-app limit"), "\(log)")
        let hog = try await #require(try Self.status(supervisor)["hog"])
        #expect(hog.state == "notRunning" && hog.restarts == 0 && hog.lastTermination?.reason == "perAppLimit", "\(hog)")
        #expect(!supervisor.currentError.contains("app hog restarts in"))
    }

    /// A supervisor killed with SIGKILL leaves no child: running, running in the background or
    /// frozen, each dies with it (the library's parent-death signal and guardian).
    @Test func aSupervisorKilledWithSIGKILLLeavesNoChild() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [
                { "name": "editor", "command": ["sleep", "300"], "start": "foreground" },
                { "name": "indexer", "command": ["sleep", "300"], "inBackground": "run" },
                { "name": "thumbs", "command": ["sleep", "300"], "launchGrace": 0 }
            ] }
            """, input: false)
        defer { supervisor.stop() }
        try await supervisor.waitForError(containing: "supervising 3 apps")
        var apps: [String: AppStatus] = [:]
        _ = try await poll(within: .seconds(60)) {
            apps = try await Self.status(supervisor)
            return apps["thumbs"]?.frozen == true && apps.values.allSatisfy { $0.pid != nil }
        }
        #expect(apps["editor"]?.state == "active" && apps["indexer"]?.state == "background" && apps["thumbs"]?.frozen == true, "\(apps)")
        let pids = apps.values.compactMap(\.pid)
        #expect(pids.count == 3)
        #expect(kill(supervisor.pid, SIGKILL) == 0)
        _ = await supervisor.waitForExit()
        let alive = { pids.filter { !Self.isGone($0) && !Self.isZombie($0) } }
        #expect(await poll(within: .seconds(60)) { alive().isEmpty }, "left alive: \(alive())")
    }

    /// Whether `pid` is a zombie: dead, waiting for a reaper (a dead supervisor's children are
    /// reparented to a reaper that may not reap at once).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }

    /// SIGHUP reloads: an app added is launched, one removed terminated, one changed relaunched,
    /// and the unchanged one keeps its pid. A bad file changes nothing.
    @Test func aReloadAddsRemovesAndChangesApps() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [
                { "name": "keep", "command": ["sleep", "300"], "start": "foreground" },
                { "name": "gone", "command": ["sleep", "31"], "inBackground": "run" },
                { "name": "change", "command": ["sleep", "32"], "inBackground": "run" }
            ] }
            """, input: false)
        defer { supervisor.stop() }
        try await supervisor.waitForError(containing: "supervising 3 apps")
        let before = try await Self.status(supervisor)
        try Data("""
            { "apps": [
                { "name": "keep", "command": ["sleep", "300"], "start": "foreground" },
                { "name": "change", "command": ["sleep", "33"], "inBackground": "run" },
                { "name": "added", "command": ["sleep", "34"], "inBackground": "run" }
            ] }
            """.utf8).write(to: URL(filePath: "\(supervisor.directory)/apps.json"))
        #expect(kill(supervisor.pid, SIGHUP) == 0)
        let reloaded = try await supervisor.waitForError(containing: "added added, removed gone, changed change, 1 unchanged")
        #expect(!reloaded.contains("; but "), "\(reloaded)")
        let after = try await Self.status(supervisor)
        #expect(Set(after.keys) == ["keep", "change", "added"])
        #expect(after["keep"]?.pid == before["keep"]?.pid && after["keep"]?.state == "active", "the unchanged app keeps its pid")
        #expect(after["change"]?.pid != nil && after["change"]?.pid != before["change"]?.pid)
        #expect(after["added"]?.state == "background")
        let gonePid = try #require(before["gone"]?.pid)
        let changedPid = try #require(before["change"]?.pid)
        #expect(Self.isGone(gonePid) && Self.isGone(changedPid))

        try Data(#"{ "apps": [{ "name": "keep", "command": ["sleep", "300"], "colour": 1 }] }"#.utf8)
            .write(to: URL(filePath: "\(supervisor.directory)/apps.json"))
        await Self.checkOneLine(try supervisor.ctl("reload"), status: 2, "reload refused, nothing changed: --config \"\(supervisor.directory)/apps.json\": apps[0].colour is not a known key")
        await #expect(try Self.status(supervisor).mapValues(\.pid) == after.mapValues(\.pid))
        #expect(supervisor.isRunning)

        // The changed app is registered anew under its own name: the library's lines name it so.
        await #expect(try supervisor.ctl("stop", "change").status == 0)
        try await supervisor.waitForError(containing: "app change terminated", count: 2)
        #expect(!supervisor.currentError.contains("change~"), "\(supervisor.currentError)")
    }

    /// With `logs`, each app's output goes to DIR/NAME.log, never to standard output; after the
    /// file is renamed, `ctl reopen-logs` makes a new one.
    @Test func outputGoesToAFilePerAppReopenedOnRequest() async throws {
        let logs = try SuperviseTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "logs": "\(logs)", "apps": [{ "name": "ticker", "command": ["sh", "-c", "while true; do echo tick; echo oops >&2; sleep 0.1; done"],
                                           "start": "foreground" }] }
            """, input: false)
        defer { supervisor.stop() }
        let file = "\(logs)/ticker.log"
        func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        func wait(for path: String) async -> Bool {
            await poll(within: .seconds(10)) { contents(path).contains("tick\noops\n") }
        }
        #expect(await wait(for: file), "\(contents(file))")
        #expect(rename(file, file + ".1") == 0)
        await #expect(try supervisor.ctl("reopen-logs").status == 0)
        #expect(await wait(for: file), "a new file after reopen-logs")
        await #expect(try supervisor.ctl("quit").status == 0)
        await #expect(supervisor.waitForExit() == 0)
        let errorText = await supervisor.standardError
        await #expect(supervisor.standardOutput.isEmpty && !errorText.contains("oops"))
    }

    /// `--metrics 127.0.0.1:0` serves Prometheus text; a bad address is one line and exit 2.
    @Test func metricsAreServedAsPrometheusText() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [{ "name": "a", "command": ["sleep", "300"], "start": "foreground" },
                       { "name": "b", "command": ["sh", "-c", "exit 3"], "inBackground": "run" }] }
            """, arguments: ["--metrics", "127.0.0.1:0"], input: false)
        defer { supervisor.stop() }
        let log = try await supervisor.waitForError(containing: "app b terminated")
        let address = try #require(log.firstMatch(of: /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/).flatMap { UInt16($0.1) })
        // The apps launch at once: b can end before a's launch is done, and a's footprint is
        // published with the next sample.
        var text = ""
        #expect(try await poll(within: .seconds(30)) {
            text = try Self.get("/metrics", port: address)
            return text.contains(#"memory_pressure_app_state{app="a",state="active"} 1"#)
                && !text.contains(#"memory_pressure_app_footprint_bytes{app="a"} 0"#)
        }, "\(text)")
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
        let body = String(text[try #require(text.range(of: "\r\n\r\n")).upperBound...])
        var samples: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            try #require(parts.count == 2, "\(line)")
            // Every value here is a whole number.
            samples[String(parts[0])] = Double(try #require(Int(parts[1]), "\(line)"))
        }
        #expect((samples[#"memory_pressure_app_footprint_bytes{app="a"}"#] ?? 0) > 0)
        #expect(samples[#"memory_pressure_app_state{app="a",state="active"}"#] == 1)
        #expect(samples[#"memory_pressure_app_state{app="b",state="notRunning"}"#] == 1)
        #expect(samples[#"memory_pressure_terminations_total{reason="processExited"}"#] == 1)
        #expect(samples[#"memory_pressure_app_restarts_total{app="a"}"#] == 0)
        #expect(samples[#"memory_pressure_warnings_total{step="warning"}"#] == 0)
        #expect(try Self.get("/other", port: address).hasPrefix("HTTP/1.1 404 "))

        await Self.checkOneLine(try SuperviseTool.run(["supervise", "--config", "\(supervisor.directory)/apps.json", "--socket", "\(supervisor.directory)/other.sock", "--metrics", "localhost"]),
                          status: 2, #"--metrics "localhost" is not an address; expected an IPv4 address and a port"#)
    }

    /// A GET of `path` on 127.0.0.1:`port`, the whole answer.
    static func get(_ path: String, port: UInt16) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            answer += chunk[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
