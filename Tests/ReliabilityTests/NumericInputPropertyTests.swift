@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import MemoryTestSupport
import PropertyBased
import Testing

/// Random numbers thrown at every setting the system checks: thresholds, ratios, time limits,
/// trigger windows, fractions, cache limits, store dimensions. Each is accepted exactly when it is in
/// the documented range, and otherwise rejected with an error naming the value and that range.
@Suite struct NumericInputPropertyTests {
    /// Inputs tried per setting.
    static let count = 2_000

    @Test func thresholdsAreAcceptedExactlyInOrder() async {
        let tally = InputTally()
        let ratio = zip(BadInput.double, Gen.double(in: 0...1), Gen.int(in: 0...1)).map { wild, unit, pick in
            pick == 0 ? wild : unit
        }
        await propertyCheck(count: Self.count, input: ratio, ratio, ratio, ratio) { warning, critical, warningRecovery, criticalRecovery in
            tally.record()
            let ordered = warningRecovery > 0 && warningRecovery < warning && warning < critical && critical <= 1
                && warningRecovery <= criticalRecovery && criticalRecovery < critical
            do throws(MemoryPressureError) {
                let thresholds = try MemoryBudget.Thresholds(
                    warning: warning, critical: critical,
                    warningRecovery: warningRecovery, criticalRecovery: criticalRecovery
                )
                #expect(ordered)
                #expect(thresholds.ratios.warning == warning)
            } catch {
                #expect(!ordered)
                #expect(error.code == .invalidBudget)
                #expect(error.description.contains("\(warning)"))
                #expect(error.description.contains("expected 0 < warning recovery < warning < critical <= 1"))
            }
        }
        #expect(tally.total == Self.count)
    }

    @Test func budgetsInBytesAndRatiosAreAcceptedExactlyInRange() async {
        let tally = InputTally()
        let limits = MemoryLimits(physicalBytes: 16 << 30, controlGroupMaximum: 4 << 30, controlGroupHigh: 3 << 30)
        await propertyCheck(count: Self.count, input: BadInput.integer, BadInput.double) { bytes, ratio in
            tally.record()
            do throws(MemoryPressureError) {
                let budget = try MemoryBudget(totalBytes: bytes, limits: limits)
                #expect((1...(4 << 30)).contains(bytes))
                #expect(budget.totalBytes == bytes)
            } catch {
                #expect(!(1...(4 << 30)).contains(bytes))
                #expect(error.code == .invalidBudget)
                #expect(error.description.contains("\(bytes) bytes"))
                #expect(error.description.contains("expected between 1 byte and"))
            }
            for source in [MemoryBudget.Source.controlGroup(ratio: ratio), .physicalMemory(ratio: ratio), .automatic(ratio: ratio)] {
                let expected = Self.expectedBudget(source, ratio: ratio)
                do throws(MemoryPressureError) {
                    let budget = try MemoryBudget.resolve(source, limits: limits)
                    #expect(budget.totalBytes == expected)
                } catch {
                    #expect(expected == nil)
                    #expect(error.code == .invalidBudget)
                    #expect(error.description.contains("expected"))
                }
            }
        }
        #expect(tally.total == Self.count)
    }

    /// The budget `source` resolves to against 16 GiB of memory in a cgroup with memory.max 4 GiB
    /// and memory.high 3 GiB, or nil when it must be rejected.
    static func expectedBudget(_ source: MemoryBudget.Source, ratio: Double) -> Int? {
        guard ratio > 0, ratio <= 1 else { return nil }
        let base = if case .physicalMemory = source { 16 << 30 } else { 3 << 30 }
        let total = Int(Double(base) * ratio)
        return (1...(4 << 30)).contains(total) ? total : nil
    }

    @Test func appTimeLimitsAreAcceptedExactlyFromOneMillisecondToOneHour() async {
        let tally = InputTally()
        await propertyCheck(count: Self.count, input: BadInput.duration, BadInput.duration, BadInput.duration) { background, termination, task in
            tally.record()
            let range = AppConfiguration.acceptedRange
            do throws(MemoryPressureError) {
                let configuration = try AppConfiguration(
                    backgroundDeadline: background, terminationDeadline: termination, backgroundTaskTimeLimit: task
                )
                #expect([background, termination, task].allSatisfy(range.contains))
                #expect(configuration.backgroundTaskTimeLimit == task)
            } catch {
                let (setting, value) = [
                    ("backgroundDeadline", background), ("terminationDeadline", termination), ("backgroundTaskTimeLimit", task),
                ].first { !range.contains($0.1) }!
                #expect(error.code == .invalidConfiguration)
                #expect(error.description == "\(setting) of \(value) is out of range; expected \(range.lowerBound) to \(range.upperBound)")
                #expect(error.description.contains("\(setting) of \(value) is out of range"))
                #expect(error.description.contains("expected \(range.lowerBound) to \(range.upperBound)"))
            }
        }
        #expect(tally.total == Self.count)
    }

    @Test func stallTriggersAreAcceptedExactlyWithinTheKernelsLimits() async {
        let tally = InputTally()
        await propertyCheck(count: Self.count, input: BadInput.duration, BadInput.duration) { stall, window in
            tally.record()
            let valid = StallTrigger.windowRange.contains(window) && stall > .zero && stall <= window
            do throws(MemoryPressureError) {
                let trigger = try StallTrigger(.full, stall: stall, window: window)
                #expect(valid)
                // The text written to the kernel: kind, then both in whole microseconds.
                let fields = trigger.description.split(separator: " ")
                #expect(fields.count == 3 && fields[0] == "full")
                #expect(Int64(fields[2]).map { Duration.microseconds($0) <= window } == true)
            } catch {
                #expect(!valid)
                #expect(error.code == .invalidConfiguration)
                #expect(error.description.contains("\(stall) per \(window)"))
                #expect(error.description.contains("expected a window from 500 ms to 10 s"))
            }
        }
        #expect(tally.total == Self.count)
    }

    @Test func purgeFractionsAreAcceptedExactlyFromZeroToOne() async {
        let tally = InputTally()
        await propertyCheck(count: Self.count, input: BadInput.double) { fraction in
            tally.record()
            do throws(MemoryPressureError) {
                let action = try PurgeAction.trim(toFraction: fraction)
                #expect((0...1).contains(fraction))
                #expect(action.retainedFraction == fraction)
            } catch {
                #expect(!(0...1).contains(fraction))
                #expect(error.code == .invalidArgument)
                #expect(error.description.contains("fraction \(fraction) is out of range; expected 0 through 1"))
            }
        }
        #expect(tally.total == Self.count)
    }

    @Test func cacheLimitsAndCostsAreAcceptedExactlyWhenPositiveAndWithinACachesReach() async throws {
        let tally = InputTally()
        let owner = try AppIdentifier("limits")
        await propertyCheck(count: Self.count, input: BadInput.integer, BadInput.integer) { limit, cost in
            tally.record()
            do throws(MemoryPressureError) {
                let cache = try PurgeableCache<Int, Int>(name: "fuzz", owner: owner, category: .images, costLimit: limit, countLimit: limit)
                #expect((1...PurgeableCache<Int, Int>.maximumCount).contains(limit))
                do throws(MemoryPressureError) {
                    try cache.setValue(1, forKey: 1, cost: cost)
                    #expect(cost >= 0)
                    #expect(cache.totalCost <= limit)
                } catch {
                    #expect(cost < 0)
                    #expect(error.code == .invalidArgument)
                    #expect(error.description.contains("cost \(cost) is negative; expected 0 or more"))
                }
            } catch {
                #expect(error.code == .invalidConfiguration)
                if limit < 1 {
                    #expect(error.description.contains("limit \(limit) is not positive; expected 1 or more"))
                } else {
                    #expect(limit > PurgeableCache<Int, Int>.maximumCount)
                    #expect(error.description.contains("count limit \(limit) is larger than a cache holds; expected 1 through 16777214"))
                }
            }
        }
        #expect(tally.total == Self.count)
    }

    @Test(.exclusiveMemoryUse) func backingStoreDimensionsAreAcceptedExactlyWhenPositiveAndTheSizeFits() async throws {
        let tally = InputTally()
        let heap = try AppHeap(app: AppIdentifier("dimensions"))
        defer { heap.close() }
        await propertyCheck(count: Self.count, input: BadInput.integer, BadInput.integer, Gen.int(in: -2...16)) { width, height, depth in
            tally.record()
            let (row, rowOverflow) = width.multipliedReportingOverflow(by: depth)
            let (_, totalOverflow) = row.multipliedReportingOverflow(by: height)
            let valid = width > 0 && height > 0 && depth > 0 && !rowOverflow && !totalOverflow
            do throws(MemoryPressureError) {
                let store = try BackingStore(width: width, height: height, bytesPerPixel: depth, in: heap) { _ in }
                #expect(valid)
                #expect(store.capacity == width * height * depth)
            } catch {
                #expect(!valid)
                #expect(error.code == .invalidArgument)
                #expect(error.description.contains("\(width) x \(height) x \(depth)"))
                #expect(error.description.contains("expected each at least 1 and a total that fits in Int"))
            }
        }
        #expect(tally.total == Self.count)
    }
}
