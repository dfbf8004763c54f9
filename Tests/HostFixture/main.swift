#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import MemoryPressure

// A host process for the tests of children that must not outlive it: a memory system running
// three process apps, then an end that is not `shutDown()`.
//
// Arguments: the end, one of
// - `kill`: waits, once ready, for the test's SIGKILL;
// - `exit`: calls exit(0) once ready;
// - `sweep`: starts one child, as the next host, which sweeps what an earlier host left; then
//   shuts down.
// Environment: HOST_FIXTURE_OUTPUT, a file to which it writes `pid NAME PID` for each app's
// process and `cgroup NAME DIRECTORY` for each of its cgroups, then `ready`; HOST_FIXTURE_FREEZER, the frozen app's freezer (a `FreezeMechanism` raw
// value; this machine's best when unset). Its log (level info) is on standard error.
//
// The apps, each `sleep 300`: `running` (active), `worker` (in the background, running) and
// `frozen` (suspended, its process frozen).

LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }

func fail(_ message: String) -> Never {
    var text = "host-fixture: \(message)\n"
    _ = text.withUTF8 { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard let end = arguments.first, ["kill", "exit", "sweep"].contains(end), arguments.count == 1 else {
    fail("expected one argument: kill, exit or sweep")
}
guard let outputPath = getenv("HOST_FIXTURE_OUTPUT").map({ String(cString: $0) }) else {
    fail("HOST_FIXTURE_OUTPUT is not set")
}
let output = open(outputPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
guard output >= 0 else { fail("cannot open \(outputPath)") }

func say(_ line: String) {
    var line = line + "\n"
    _ = line.withUTF8 { write(output, $0.baseAddress, $0.count) }
}

var configuration = MemorySystem.Configuration(budget: try MemoryBudget(totalBytes: 1 << 30))
configuration.logger = Logger(label: "host-fixture")
let system = try MemorySystem(configuration: configuration)

if end == "sweep" {
    let app = try system.register(try AppIdentifier("next"), process: .shell("exec sleep 300"))
    try await app.launch()
    say("pid next \(system.process(of: app.identifier)?.pid ?? 0)")
    say("ready")
    await system.shutDown()
    exit(0)
}

let running = try system.register(try AppIdentifier("running"), process: .shell("exec sleep 300"))
let worker = try system.register(
    try AppIdentifier("worker"), process: .shell("exec sleep 300"), options: ProcessAppOptions(inBackground: .run)
)
let freezer = getenv("HOST_FIXTURE_FREEZER").map { String(cString: $0) }.map { name -> FreezeMechanism in
    guard let freezer = FreezeMechanism(rawValue: name) else { fail("HOST_FIXTURE_FREEZER \(name) is not a freezer") }
    return freezer
}
let frozen = try system.register(
    try AppIdentifier("frozen"), process: .shell("exec sleep 300"), options: ProcessAppOptions(freezeMechanism: freezer)
)
for app in [running, worker, frozen] {
    try await app.launch()
}
guard try await worker.enterBackground() == .background, try await frozen.enterBackground() == .suspended,
      system.process(of: frozen.identifier)?.isFrozen == true
else {
    fail("the apps did not reach their states")
}
for app in [running, worker, frozen] {
    let status = system.process(of: app.identifier)
    say("pid \(app.identifier) \(status?.pid ?? 0)")
    for group in status?.controlGroups ?? [] { say("cgroup \(app.identifier) \(group)") }
}
say("ready")
if end == "exit" { exit(0) }
while true { pause() }
