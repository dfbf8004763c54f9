import Foundation
@testable import mempressure
import MemoryPressureSimulation
import MemoryTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure run --processes`: the scenario's apps as child processes (`mempressure app-process`).
@Suite(.serialized)
struct RunProcessesTests {
    // MARK: The profile argument

    @Test func everyBuiltInProfileSurvivesItsJSON() throws {
        for name in AppProfile.builtInNames {
            let profile = try #require(AppProfile.builtIn[name])
            let argument = AppProcessProfile.argument(for: profile)
            #expect(argument.hasPrefix("{"))
            #expect(AppProcessProfile.parse(argument) == profile, "\(name)")
            #expect(AppProcessProfile.parse(name) == profile, "a built-in profile by name")
        }
        #expect(AppProcessProfile.parse("no-such-profile") == nil)
        #expect(AppProcessProfile.parse("{ \"name\": 1 }") == nil)
    }

    // MARK: The child's memory

    @Test func theChildAllocatesOnLaunchAndActivityAndFreesInTheBackground() throws {
        let profile = try #require(AppProfile.builtIn["photos"])
        let memory = ProcessAppMemory(profile: profile, seed: 1, index: 1)
        memory.load()
        #expect(memory.heldBytes == profile.launchBytes)
        memory.performActivity(seconds: 1)
        #expect(memory.heldBytes == profile.launchBytes, "no activity before didBecomeActive")
        memory.becomeActive()
        memory.performActivity(seconds: 1)
        let active = memory.heldBytes
        #expect(active > profile.launchBytes + profile.workingSet.bytesPerSecond)
        memory.trimForWarning()
        #expect(memory.heldBytes < active, "photos empties its image cache on a warning")
        memory.enterBackground()
        #expect(memory.heldBytes == profile.launchBytes + profile.workingSet.bytesPerSecond, "its own data is kept, the rest freed")
    }

    @Test func aLaunchIntoTheBackgroundIsAFetch() throws {
        let profile = try #require(AppProfile.builtIn["music"])
        let memory = ProcessAppMemory(profile: profile, seed: 1, index: 2)
        memory.load()
        memory.enterBackground()
        #expect(memory.heldBytes == profile.launchBytes + profile.fetchBytes)
    }

    // MARK: The tool

    @Test func appProcessRefusesToRunOutsideARun() async throws {
        let run = try await ProcessTool.run(["app-process", "--profile", "notes", "--app", "x"], environment: ["MEMORY_PRESSURE_CLIENT_FD": nil])
        #expect(run.status == 2)
        #expect(run.standardError.contains("neither a built-in profile"))
        let unset = try await ProcessTool.run(["app-process", "--profile", "utility", "--app", "x"], environment: ["MEMORY_PRESSURE_CLIENT_FD": nil])
        #expect(unset.status == 2)
        #expect(unset.standardError.contains("only as a child"))
    }

    @Test func aShortRunOfProcessAppsReportsTheirPeaksAndLeavesNoChild() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "mempressure-processes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let reportPath = directory.appending(path: "report.json").path
        let run = try await ProcessTool.run(["run", "--apps", "3", "--duration", "3s", "--processes", "--quiet", "--report", reportPath])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("apps as child processes"))
        #expect(run.standardOutput.contains("child processes (peak footprint"))
        #expect(run.standardOutput.contains("invariant violations  0"))

        let report = try JSONDecoder().decode(SimulationReport.self, from: Data(contentsOf: URL(filePath: reportPath)))
        #expect(report.invariantViolations.isEmpty, "\(report.invariantViolations)")
        #expect(report.lostStates == 0, "every relaunch restored the state its child saved last")
        #expect(report.apps == 3)
        let processes = try #require(report.processes)
        #expect(processes.map(\.app).count == 3)
        let launched = processes.filter { !$0.pids.isEmpty }
        #expect(!launched.isEmpty)
        for process in launched {
            #expect(process.peakFootprintBytes > 0, "\(process.app)")
            #expect(process.freezeMechanism != nil, "\(process.app)")
        }
        // The first app is opened at the start: its child holds at least its launch bytes.
        let first = try #require(processes.first)
        #expect(first.peakFootprintBytes >= (AppProfile.builtIn["photos"]?.launchBytes ?? 0))
        // Every child ended with the run: none is left running.
        for pid in processes.flatMap(\.pids) {
            #expect(!ProcessTool.isAppProcess(pid), "pid \(pid) outlived the run")
        }
        #expect(report.shutDownExits?.isEmpty == false, "the children still running at the end were ended, each with its exit")
    }
}

/// The `mempressure` executable built beside these tests, run as a user would.
enum ProcessTool {
    typealias Run = ExecutableRun

    /// Runs the tool with `arguments` (and the host's environment changed by `environment`, nil
    /// removing a name), waits at most `timeout` for it to end (then kills it).
    static func run(_ arguments: [String], environment: [String: String?] = [:], timeout: Duration = .seconds(120)) async throws -> Run {
        try await runBuiltExecutable(named: "mempressure", arguments, environment: environment, timeout: timeout)
    }

    /// Whether `pid` is (still) a `mempressure app-process`.
    static func isAppProcess(_ pid: Int32) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        return String(decoding: data, as: UTF8.self).contains("app-process")
    }
}
