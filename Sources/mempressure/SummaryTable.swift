import MemoryPressure
import MemoryPressureSimulation

/// The closing summary of a run: its key figures in a table, then its terminations.
struct SummaryTable {
    let report: SimulationReport

    /// The summary, each line escaped for the terminal: app names and errors come from the scenario.
    var text: String {
        var rows: [(String, String)] = []
        let budget = report.budgetBytes
        rows.append(("budget", "\(ByteCount(budget)) (warning \(ByteCount(report.warningThresholdBytes)), "
            + "critical \(ByteCount(report.criticalThresholdBytes)), target \(ByteCount(report.targetBytes)))"))
        rows.append(("duration", "\(decimal(report.durationSeconds, 1)) s, \(report.decisions) decisions (plan \(report.decisionDigest))"))
        rows.append(("peak footprint", "\(ByteCount(report.peakFootprintBytes)) (\(percent(Double(report.peakFootprintBytes) / Double(budget))) of budget)"))
        rows.append(("time over budget", "\(decimal(report.timeOverBudgetSeconds, 2)) s (\(percent(report.timeOverBudgetFraction)) of the run)"))
        rows.append(("max overshoot", "\(ByteCount(report.maxOvershootBytes))"))
        rows.append(("level changes", "warning \(report.levelChanges.warning), critical \(report.levelChanges.critical)"))
        let warnings = report.warningsDelivered
        rows.append(("memory warnings", "\(warnings.warnings) (delegates \(warnings.appDelegates), view controllers "
            + "\(warnings.viewControllers), observers \(warnings.observers))"))
        rows.append(("purges", "\(report.purges.count) (\(ByteCount(report.purges.bytes)))"))
        rows.append(("reaction", latencies(report.reactionMs)))
        rows.append(("purge latency", latencies(report.purgeLatencyMs)))
        let refused = report.refusedAllocations.values.reduce(0, +)
        rows.append(("refused allocations", "\(refused)" + (refused == 0 ? "" : " (\(ByteCount(report.refusedBytes)) gone without)")))
        let reasons = Dictionary(grouping: report.terminations, by: \.reason).map { "\($0.key) \($0.value.count)" }.sorted()
        rows.append(("terminations", "\(report.terminations.count)" + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")))
        rows.append(("relaunches", "\(report.relaunches) (restored \(report.restoredStates), lost \(report.lostStates))"))
        rows.append(("invariant violations", "\(report.invariantViolations.count)"))
        if !report.appErrors.isEmpty {
            rows.append(("app errors", "\(report.appErrors.count): \(report.appErrors.first ?? "")"))
        }
        let width = rows.map(\.0.count).max() ?? 0
        var lines = rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count + 2) + $0.1 }
        if !report.terminations.isEmpty {
            lines.append("")
            lines.append("  " + columns(["at", "app", "state", "footprint", "returned", "reason"]))
            for termination in report.terminations {
                lines.append("  " + columns([
                    decimal(termination.atSeconds, 2) + "s", termination.app, termination.state,
                    "\(ByteCount(termination.footprintBytes))", "\(ByteCount(termination.reclaimedBytes))", termination.reason,
                ]))
            }
        }
        return lines.map { $0.escapedForTerminal() }.joined(separator: "\n") + "\n"
    }

    /// `p50 …, p99 …, max … (count)`, or `none measured`.
    private func latencies(_ latencies: SimulationReport.Latencies) -> String {
        guard let p50 = latencies.p50, let p99 = latencies.p99, let max = latencies.max else { return "none measured" }
        return "p50 \(decimal(p50, 1)) ms, p99 \(decimal(p99, 1)) ms, max \(decimal(max, 1)) ms (\(latencies.count))"
    }

    /// The cells padded to their columns' widths, the last one as it is.
    private func columns(_ cells: [String]) -> String {
        zip(cells.dropLast(), [8, 14, 11, 11, 11]).map { cell, width in
            cell + String(repeating: " ", count: max(1, width - cell.count))
        }.joined() + (cells.last ?? "")
    }

    private func decimal(_ value: Double, _ places: Int) -> String {
        DecimalText.format(value, places: places)
    }

    private func percent(_ fraction: Double) -> String {
        DecimalText.format(fraction * 100, places: 1) + "%"
    }
}
