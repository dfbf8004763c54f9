import Foundation
import MemoryPressure
@testable import mempressure
import Synchronization
import MemoryTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure supervise`: its file, its console, and the tool run as a user runs it.
struct SuperviseTests {
    /// A machine of 8 GiB in a cgroup of 2 GiB.
    static let limits = MemoryLimits(physicalBytes: 8 << 30, controlGroupMaximum: 2 << 30)

    static func parse(_ text: String) throws(SuperviseConfiguration.Problem) -> SuperviseConfiguration {
        try SuperviseConfiguration.parse(Array(text.utf8), source: "--config \"test.json\"", limits: limits, hostEnvironment: ["HOME": "/root", "LANG": "C"])
    }

    // MARK: The file

    @Test func aFullFileIsReadWithItsDefaults() throws {
        let configuration = try Self.parse("""
            {
              "budget": "768MiB",
              "apps": [
                { "name": "editor", "command": ["sleep", "300"], "start": "foreground", "importance": "foreground" },
                { "name": "indexer", "command": ["sleep", "31"], "start": "background", "inBackground": "run",
                  "importance": "service", "channel": "systemd", "env": { "LANG": "C.UTF-8", "X": "1" }, "cwd": "/tmp" },
                { "name": "thumbs", "command": "sleep 32", "channel": "none",
                  "limits": { "soft": "256MiB", "hard": "512MiB", "background": { "hard": 400000000 } } },
                { "name": "plain", "command": ["sleep", "33"] }
              ]
            }
            """)
        #expect(configuration.budget.totalBytes == 768 << 20)
        #expect(configuration.apps.map(\.identifier.rawValue) == ["editor", "indexer", "thumbs", "plain"])
        #expect(configuration.apps.map(\.start) == [.foreground, .background, .background, .background])
        #expect(configuration.apps.map(\.configuration.importance) == [.foreground, .service, .service, .service])
        #expect(configuration.apps.map(\.options.inBackground) == [.suspend, .run, .suspend, .suspend])
        #expect(configuration.apps.map(\.options.channel) == [.none, .systemd, .none, .none])
        #expect(configuration.apps.map(\.field) == ["apps[0]", "apps[1]", "apps[2]", "apps[3]"])

        let editor = configuration.apps[0].process
        #expect(editor.executable == "sleep" && editor.arguments == ["300"] && editor.environment == nil && editor.workingDirectory == nil)
        let indexer = configuration.apps[1].process
        #expect(indexer.environment == ["HOME": "/root", "LANG": "C.UTF-8", "X": "1"], "env is added to the supervisor's environment")
        #expect(indexer.workingDirectory == "/tmp")
        #expect(configuration.apps[2].process == .shell("sleep 32"))

        let limits = configuration.apps[2].limits
        #expect(limits.foreground.softBytes == 256 << 20 && limits.foreground.hardBytes == 512 << 20)
        #expect(limits.background.softBytes == 256 << 20 && limits.background.hardBytes == 400_000_000)
        #expect(configuration.apps[3].limits == .none)
    }

    @Test func restartPoliciesHaveDefaultsAndDoublingDelays() throws {
        let configuration = try Self.parse("""
            { "socket": "/tmp/s.sock", "metrics": "127.0.0.1:9464", "apps": [
                { "name": "a", "command": ["sleep", "1"] },
                { "name": "b", "command": ["sleep", "1"], "restart": "on-failure", "restartDelay": 0.5, "restartDelayMax": "3s", "startRetries": 5 }
            ] }
            """)
        #expect(configuration.socket == "/tmp/s.sock" && configuration.metrics == "127.0.0.1:9464" && configuration.logs == nil)
        #expect(configuration.apps[0].restart == SuperviseConfiguration.RestartPolicy())
        #expect(configuration.apps[0].restart.when == .never && configuration.apps[0].restart.retries == 3)
        let policy = configuration.apps[1].restart
        #expect(policy.when == .onFailure && policy.retries == 5)
        #expect((1...5).map(policy.delay(before:)) == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3)])
        #expect((1...8).map(SuperviseConfiguration.RestartPolicy().delay(before:)).last == .seconds(60))
    }

    @Test func protectedAppsAndLaunchGracesAreRead() throws {
        let configuration = try Self.parse("""
            { "apps": [
                { "name": "db", "command": ["sleep", "1"], "protected": true, "launchGrace": "30s" },
                { "name": "tool", "command": ["sleep", "1"], "protected": false, "launchGrace": 0 },
                { "name": "plain", "command": ["sleep", "1"] }
            ] }
            """)
        #expect(configuration.apps.map(\.configuration.isProtected) == [true, false, false])
        #expect(configuration.apps.map(\.options.launchGrace) == [.seconds(30), .zero, .seconds(10)])
        for (text, expected) in [
            (#"{ "apps": [{ "name": "a", "command": ["sleep"], "protected": "yes" }] }"#,
             #"apps[0].protected (app "a") is the string "yes"; expected true or false"#),
            (#"{ "apps": [{ "name": "a", "command": ["sleep"], "launchGrace": "11m" }] }"#,
             #"apps[0].launchGrace (app "a") 660.0 seconds is out of range; expected a duration from 0 to 10m"#),
        ] {
            #expect(throws: SuperviseConfiguration.Problem.self) { try Self.parse(text) }
            do {
                _ = try Self.parse(text)
            } catch {
                #expect("\(error)" == "--config \"test.json\": " + expected, "\(error)")
            }
        }
    }

    @Test func theWarningIntervalAndCompressionAreRead() throws {
        let plain = try Self.parse(#"{ "apps": [{ "name": "a", "command": ["sleep", "1"] }] }"#)
        #expect(plain.warningInterval == nil && plain.compression == .automatic)
        let given = try Self.parse(#"{ "warningInterval": "1m", "compression": "off", "apps": [{ "name": "a", "command": ["sleep", "1"] }] }"#)
        #expect(given.warningInterval == .seconds(60) && given.compression == .off)
        #expect(try Self.parse(#"{ "compression": "auto", "apps": [{ "name": "a", "command": ["sleep", "1"] }] }"#).compression == .automatic)
        for (text, expected) in [
            (#"{ "compression": "zram", "apps": [{ "name": "a", "command": ["sleep"] }] }"#,
             #"compression "zram" is not a setting; expected "auto" (compress suspended apps to zram where a zram swap device is on) or "off""#),
            (#"{ "warningInterval": "2h", "apps": [{ "name": "a", "command": ["sleep"] }] }"#,
             #"warningInterval 7200.0 s is out of range; expected a duration such as "500ms", "2s" or "1m", or a number of seconds, from 0 to 1h"#),
        ] {
            do {
                _ = try Self.parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect("\(error)" == "--config \"test.json\": " + expected, "\(error)")
            }
        }
    }

    @Test func theBudgetIsAutomaticUnlessGiven() throws {
        let automatic = try Self.parse(#"{ "apps": [{ "name": "a", "command": ["sleep", "1"] }] }"#)
        let resolved = try MemoryBudget.resolve(.automatic(), limits: Self.limits)
        #expect(automatic.budget == resolved)
        #expect(automatic.budget.totalBytes == Int(Double(2 << 30) * 0.9))
        let auto = try Self.parse(#"{ "budget": "auto", "apps": [{ "name": "a", "command": ["sleep", "1"] }] }"#)
        #expect(auto.budget == automatic.budget)
    }

    @Test(arguments: [("signal:USR1", SIGUSR1), ("signal:SIGUSR1", SIGUSR1), ("signal:usr2", SIGUSR2), ("signal:10", 10), ("signal:34", 34)])
    func aSignalChannelIsNamedOrNumbered(_ channel: String, _ number: Int32) throws {
        let configuration = try Self.parse(#"{ "apps": [{ "name": "a", "command": ["sleep"], "channel": "\#(channel)" }] }"#)
        #expect(configuration.apps[0].options.channel == .signal(number))
    }

    /// Each bad file is one line naming the key, the app where there is one, and what is accepted.
    @Test(arguments: [
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "colour": "red" }] }"#,
         "apps[0].colour is not a known key; expected one of name, command, start, inBackground, importance, channel, limits, env, cwd, restart, restartDelay, restartDelayMax, startRetries"),
        (#"{ "budget": "auto", "apps": [], "extra": 1 }"#, "extra is not a known key; expected one of budget, apps, socket, logs, metrics"),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"] }, { "name": "a", "command": ["sleep"] }] }"#,
         #"apps[1].name (app "a") is given twice (also at apps[0]); expected a name of its own for each app"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "start": "foreground" }, { "name": "b", "command": ["sleep"], "start": "foreground" }] }"#,
         #"apps[1].start (app "b") "foreground" is given to a second app ("a" at apps[0] starts in the foreground); expected at most one app"#),
        (#"{ "apps": [{ "name": "a", "command": [] }] }"#, #"apps[0].command (app "a") is empty; expected an array of the program and its arguments"#),
        (#"{ "apps": [{ "name": "a", "command": "  " }] }"#, #"apps[0].command (app "a") is empty"#),
        (#"{ "apps": [{ "name": "a", "command": [""] }] }"#, #"apps[0].command[0] (app "a") is empty; expected the program first"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep", 3] }] }"#, #"apps[0].command[1] (app "a") is the number 3; expected each element a string"#),
        (#"{ "apps": [{ "name": "a" }] }"#, #"apps[0].command (app "a") is missing"#),
        (#"{ "apps": [{ "command": ["sleep"] }] }"#, "apps[0].name is missing; expected a name of 1 to 255 bytes without whitespace"),
        (#"{ "apps": [{ "name": "a b", "command": ["sleep"] }] }"#, #"apps[0].name "a b" holds whitespace"#),
        (#"{ "apps": [{ "name": "a/b", "command": ["sleep"] }] }"#, #"apps[0].name app identifier "a/b" contains a path separator"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "limits": { "hard": "12XB" } }] }"#,
         #"apps[0].limits.hard (app "a") size "12XB" is not valid; expected a whole number of bytes"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "limits": { "soft": "-1MiB" } }] }"#,
         #"apps[0].limits.soft (app "a") -1 MiB is not positive; expected a positive size"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "limits": { "soft": "1GiB", "hard": "512MiB" } }] }"#,
         #"apps[0].limits (app "a") per-app soft limit of 1073741824 bytes is not below the hard limit of 536870912 bytes"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "limits": { "background": { "max": "1GiB" } } }] }"#,
         #"apps[0].limits.background.max (app "a") is not a known key; expected one of soft, hard"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "inBackground": "freeze" }] }"#,
         #"apps[0].inBackground (app "a") "freeze" is not a background mode; expected one of suspend, run"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "start": "later" }] }"#,
         #"apps[0].start (app "a") "later" is not a start; expected one of foreground, background"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "importance": "high" }] }"#,
         #"apps[0].importance (app "a") "high" is not an importance; expected one of cached, service, perceptible, foreground"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "channel": "dbus" }] }"#,
         #"apps[0].channel (app "a") "dbus" is not a channel; expected none, client, systemd or signal:NAME"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "channel": "signal:FOO" }] }"#,
         #"apps[0].channel (app "a") "FOO" is not a signal; expected a signal's name such as USR1 or SIGUSR1"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "channel": "signal:KILL" }] }"#,
         #"apps[0].channel (app "a") "signal:KILL" (signal 9) cannot carry memory warnings; expected a signal from 1 to 64 other than KILL, STOP and CONT"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "env": { "X": 1 } }] }"#, #"apps[0].env.X (app "a") is the number 1; expected a string"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "env": ["X=1"] }] }"#, #"apps[0].env (app "a") is an array; expected an object of variables"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "cwd": 7 }] }"#, #"apps[0].cwd (app "a") is the number 7; expected the path of a directory"#),
        (#"{ "budget": "3GiB", "apps": [{ "name": "a", "command": ["sleep"] }] }"#,
         "budget memory budget of 3 GiB (3221225472 bytes) exceeds the cgroup's memory.max of 2 GiB (2147483648 bytes); expected between 1 byte and 2147483648 bytes"),
        (#"{ "budget": "lots", "apps": [{ "name": "a", "command": ["sleep"] }] }"#, #"budget memory budget: size "lots" is not valid"#),
        (#"{ "budget": true, "apps": [{ "name": "a", "command": ["sleep"] }] }"#, #"budget is true; expected "auto" or a size such as "768MiB""#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "restart": "sometimes" }] }"#,
         #"apps[0].restart (app "a") "sometimes" is not a restart policy; expected one of never, on-failure, always"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "restartDelay": "soon" }] }"#,
         #"apps[0].restartDelay (app "a") "soon" is not a duration; expected a duration such as "500ms""#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "restartDelay": "2s", "restartDelayMax": "1s" }] }"#,
         #"apps[0].restartDelayMax (app "a") is shorter than restartDelay"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "startRetries": -1 }] }"#,
         #"apps[0].startRetries (app "a") is the number -1; expected a whole number from 0 to 1000"#),
        (#"{ "socket": "", "apps": [{ "name": "a", "command": ["sleep"] }] }"#, "socket is empty; expected the path of a Unix socket"),
        (#"{ "logs": "/nonexistent-logs", "apps": [{ "name": "a", "command": ["sleep"] }] }"#, #"logs "/nonexistent-logs" is not an existing directory"#),
        (#"{ "metrics": "9464", "apps": [{ "name": "a", "command": ["sleep"] }] }"#, #"metrics "9464" is not an address; expected an IPv4 address and a port"#),
        (#"{ "apps": [] }"#, "apps is empty; expected an array of at least one app"),
        (#"{ "budget": "1GiB" }"#, "apps is missing; expected an array of apps"),
        (#"{ "apps": { "a": {} } }"#, "apps is an object; expected an array of at least one app"),
        (#"[1]"#, #"is an array; expected a JSON object with "apps" and optionally "budget""#),
        (#"{ "apps": [ "#, "is not valid JSON"),
        ("  \n", "is empty"),
    ])
    func aBadFileIsOneLineNamingTheProblem(_ text: String, _ expected: String) {
        #expect {
            _ = try Self.parse(text)
        } throws: { error in
            let message = "\(error)"
            let matches = message.hasPrefix("--config \"test.json\": " + expected) && !message.contains("\n")
            if !matches { Issue.record("message was: \(message)") }
            return matches
        }
    }

    // MARK: The console

    @Test func commandsAreParsedAndBadLinesNamed() throws {
        #expect(try SuperviseConsole.parse("foreground editor") == .foreground("editor"))
        #expect(try SuperviseConsole.parse("  background   indexer \t") == .background("indexer"))
        #expect(try SuperviseConsole.parse("status") == .status)
        #expect(try SuperviseConsole.parse("quit") == .quit)
        #expect(try SuperviseConsole.parse("") == nil)
        #expect(try SuperviseConsole.parse("   ") == nil)
        #expect(try SuperviseConsole.parse("# a comment") == nil)
        for (line, expected) in [
            ("fg editor", #""fg" is not a command; expected foreground NAME, background NAME, start NAME, stop NAME, restart NAME, status, reload, reopen-logs or quit"#),
            ("foreground", "foreground needs an app's name; expected foreground NAME"),
            ("background a b", "background takes one app's name, not 2 words; expected background NAME"),
            ("status now", "status takes no arguments; expected status alone"),
            ("Quit", #""Quit" is not a command"#),
        ] {
            #expect {
                _ = try SuperviseConsole.parse(line)
            } throws: { error in
                "\(error)".hasPrefix(expected)
            }
        }
    }

    @Test func linesAreSplitAcrossReadsAndOverlongOnesSkipped() {
        var splitter = SuperviseConsole.LineSplitter()
        #expect(splitter.append(Array("sta".utf8)) == [])
        #expect(splitter.append(Array("tus\r\nquit\n\nfore".utf8)) == [.line("status"), .line("quit"), .line("")])
        #expect(splitter.append(Array(repeating: UInt8(ascii: "x"), count: SuperviseConsole.longestLine + 10)) == [])
        #expect(splitter.append(Array("\nstatus\nbackground a".utf8)) == [.tooLong, .line("status")])
        #expect(splitter.finish() == [.line("background a")])
        #expect(splitter.finish() == [])
    }

    @Test func statusLinesHaveSixWords() {
        let status = ProcessAppStatus(pid: 4242, footprintBytes: 12 << 20, isFrozen: false, freezeMechanism: .stopSignal, controlGroups: [])
        #expect(SuperviseConsole.statusLine(name: "editor", state: .active, process: status) == "editor active 12.0 MiB pid 4242")
        #expect(SuperviseConsole.statusLine(name: "thumbs", state: .notRunning, process: nil) == "thumbs notRunning 0.0 MiB pid -")
    }

    // MARK: The tool

    /// A bad file, or a command that cannot run (refused as the app is registered), is exit
    /// status 2 and one line on standard error, with nothing on standard output and no process left.
    @Test(arguments: [
        (#"{ "apps": [{ "name": "a", "command": ["sleep", "300"], "colour": 1 }] }"#, "apps[0].colour is not a known key; expected one of name, command,"),
        (#"{ "apps": [{ "name": "a", "command": ["sleep", "300"] }, { "name": "a", "command": ["sleep", "300"] }] }"#, #"apps[1].name (app "a") is given twice"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep", "300"], "start": "foreground" }, { "name": "b", "command": ["sleep", "300"], "start": "foreground" }] }"#,
         #"apps[1].start (app "b") "foreground" is given to a second app"#),
        (#"{ "apps": [{ "name": "a", "command": [] }] }"#, #"apps[0].command (app "a") is empty"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "limits": { "hard": "big" } }] }"#, #"apps[0].limits.hard (app "a") size "big" is not valid"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "channel": "signal:NOPE" }] }"#, #"apps[0].channel (app "a") "NOPE" is not a signal"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep"], "importance": "vip" }] }"#, #"apps[0].importance (app "a") "vip" is not an importance; expected one of cached, service, perceptible, foreground"#),
        (#"{ "budget": "1000000TiB", "apps": [{ "name": "a", "command": ["sleep"] }] }"#, "budget memory budget of 1000000 TiB"),
        (#"{ "apps": [{ "name": "a", "command": ["mempressure-no-such-program"] }] }"#,
         #"apps[0] (app "a") process specification: executable "mempressure-no-such-program" is not found in PATH"#),
        (#"{ "apps": [{ "name": "a", "command": ["./not-executable"] }] }"#,
         #"apps[0] (app "a") process specification: executable "./not-executable" is not executable"#),
        (#"{ "apps": [{ "name": "a", "command": ["sleep", "300"], "cwd": "/nonexistent-directory" }] }"#,
         #"apps[0] (app "a") process specification: working directory "/nonexistent-directory" is not an existing directory"#),
    ])
    func aBadFileExitsWithStatusTwoInOneLine(_ text: String, _ expected: String) async throws {
        let directory = try SuperviseTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(text.utf8).write(to: URL(filePath: "\(directory)/apps.json"))
        try Data("not a program\n".utf8).write(to: URL(filePath: "\(directory)/not-executable"))
        let run = try await SuperviseTool.run(["supervise", "--config", "apps.json"], in: directory)
        #expect(run.status == 2)
        #expect(run.standardError.hasPrefix("mempressure: --config \"apps.json\": " + expected), "stderr: \(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1 && run.standardOutput.isEmpty)
    }

    @Test func aFileThatCannotBeReadExitsWithStatusTwo() async throws {
        let missing = try await SuperviseTool.run(["supervise", "--config", "/nonexistent/apps.json"])
        #expect(missing.status == 2)
        #expect(missing.standardError == "mempressure: --config \"/nonexistent/apps.json\": cannot be read (No such file or directory); expected a readable JSON file\n")
        let directory = try await SuperviseTool.run(["supervise", "--config", "/tmp"])
        #expect(directory.status == 2)
        #expect(directory.standardError == "mempressure: --config \"/tmp\": is a directory; expected a regular JSON file\n")
    }

    /// Two `sleep 300` apps: `status` shows the foreground one active and the other in the
    /// background, each with its pid; `quit` terminates both and exits 0, leaving no process.
    @Test(.timeLimit(.minutes(1)))
    func statusThenQuitShowsBothAppsAndLeavesNoProcess() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [
                { "name": "editor", "command": ["sleep", "300"], "start": "foreground" },
                { "name": "sleeper", "command": ["sleep", "300"] }
            ] }
            """)
        defer { supervisor.stop() }
        try supervisor.send("status\n")
        let lines = try await supervisor.readLines(2)
        let pids = try Self.checkStatus(lines)
        try supervisor.send("quit\n")
        let status = await supervisor.waitForExit()
        let standardError = await supervisor.standardError
        #expect(status == 0, "stderr: \(standardError)")
        await #expect(supervisor.standardOutput == lines.map { $0 + "\n" }.joined(), "only the status lines are on standard output")
        Self.checkGone(pids)
        #expect(standardError.contains("app editor terminated from active for explicit"), "stderr: \(standardError)")
        #expect(
            standardError.contains("app sleeper terminated from suspended for explicit") || standardError.contains("app sleeper terminated from background for explicit"),
            "stderr: \(standardError)"
        )
    }

    /// The end of standard input does not stop the supervisor; SIGTERM does, as `quit` does, and a
    /// second SIGTERM (as `timeout` sends) does not cut the shutdown short.
    @Test(.timeLimit(.minutes(1)))
    func theEndOfInputGoesOnAndSIGTERMShutsDownOnce() async throws {
        let supervisor = try SuperviseTool.Supervisor(apps: """
            { "apps": [
                { "name": "editor", "command": ["sleep", "300"], "start": "foreground" },
                { "name": "sleeper", "command": ["sleep", "300"], "inBackground": "run" }
            ] }
            """)
        defer { supervisor.stop() }
        try supervisor.send("background editor\nforeground sleeper\nstatus\n")
        let lines = try await supervisor.readLines(2)
        #expect(lines.first?.hasPrefix("editor suspended ") == true || lines.first?.hasPrefix("editor background ") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("sleeper active ") == true, "\(lines)")
        let pids = try Self.checkStatus(lines)
        try supervisor.closeInput()
        // A real child process reading the end of its input: its own time is the subject, and
        // nothing it does says it has read it, so a fixed sleep.
        try await Task.sleep(for: .seconds(1))
        #expect(supervisor.isRunning, "the end of standard input does not quit")
        #expect(kill(supervisor.pid, SIGTERM) == 0 && kill(supervisor.pid, SIGTERM) == 0)
        await #expect(supervisor.waitForExit() == 0, "stderr: \(supervisor.currentError)")
        Self.checkGone(pids)
    }

    /// Checks that no process of `pids` is left (not even a zombie: the supervisor reaps them).
    private static func checkGone(_ pids: [Int32]) {
        for pid in pids {
            let result = kill(pid, 0)
            let error = errno
            #expect(result == -1 && error == ESRCH, "process \(pid) is gone")
        }
    }

    /// Checks that `lines` are `editor …` and `sleeper …` status lines, and returns their pids.
    private static func checkStatus(_ lines: [String]) throws -> [Int32] {
        try #require(lines.count == 2, "\(lines)")
        var pids: [Int32] = []
        for (line, name) in zip(lines, ["editor", "sleeper"]) {
            let words = line.split(separator: " ")
            try #require(words.count == 6, "six words: \(line)")
            #expect(words[0] == name[...])
            #expect(["active", "inactive", "background", "suspended"].contains(String(words[1])), "\(line)")
            #expect(Double(words[2]) != nil && words[3] == "MiB" && words[4] == "pid", "\(line)")
            let pid = try #require(Int32(words[5]), "\(line)")
            pids.append(pid)
        }
        if lines[0].hasPrefix("editor active") {
            #expect(lines[1].hasPrefix("sleeper suspended ") || lines[1].hasPrefix("sleeper background "), "\(lines)")
        }
        return pids
    }
}

/// The `mempressure` executable built beside these tests, run as a user runs it.
enum SuperviseTool {
    typealias Run = ExecutableRun

    /// Runs the tool with `arguments` in `directory`, standard input `/dev/null`, and waits for it.
    static func run(_ arguments: [String], in directory: String? = nil) async throws -> Run {
        try await runBuiltExecutable(named: "mempressure", arguments, in: directory.map { URL(filePath: $0) })
    }

    /// `mempressure` in the build directory these tests run from.
    static func executable() throws -> URL {
        try builtExecutable(named: "mempressure")
    }


    /// A new, empty directory; the caller removes it.
    static func temporaryDirectory() throws -> String {
        var template = Array("\(FileManager.default.temporaryDirectory.path)/mempressure-supervise-XXXXXX".utf8CString)
        return String(cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
    }

    /// A pipe read to its end on a thread of its own.
    final class Reader: @unchecked Sendable {
        // @unchecked: `text` is read and written only with `arrived` locked.
        private var text = ""
        /// Locked around `text`, and broadcast whenever more has been read or the pipe ended.
        private let arrived = NSCondition()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                while true {
                    let data = handle.availableBytes()
                    arrived.lock()
                    text += String(decoding: data, as: UTF8.self)
                    arrived.broadcast()
                    arrived.unlock()
                    if data.isEmpty { break }
                }
                done.signal()
            }
        }

        /// What has been read so far.
        var current: String {
            arrived.lock()
            defer { arrived.unlock() }
            return text
        }

        /// What has been read once `enough` holds of it, waiting for more as it arrives; nil when
        /// `deadline` passes first (a bound that only ends a broken test).
        func text(within deadline: Duration, until enough: (String) -> Bool) -> String? {
            let limit = Date.now.addingTimeInterval(Double(deadline.components.seconds))
            arrived.lock()
            defer { arrived.unlock() }
            while !enough(text) {
                guard arrived.wait(until: limit) else { return enough(text) ? text : nil }
            }
            return text
        }

        /// Everything, once the pipe has ended.
        func wait() -> String {
            done.wait()
            done.signal()
            return current
        }
    }

    /// `mempressure supervise` running on a file of `apps`, its standard input a pipe.
    final class Supervisor: Sendable {
        let process = Process()
        private let input: Pipe
        private let output: Reader
        private let error: Reader
        let directory: String
        /// Signalled once the process has ended.
        private let exited = DispatchSemaphore(value: 0)

        /// The control socket's path.
        var socket: String { "\(directory)/ctl.sock" }

        init(apps: String, arguments extraArguments: [String] = [], input: Bool = true) throws {
            let inputPipe = Pipe()
            self.input = inputPipe
            directory = try temporaryDirectory()
            try Data(apps.utf8).write(to: URL(filePath: "\(directory)/apps.json"))
            process.executableURL = try executable()
            process.arguments = ["supervise", "--config", "\(directory)/apps.json", "--socket", "\(directory)/ctl.sock"] + extraArguments
            let outputPipe = Pipe()
            let errorPipe = Pipe()
            process.standardInput = input ? inputPipe : FileHandle.nullDevice
            process.standardOutput = outputPipe
            process.standardError = errorPipe
            process.terminationHandler = { [exited] _ in exited.signal() }
            try process.run()
            output = Reader(outputPipe.fileHandleForReading)
            error = Reader(errorPipe.fileHandleForReading)
        }

        var pid: Int32 { process.processIdentifier }
        var isRunning: Bool { process.isRunning }
        /// Everything on standard output, once it has ended.
        var standardOutput: String { get async { await blockingWait { [output] in output.wait() } } }
        /// Everything on standard error, once it has ended.
        var standardError: String { get async { await blockingWait { [error] in error.wait() } } }

        func send(_ text: String) throws {
            try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        }

        func closeInput() throws {
            try input.fileHandleForWriting.close()
        }

        /// The first `count` lines of standard output, waiting for them as they arrive (20 s at most).
        func readLines(_ count: Int) async throws -> [String] {
            @Sendable func lines(_ text: String) -> [String] {
                text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            }
            if let text = await blockingWait({ [output] in output.text(within: .seconds(20), until: { lines($0).count >= count }) }) {
                return Array(lines(text).prefix(count))
            }
            Issue.record("no \(count) lines within 20 s; stdout: \(output.current.debugDescription), stderr: \(error.current)")
            throw TimedOut()
        }

        struct TimedOut: Error {}

        /// Standard error so far, once it holds `text` (20 s at most).
        @discardableResult
        func waitForError(containing text: String, count: Int = 1) async throws -> String {
            if let all = await blockingWait({ [error] in error.text(within: .seconds(20), until: { $0.components(separatedBy: text).count > count }) }) {
                return all
            }
            Issue.record("no \(text.debugDescription) ×\(count) on standard error within 20 s; stderr: \(error.current)")
            throw TimedOut()
        }

        /// Standard error so far.
        var currentError: String { error.current }

        /// `mempressure ctl --socket SOCKET` with `arguments`.
        func ctl(_ arguments: String...) async throws -> Run {
            try await SuperviseTool.run(["ctl", "--socket", socket] + arguments)
        }

        /// Its exit status, within 20 s (then SIGKILL), waiting for its end as `Process` reports it.
        func waitForExit() async -> Int32 {
            let ended = await blockingWait { [exited] in exited.wait(timeout: .now() + 20) == .success }
            return finishExit(ended: ended)
        }

        /// The exit status once ``waitForExit()``'s wait has `ended` (or not: the supervisor is
        /// then killed), waiting on the calling thread for `Process` to report it.
        private func finishExit(ended: Bool) -> Int32 {
            // Left signalled for a later call (``stop()`` waits too).
            if ended { exited.signal() }
            if !ended, process.isRunning {
                Issue.record("the supervisor did not exit within 20 s")
                kill(pid, SIGKILL)
            }
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// Ends the supervisor if a test left it running, and removes its directory.
        func stop() {
            if process.isRunning {
                kill(pid, SIGTERM)
                _ = finishExit(ended: exited.wait(timeout: .now() + 20) == .success)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}
