import Foundation
import MemoryPressure
@testable import MemoryPressureSimulation
import MemoryPressureTestKit
import MemoryTestSupport
import Synchronization
import Testing

/// Issue 18: seeded, mutated scenario files (``ScenarioMutator``), read in process and run by the
/// tool. Each must end in a scenario or in one clear line, in bounded memory, with nothing written
/// when the tool refuses it. A failure names the file's index and its mutations; the seed replays
/// them. Its two tests take their memory turns on their own (one measures, one only moves memory),
/// so they need no order between them.
@Suite
struct ScenarioFuzzTests {
    static let seed: UInt64 = 0x1_8011
    /// Files read in process.
    static let fileCount = 10_000
    /// Files the tool runs: the first of the sequence that decode, and as many that do not.
    static let toolRunsPerOutcome = 100

    /// Each file decodes to a valid scenario, or throws one line that names the file, says what
    /// is wrong and what is expected, echoes nothing raw, and is no longer than the tool prints
    /// (4096 characters); none crashes. Memory: the process's resident bytes never grow by more
    /// than 256 MiB over the start while a file is read (the largest are a few MB), and end within
    /// 64 MiB of it. A watchdog names a file still being read after 60 s; time is not asserted.
    @Test(.exclusiveMemoryUse)
    func generatedFilesEachEndInAScenarioOrOneClearLine() async throws {
        var mutator = ScenarioMutator(seed: Self.seed)
        let baseline = try settledResidentBytes()
        let progress = Progress()
        var (decoded, refused, peakGrowth, longestMessage, largestFile) = (0, 0, 0, 0, 0)
        let started = ContinuousClock.now
        try await progress.watched {
            for index in 0 ..< Self.fileCount {
                let (bytes, mutations) = mutator.next()
                progress.begin(index, mutations)
                largestFile = max(largestFile, bytes.count)
                if let message = Self.outcome(of: bytes) {
                    refused += 1
                    longestMessage = max(longestMessage, message.count)
                    Self.checkClear(message, file: index, mutations)
                } else {
                    decoded += 1
                }
                peakGrowth = max(peakGrowth, try residentBytes() - baseline)
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(decoded + refused == Self.fileCount)
        #expect(decoded >= Self.toolRunsPerOutcome && refused >= Self.toolRunsPerOutcome, "both outcomes are common: \(decoded) decoded")
        #expect(peakGrowth < 256 * mebibyte, "resident bytes grew by \(ByteCount(peakGrowth)) while a file was read")
        let growth = try settledResidentBytes() - baseline
        #expect(growth < 64 * mebibyte, "resident bytes grew by \(ByteCount(growth)) over the run")
        print("scenario fuzzing: \(Self.fileCount) files (seed \(Self.seed), largest \(ByteCount(largestFile))): \(decoded) decoded, "
            + "\(refused) refused (longest message \(longestMessage) characters), resident growth peak \(ByteCount(peakGrowth)), in \(elapsed)")
    }

    /// The tool, run on 200 of the files with `--duration 1s` and, to bound the memory its apps
    /// take, `--budget 384MiB`, eight at a time (a run mostly waits for its scenario's second:
    /// about 0.15 s of CPU in 1.5 s): each exits 0 with its report written, or 2 with one line on
    /// standard error and nothing written; what it prints is escaped. The runs' memory counts in
    /// this process's cgroup, so they never run beside a test that measures memory; they measure
    /// none here, so they may run beside tests that only move it.
    @Test(.memoryChurn)
    func theToolEndsEachOfTwoHundredFilesWithStatusZeroOrTwo() async throws {
        var mutator = ScenarioMutator(seed: Self.seed)
        var chosen: [GeneratedFile] = []
        var (decoding, refused) = (0, 0)
        for index in 0 ..< Self.fileCount where decoding < Self.toolRunsPerOutcome || refused < Self.toolRunsPerOutcome {
            let (bytes, mutations) = mutator.next()
            let decodes = Self.outcome(of: bytes) == nil
            if decodes ? decoding < Self.toolRunsPerOutcome : refused < Self.toolRunsPerOutcome {
                chosen.append(GeneratedFile(index: index, bytes: bytes, mutations: mutations))
                if decodes { decoding += 1 } else { refused += 1 }
            }
        }
        #expect(chosen.count == 2 * Self.toolRunsPerOutcome)
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let started = ContinuousClock.now
        let runs = await ToolRun.each(of: chosen, in: directory, atATime: 8)
        let elapsed = ContinuousClock.now - started
        var statuses: [Int32: Int] = [:]
        for run in runs {
            statuses[run.status, default: 0] += 1
            run.check()
        }
        #expect(runs.count == chosen.count)
        #expect(statuses.keys.allSatisfy { $0 == 0 || $0 == 2 }, "exit statuses: \(statuses)")
        print("scenario fuzzing end to end: \(runs.count) files run (\(decoding) that decode in process), "
            + "exit statuses \(statuses.sorted { $0.key < $1.key }), in \(elapsed)")
    }

    // MARK: Checks

    /// Nil when `bytes` decode to a valid scenario; else the error's message.
    private static func outcome(of bytes: [UInt8]) -> String? {
        do throws(SimulationError) {
            _ = try ScenarioFile.parse(bytes, source: "scenario file fuzz.json", defaultName: "fuzz", limits: eightGiBMachine)
            return nil
        } catch {
            #expect(error.code == .invalidScenario, "\(error)")
            return error.description
        }
    }

    /// Records an issue unless `message` is one clear line.
    private static func checkClear(_ message: String, file index: Int, _ mutations: [String]) {
        let problems = [
            // By scalars: a key that begins with a combining mark joins the space before it.
            message.unicodeScalars.starts(with: "scenario file fuzz.json: ".unicodeScalars) ? nil : "does not name the file",
            message.contains("; expected ") ? nil : "does not say what is expected",
            message.contains("\n") ? "is more than one line" : nil,
            printsSafelyOnATerminal(message) ? nil : "holds a raw control or bidirectional character",
            // The tool cuts an error line at 4096 characters: none of its own should need it.
            message.count <= 4096 ? nil : "is \(message.count) characters long",
            // The decoder's own words, which the checks before it should leave it no reason to say.
            ["not valid JSON (", "DecodingError", "Swift.", "The given data"].contains(where: message.contains) ? "is the decoder's, not ours" : nil,
        ].compactMap { $0 }
        if !problems.isEmpty {
            Issue.record("file \(index) (\(mutations.joined(separator: "; "))): the message \(problems.joined(separator: ", ")): \(message.prefix(600).debugDescription)")
        }
    }
}

/// A generated file: where it is in the sequence, its bytes and its mutations.
struct GeneratedFile: Sendable {
    let index: Int
    let bytes: [UInt8]
    let mutations: [String]
}

/// How the tool ended on one generated file, and what it left in the file's directory.
private struct ToolRun: Sendable {
    let file: GeneratedFile
    var status: Int32 = -1
    var standardOutput = ""
    var standardError = ""
    /// The names in the file's directory afterwards.
    var left: [String] = []
    var reportDecodes = false

    /// Runs the tool on each of `files`, `count` at a time, each in a directory of its own under
    /// `directory`.
    static func each(of files: [GeneratedFile], in directory: URL, atATime count: Int) async -> [ToolRun] {
        let queue = RunQueue(files: files, directory: directory)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< count {
                group.addTask { await queue.work() }
            }
        }
        return queue.runs
    }

    /// Runs the tool on `file`, written to `scenario.json` in the new `directory`, with its report
    /// asked for beside it; then removes the directory. No test expectations here: ``check()``
    /// judges the runs once they are all done.
    init(_ file: GeneratedFile, in directory: URL) async {
        self.file = file
        let report = directory.appending(path: "report.json")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let scenario = directory.appending(path: "scenario.json")
            try Data(file.bytes).write(to: scenario)
            let run = try await Tool.run([
                "run", "--scenario", scenario.path, "--duration", "1s", "--budget", "384MiB", "--quiet", "--report", report.path,
            ])
            (status, standardOutput, standardError) = (run.status, run.standardOutput, run.standardError)
            left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            reportDecodes = (try? JSONDecoder().decode(SimulationReport.self, from: Data(contentsOf: report))) != nil
        } catch {
            standardError = "the test could not run the tool: \(error)"
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Records an issue unless the tool exited 0 with its report written, or 2 with one line on
    /// standard error and nothing written; and unless all it printed is escaped.
    func check() {
        let context = "file \(file.index) (\(file.mutations.joined(separator: "; "))): status \(status), stderr \(standardError.prefix(600).debugDescription)"
        switch status {
        case 0:
            #expect(left == ["report.json", "scenario.json"] && reportDecodes, "\(context)")
        case 2:
            #expect(left == ["scenario.json"], "nothing written: \(context)")
            #expect(standardError.hasPrefix("mempressure: ") && standardError.split(separator: "\n").count == 1, "\(context)")
            #expect(standardOutput.isEmpty, "\(context)")
        default:
            Issue.record("\(context)")
        }
        #expect((standardOutput + standardError).split(separator: "\n").allSatisfy { printsSafelyOnATerminal(String($0)) }, "\(context)")
    }
}

/// The files still to run and the runs done, shared by the tasks that run them.
private final class RunQueue: Sendable {
    private let files: [GeneratedFile]
    private let directory: URL
    private let next = Atomic<Int>(0)
    private let done = Mutex<[ToolRun]>([])

    init(files: [GeneratedFile], directory: URL) {
        self.files = files
        self.directory = directory
    }

    /// Runs files, one after another, until none is left.
    func work() async {
        while true {
            let position = next.add(1, ordering: .relaxed).oldValue
            guard position < files.count else { return }
            let run = await ToolRun(files[position], in: directory.appending(path: "\(files[position].index)"))
            done.withLock { $0.append(run) }
        }
    }

    /// The runs done, in the files' order.
    var runs: [ToolRun] {
        done.withLock { $0 }.sorted { $0.file.index < $1.file.index }
    }
}

/// Which file is being read, for a watchdog that names one still being read after 60 s.
private final class Progress: Sendable {
    /// A file begun: its index and the mutations that made it.
    private struct File: Sendable {
        let index: Int
        let mutations: [String]
    }

    /// The files begun, newest only: the watchdog waits for the next one.
    private let begun: AsyncStream<File>
    private let beginning: AsyncStream<File>.Continuation

    init() {
        (begun, beginning) = AsyncStream.makeStream(of: File.self, bufferingPolicy: .bufferingNewest(1))
    }

    func begin(_ index: Int, _ mutations: [String]) {
        beginning.yield(File(index: index, mutations: mutations))
    }

    /// Runs `body` with a watchdog beside it that records an issue, once, when one file has been
    /// read for 60 s (the next file did not begin within 60 s of it): a hang guard, not a measure
    /// of time. The watchdog waits for each beginning with that deadline; it polls nothing.
    func watched(_ body: () throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [begun] in
                guard var reading = await begun.first(within: .seconds(60), where: { _ in true }) else { return }
                while !Task.isCancelled {
                    guard let next = await begun.first(within: .seconds(60), where: { _ in true }) else {
                        // The deadline passed (the stream ends with the wait), or the run is over.
                        if !Task.isCancelled {
                            Issue.record("file \(reading.index) (\(reading.mutations.joined(separator: "; "))) has been read for over 60 s")
                        }
                        return
                    }
                    reading = next
                }
            }
            defer { group.cancelAll() }
            try body()
        }
    }
}
