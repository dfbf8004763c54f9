#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MemoryPressureMeasurement

/// An armed PSI trigger: an open descriptor of a PSI file that `poll` reports with `POLLPRI` when
/// the trigger fires. Closed when the last reference goes away.
final class StallWatch {
    /// Where to watch and what to write there.
    struct Target: Hashable {
        package var path: FilePath
        /// The trigger text to write, or nil to write nothing (systemd handed a file without one).
        var trigger: [UInt8]?
    }

    package let descriptor: Int32
    package let path: FilePath

    /// The target for `trigger`: systemd's `$MEMORY_PRESSURE_WATCH` (with the base64 trigger in
    /// `$MEMORY_PRESSURE_WRITE`) when set, else `trigger` on `defaultPath`. Nil when systemd set the
    /// watch to `/dev/null` (watching turned off) or its trigger text is not base64.
    package static func target(for trigger: StallTrigger, environment: [String: String], defaultPath: FilePath) -> Target? {
        guard let watch = environment["MEMORY_PRESSURE_WATCH"], !watch.isEmpty else {
            return Target(path: defaultPath, trigger: Array(trigger.description.utf8) + [0])
        }
        guard watch != "/dev/null" else { return nil }
        guard let written = environment["MEMORY_PRESSURE_WRITE"] else {
            return Target(path: FilePath(watch), trigger: nil)
        }
        return Data(base64Encoded: written).map { Target(path: FilePath(watch), trigger: Array($0)) }
    }

    /// Opens `target` and writes its trigger, or throws the errno that refused it.
    package init(arming target: Target) throws(Errno) {
        let descriptor = open(target.path.string, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        if let trigger = target.trigger {
            let written = trigger.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == trigger.count else {
                let failure = written < 0 ? Errno(rawValue: errno) : .ioError
                close(descriptor)
                throw failure
            }
        }
        self.descriptor = descriptor
        self.path = target.path
    }

    deinit {
        close(descriptor)
    }
}

extension StallWatch {
    /// The process environment's `MEMORY_PRESSURE_*` variables.
    static var processEnvironment: [String: String] {
        var environment: [String: String] = [:]
        for name in ["MEMORY_PRESSURE_WATCH", "MEMORY_PRESSURE_WRITE"] {
            if let value = getenv(name) {
                environment[name] = String(cString: value)
            }
        }
        return environment
    }

    /// Arms `trigger` where systemd or the cgroup says: the watch, or nil with the reason in the
    /// status (systemd turned watching off, or the kernel refused the trigger).
    static func arm(_ trigger: StallTrigger) -> (watch: StallWatch?, status: KernelEventSourceStatus) {
        let environment = processEnvironment
        let defaultPath = PressureStallSampleSource.preferredPath()
        guard let target = target(for: trigger, environment: environment, defaultPath: defaultPath) else {
            if environment["MEMORY_PRESSURE_WATCH"] == "/dev/null" {
                return (nil, KernelEventSourceStatus(.pressureStallTrigger, .off, detail: "$MEMORY_PRESSURE_WATCH is /dev/null"))
            }
            return (nil, KernelEventSourceStatus(.pressureStallTrigger, .refused, detail: "$MEMORY_PRESSURE_WRITE is not base64"))
        }
        let text = target.trigger.map { String(decoding: $0.filter { $0 != 0 }, as: UTF8.self) } ?? "systemd's file, nothing written"
        do {
            let watch = try StallWatch(arming: target)
            return (watch, KernelEventSourceStatus(.pressureStallTrigger, .armed, path: target.path, detail: text))
        } catch {
            return (nil, KernelEventSourceStatus(.pressureStallTrigger, .refused, path: target.path, detail: "\"\(text)\" refused: \(error)"))
        }
    }
}
