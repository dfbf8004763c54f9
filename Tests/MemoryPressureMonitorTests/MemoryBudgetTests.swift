@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
import Testing

struct MemoryBudgetTests {
    static let gibibyte = 1 << 30
    /// A machine of 16 GiB in a cgroup limited to 4 GiB (memory.max) and throttled at 3 GiB (memory.high).
    static let limited = MemoryLimits(physicalBytes: 16 * gibibyte, controlGroupMaximum: 4 * gibibyte, controlGroupHigh: 3 * gibibyte)
    static let unlimited = MemoryLimits(physicalBytes: 16 * gibibyte)

    @Test func resolvesFromEachSource() throws {
        #expect(try MemoryBudget.resolve(.bytes(1 << 30), limits: Self.limited).totalBytes == 1 << 30)
        #expect(try MemoryBudget.resolve(.controlGroup(), limits: Self.limited).totalBytes == Int(Double(3 * Self.gibibyte) * 0.9))
        #expect(try MemoryBudget.resolve(.physicalMemory(ratio: 0.5), limits: Self.unlimited).totalBytes == 8 * Self.gibibyte)
        #expect(try MemoryBudget.resolve(.automatic(), limits: Self.limited).totalBytes == Int(Double(3 * Self.gibibyte) * 0.9))
        #expect(try MemoryBudget.resolve(.automatic(ratio: 0.25), limits: Self.unlimited).totalBytes == 4 * Self.gibibyte)
        let maxOnly = MemoryLimits(physicalBytes: 16 * Self.gibibyte, controlGroupMaximum: 2 * Self.gibibyte)
        #expect(try MemoryBudget.resolve(.controlGroup(ratio: 1), limits: maxOnly).totalBytes == 2 * Self.gibibyte)
    }

    @Test func parsesSizes() throws {
        let budget = try MemoryBudget(parsing: "1.5G", limits: Self.unlimited)
        #expect(budget.totalBytes == 3 << 29)
        #expect(budget.bytes(enteringAbove: .warning) == Int(Double(3 << 29) * 0.8))
        #expect(budget.bytes(leavingBelow: .critical) == Int(Double(3 << 29) * 0.85))
    }

    @Test func resolvesAgainstTheRealMachine() throws {
        let limits = MemoryLimits.current()
        #expect(limits.physicalBytes > 64 << 20)
        let budget = try MemoryBudget.resolve(.automatic(), limits: limits)
        #expect(budget.totalBytes > 0)
        #expect(budget.totalBytes <= limits.physicalBytes)
    }

    @Test(arguments: [
        ("0", MemoryPressureError.Code.invalidBudget, "memory budget of 0 bytes is not positive; expected between 1 byte and the machine's memory"),
        ("-5MiB", .invalidBudget, "memory budget of -5242880 bytes is not positive; expected between 1 byte and the machine's memory"),
        ("lots", .unparsableValue, "memory budget: size \"lots\" is not valid; expected \(ByteCount.parsingForm)"),
        ("12 parsecs", .unparsableValue, "memory budget: size \"12 parsecs\" is not valid; expected \(ByteCount.parsingForm)"),
        ("", .unparsableValue, "memory budget: size \"\" is not valid; expected \(ByteCount.parsingForm)"),
        (
            "17GiB", .invalidBudget, "memory budget of 17 GiB (18253611008 bytes) exceeds the machine's physical memory of 16 GiB "
                + "(17179869184 bytes); expected between 1 byte and 17179869184 bytes"
        ),
    ])
    func rejectsBadBudgetTexts(_ text: String, _ code: MemoryPressureError.Code, _ message: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try MemoryBudget(parsing: text, limits: Self.unlimited)
        }
        #expect(error?.code == code)
        #expect(error?.description == message)
    }

    @Test func rejectsABudgetAboveTheCgroupLimitNamingIt() {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try MemoryBudget(totalBytes: 5 * Self.gibibyte, limits: Self.limited)
        }
        #expect(error?.code == .invalidBudget)
        #expect(error?.exceededLimit == MemoryPressureError.ExceededLimit(bytes: 4 * Self.gibibyte, name: "the cgroup's memory.max"))
        #expect(
            error?.description == "memory budget of 5 GiB (5368709120 bytes) exceeds the cgroup's memory.max of 4 GiB "
                + "(4294967296 bytes); expected between 1 byte and 4294967296 bytes"
        )
    }

    @Test(arguments: [0.0, -0.5, 1.5, Double.nan])
    func rejectsRatiosOutOfRange(_ ratio: Double) {
        for source in [MemoryBudget.Source.controlGroup(ratio: ratio), .physicalMemory(ratio: ratio), .automatic(ratio: ratio)] {
            let error = #expect(throws: MemoryPressureError.self) {
                _ = try MemoryBudget.resolve(source, limits: Self.limited)
            }
            #expect(error?.code == .invalidBudget)
            #expect(error?.description == "memory budget ratio \(ratio) is out of range; expected a ratio greater than 0 and at most 1")
        }
    }

    @Test func cgroupSourceWithoutALimitIsAnError() {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try MemoryBudget.resolve(.controlGroup(), limits: Self.unlimited)
        }
        #expect(error?.code == .noControlGroupLimit)
        #expect(
            error?.description == "memory budget from the cgroup: no memory.max or memory.high up to the root (v2) and no "
                + "hierarchical_memory_limit (v1) sets a limit; expected a cgroup with a memory limit, or give the budget in bytes"
        )
    }

    @Test(arguments: [
        (0.8, 0.7, 0.6, 0.65),   // critical below warning
        (0.8, 0.95, 0.85, 0.9),  // warning recovery above warning
        (0.8, 0.95, 0.0, 0.85),  // warning recovery zero
        (0.8, 1.2, 0.7, 0.85),   // critical above the budget
        (0.8, 0.95, 0.7, 0.96),  // critical recovery above critical
        (0.8, 0.95, 0.7, 0.6),   // critical recovery below warning recovery
    ])
    func rejectsThresholdsOutOfOrder(_ warning: Double, _ critical: Double, _ warningRecovery: Double, _ criticalRecovery: Double) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try MemoryBudget.Thresholds(
                warning: warning, critical: critical, warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
            )
        }
        #expect(error?.code == .invalidBudget)
        #expect(
            error?.description == "memory budget thresholds are out of order (warning \(warning), critical \(critical), "
                + "warning recovery \(warningRecovery), critical recovery \(criticalRecovery)); expected "
                + "0 < warning recovery < warning < critical <= 1 and warning recovery <= critical recovery < critical"
        )
    }
}
