import MemoryPressure
import MemoryPressureSimulation

extension MemorySample {
    /// One line of `stats --watch`: time, footprint against the budget, level, and the other figures.
    func watchLine(since start: ContinuousClock.Instant, budget: MemoryBudget, level: PressureLevel) -> String {
        func bytes(_ count: Int?) -> String { count.map { ByteCount($0).description } ?? "unknown" }
        let elapsed = time - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var fields = [DecimalText.format(seconds, places: 2) + "s"]
        if let footprintBytes {
            let percent = Double(footprintBytes) / Double(budget.totalBytes) * 100
            let judged = controlGroupExcessBytes > 0 ? ", cgroup working set" : ""
            fields.append("footprint \(ByteCount(footprintBytes)) (\(DecimalText.format(percent, places: 1))% of budget\(judged))")
        } else {
            fields.append("footprint unknown")
        }
        fields.append("level \(level)")
        if let jemalloc {
            fields.append("jemalloc allocated \(bytes(jemalloc.allocated)) active \(bytes(jemalloc.active)) "
                + "resident \(bytes(jemalloc.resident)) metadata \(bytes(jemalloc.metadata)) retained \(bytes(jemalloc.retained))")
        }
        fields.append("cgroup current \(bytes(cgroupCurrentBytes))")
        if let pressureStall {
            fields.append("psi some \(DecimalText.format(pressureStall.some.average10, places: 2))% full \(DecimalText.format(pressureStall.full.average10, places: 2))%")
        } else {
            fields.append("psi unknown")
        }
        return fields.joined(separator: "  ")
    }
}
