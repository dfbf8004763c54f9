import MemoryPressure
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
        ("0", "is not positive"),
        ("-5MiB", "is not positive"),
        ("lots", "\"lots\" is not valid"),
        ("12 parsecs", "is not valid"),
        ("", "is not valid"),
        ("17GiB", "exceeds the machine's physical memory"),
    ])
    func rejectsBadBudgetTexts(_ text: String, _ reason: String) {
        #expect {
            _ = try MemoryBudget(parsing: text, limits: Self.unlimited)
        } throws: { error in
            guard let error = error as? MemoryBudgetError else { return false }
            return error.description.contains(reason) && error.description.contains("expected")
        }
    }

    @Test func rejectsABudgetAboveTheCgroupLimitNamingIt() {
        #expect {
            _ = try MemoryBudget(totalBytes: 5 * Self.gibibyte, limits: Self.limited)
        } throws: { error in
            let description = (error as? MemoryBudgetError)?.description ?? ""
            return description.contains("memory.max") && description.contains("expected between 1 byte and \(4 * Self.gibibyte) bytes")
        }
    }

    @Test(arguments: [0.0, -0.5, 1.5, Double.nan])
    func rejectsRatiosOutOfRange(_ ratio: Double) {
        for source in [MemoryBudget.Source.controlGroup(ratio: ratio), .physicalMemory(ratio: ratio), .automatic(ratio: ratio)] {
            #expect {
                _ = try MemoryBudget.resolve(source, limits: Self.limited)
            } throws: { error in
                (error as? MemoryBudgetError)?.description.contains("greater than 0 and at most 1") == true
            }
        }
    }

    @Test func cgroupSourceWithoutALimitIsAnError() {
        #expect {
            _ = try MemoryBudget.resolve(.controlGroup(), limits: Self.unlimited)
        } throws: { error in
            (error as? MemoryBudgetError)?.problem == .noControlGroupLimit
        }
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
        #expect {
            _ = try MemoryBudget.Thresholds(
                warning: warning, critical: critical, warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
            )
        } throws: { error in
            (error as? MemoryBudgetError)?.description.contains("0 < warning recovery < warning < critical <= 1") == true
        }
    }
}
