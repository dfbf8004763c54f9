#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MemoryPressureClient

// A child process for ClientChannelTests, written on MemoryPressureClient as any child would be.
//
// Environment:
// - MEMORY_PRESSURE_CLIENT_FD: the channel (MemoryPressureClient.fromEnvironment()).
// - CLIENT_FIXTURE_LOG: a file to which each callback is appended as a line when it runs
//   (`didBecomeActive`, `didReceiveMemoryWarning critical`), and, after a memory warning,
//   `ballast <bytes>` with the ballast left. Written before the callback returns, so before the
//   system reads its `done`.
// - CLIENT_FIXTURE_BALLAST_BYTES: bytes mapped and touched at the start, in 1 MiB pieces (none when
//   unset); each memory warning unmaps half of the pieces left.
// - CLIENT_FIXTURE_DELAY_MS: how long each callback takes (none when unset).
// - CLIENT_FIXTURE_STALL: a callback (`didEnterBackground`, …) that stalls for 30 s, never answered
//   within any deadline.
// - CLIENT_FIXTURE_STAY: `1` to stay, after `willTerminate` was answered, until a signal ends it.
// - CLIENT_FIXTURE_SAVE_STATE: `1` to log the launch's options as a line (`options REASON previous
//   PREVIOUS status STATUS signal SIGNAL restored STATE`, `-` for what is absent) after
//   `didFinishLaunching`, and to save `position N` in each `didEnterBackground`, N one more than
//   the position restored (1 on a launch that restored none), logged as `saved position N`.
// - CLIENT_FIXTURE_PROTOCOL: `1` to speak protocol 1 as a child built before protocol 2 did, without
//   MemoryPressureClient: each message's callback name logged if protocol 1 has it, every message
//   answered `done`, the end at `willTerminate`.
//
// Exit status: 0 once `willTerminate` was answered; 2 when the variable is not set; 1 when the
// channel is unusable; 3 when the system closed the channel.

/// The fixture's delegate: logs each callback, frees ballast on a memory warning.
final class FixtureDelegate: MemoryPressureClientDelegate {
    private let log: Int32
    private let delayMilliseconds: Int32
    private let stalled = environment("CLIENT_FIXTURE_STALL")
    private var ballast: [UnsafeMutableRawPointer] = []
    private static let piece = 1 << 20

    init() {
        log = environment("CLIENT_FIXTURE_LOG").map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } ?? -1
        delayMilliseconds = environment("CLIENT_FIXTURE_DELAY_MS").flatMap { Int32($0) } ?? 0
        let bytes = environment("CLIENT_FIXTURE_BALLAST_BYTES").flatMap { Int($0) } ?? 0
        for _ in 0..<(bytes / Self.piece) {
            guard let piece = mmap(nil, Self.piece, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), piece != MAP_FAILED else {
                break
            }
            memset(piece, 0x5A, Self.piece)  // Touched: resident.
            ballast.append(piece)
        }
    }

    private let savesState = environment("CLIENT_FIXTURE_SAVE_STATE") == "1"
    /// The position restored at launch (0 for none).
    private var position = 0

    func willFinishLaunching() { record("willFinishLaunching") }
    func didFinishLaunching(options: ClientLaunchOptions) {
        record("didFinishLaunching")
        guard savesState else { return }
        let restored = options.restoredState.map { String(decoding: $0, as: UTF8.self) }
        if let restored, restored.hasPrefix("position "), let number = Int(restored.dropFirst("position ".count)) {
            position = number
        }
        let previous = options.previousTermination
        append(
            "options \(options.reason) previous \(previous?.reason ?? "-") status \(previous?.exitStatus.map(String.init) ?? "-")"
                + " signal \(previous?.signal.map(String.init) ?? "-") restored \(restored ?? "-")"
        )
    }
    func didBecomeActive() { record("didBecomeActive") }
    func willResignActive() { record("willResignActive") }
    func didEnterBackground() {
        record("didEnterBackground")
        guard savesState else { return }
        do {
            try client.saveState(Array("position \(position + 1)".utf8))
            append("saved position \(position + 1)")
        } catch {
            append("not saved: \(error)")
        }
    }
    func willEnterForeground() { record("willEnterForeground") }
    func willTerminate() { record("willTerminate") }

    func didReceiveMemoryWarning(level: MemoryWarningLevel) {
        record("didReceiveMemoryWarning \(level)")
        let freed = ballast.count - ballast.count / 2
        for piece in ballast.suffix(freed) { munmap(piece, Self.piece) }
        ballast.removeLast(freed)
        append("ballast \(ballast.count * Self.piece)")
    }

    /// Logs `callback`, then takes the callback's time (30 s for the stalled one).
    private func record(_ callback: String) {
        append(callback)
        let milliseconds = callback == stalled ? 30_000 : delayMilliseconds
        if milliseconds > 0 { _ = poll(nil, 0, milliseconds) }
    }

    private func append(_ line: String) {
        guard log >= 0 else { return }
        var line = line + "\n"
        _ = line.withUTF8 { write(log, $0.baseAddress, $0.count) }
    }
}

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

func fail(_ message: String, status: Int32) -> Never {
    var text = "client-fixture: \(message)\n"
    _ = text.withUTF8 { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// Protocol 1, as a child built before protocol 2 speaks it: the callbacks it knows are logged,
/// every message is answered, and `willTerminate` ends it.
func runProtocolOne(on descriptor: Int32, log: Int32) -> Never {
    let known = [
        "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
        "willEnterForeground", "willTerminate", "didReceiveMemoryWarning",
    ]
    var buffer = [UInt8](repeating: 0, count: 128)
    while true {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { exit(3) }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard fields.count >= 2 else { continue }
        let name = String(decoding: fields[1], as: UTF8.self)
        if known.contains(name), log >= 0 {
            var line = name + "\n"
            _ = line.withUTF8 { write(log, $0.baseAddress, $0.count) }
        }
        var answer = String(decoding: fields[0], as: UTF8.self) + " done"
        _ = answer.withUTF8 { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if name == "willTerminate" { exit(0) }
    }
}

if environment("CLIENT_FIXTURE_PROTOCOL") == "1" {
    guard let number = environment(MemoryPressureClient.environmentName).flatMap({ Int32($0) }) else { fail("no channel", status: 2) }
    runProtocolOne(on: number, log: environment("CLIENT_FIXTURE_LOG").map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } ?? -1)
}

let client: MemoryPressureClient
do {
    guard let fromEnvironment = try MemoryPressureClient.fromEnvironment() else {
        fail("\(MemoryPressureClient.environmentName) is not set", status: 2)
    }
    client = fromEnvironment
    try client.start(delegate: FixtureDelegate())
} catch {
    fail("\(error)", status: 1)
}
switch client.wait() {
case .terminated?:
    if environment("CLIENT_FIXTURE_STAY") == "1" {
        while true { pause() }
    }
    exit(0)
case .channelClosed?, .stopped?, nil:
    exit(3)
}
