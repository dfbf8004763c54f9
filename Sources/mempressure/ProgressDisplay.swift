import MemoryPressure
import MemoryPressureSimulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Shows a running simulation: on a terminal, one live line redrawn several times a second (a bar
/// of the footprint against the budget, the level, the foreground app and the counts); otherwise a
/// plain line every second.
struct ProgressDisplay: Sendable {
    let live: Bool

    /// Runs `simulation`, showing its progress until it ends, and returns its result.
    func follow(_ simulation: Simulation) async throws -> SimulationResult {
        try await withThrowingTaskGroup(of: SimulationResult?.self) { group in
            group.addTask { try await simulation.run() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: live ? .milliseconds(125) : .seconds(1))
                    if let progress = simulation.progress { show(progress) }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                guard let result = next else { continue }
                if live {
                    var output = StandardOutput()
                    output.write("\r\u{1B}[2K")
                }
                return result
            }
            throw CancellationError()
        }
    }

    private func show(_ progress: SimulationProgress) {
        if live {
            var output = StandardOutput()
            output.write("\r\u{1B}[2K" + liveLine(progress))
        } else {
            var output = StandardOutput()
            output.write(plainLine(progress) + "\n")
        }
    }

    /// The live line: as many of its parts as fit the terminal's width, each coloured by level
    /// where it shows the level.
    private func liveLine(_ progress: SimulationProgress) -> String {
        let width = 24
        let budgetColumn = width * 4 / 5
        let filled = min(width, Int(Double(progress.footprintBytes) / Double(progress.budgetBytes) * Double(budgetColumn)))
        var bar = ""
        for column in 0 ..< width {
            bar += column == budgetColumn ? "|" : (column < filled ? "█" : "░")
        }
        let color = switch progress.level {
        case .normal: "\u{1B}[32m"
        case .warning: "\u{1B}[33m"
        case .critical: "\u{1B}[31m"
        }
        let parts: [(text: String, colored: Bool)] = [
            ("\(seconds(progress.elapsed))/\(seconds(progress.duration))", false),
            (bar, true),
            ("\(ByteCount(progress.footprintBytes))/\(ByteCount(progress.budgetBytes))", false),
            (progress.level.description, true),
            ("fg \(progress.foreground?.rawValue.escapedForTerminal() ?? "home")", false),
            ("warn \(progress.warnings) purge \(progress.purges) term \(progress.terminations) relaunch \(progress.relaunches)", false),
        ]
        var line = ""
        var visible = 0
        for part in parts {
            let length = part.text.count + (line.isEmpty ? 0 : 1)
            guard visible + length < Self.terminalColumns else { break }
            line += (line.isEmpty ? "" : " ") + (part.colored ? color + part.text + "\u{1B}[0m" : part.text)
            visible += length
        }
        return line
    }

    /// The terminal's width in columns, or 80 when it cannot be told.
    private static var terminalColumns: Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    private func plainLine(_ progress: SimulationProgress) -> String {
        let percent = Double(progress.footprintBytes) / Double(progress.budgetBytes) * 100
        return "\(seconds(progress.elapsed)) footprint \(ByteCount(progress.footprintBytes)) "
            + "(\(DecimalText.format(percent, places: 1))% of budget) level \(progress.level) "
            + "foreground \(progress.foreground?.rawValue.escapedForTerminal() ?? "none") " + counts(progress)
    }

    private func counts(_ progress: SimulationProgress) -> String {
        "warnings \(progress.warnings) purges \(progress.purges) terminations \(progress.terminations) relaunches \(progress.relaunches)"
    }

    private func seconds(_ duration: Duration) -> String {
        DecimalText.format(Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18, places: 1) + "s"
    }
}
