import MemoryPressure
import MemoryPressureSimulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mempressure run --processes`: each scenario app a child process, this tool re-executed as
/// `mempressure app-process`, registered with `MemorySystem.register(_:process:…)` on the client
/// channel.
enum RunProcesses {
    /// What `--processes` changes, for its help.
    static let differences = """
        Each app is this tool re-executed (`mempressure app-process`, linking MemoryPressureClient), registered as a \
        process app on the client channel: its own pages (mapped and touched), frozen when suspended, killed when \
        terminated. Same scenario, seed, plan (digest) and invariants. What differs: the driver cannot reach into a \
        child, so activity is the child's own (it grows its cache and data at its profile's rates on its own 50 ms \
        clock while active, between didBecomeActive and willResignActive); spikes are planned and counted but \
        allocate nothing; a child cannot hold a background task, so playback and fetches end with didEnterBackground \
        and the app suspends at once (a launch into the background loads its fetch bytes then); didEnterBackground \
        frees what the system would purge in process (images and media emptied, rebuildable objects to 10%, backing \
        stores, playback) and a memory warning keeps the profile's fraction of the cache; each child saves its \
        launch's state through its client on entering the background, and a relaunch must restore exactly the \
        state saved last, as in process; warnings reach one delegate per app and no view controllers or \
        observers in this process; no allocation is ever refused (a child's pages are not in an app heap); the \
        footprint is this process's resident bytes plus the children's. The report adds each child's peak \
        footprint, pids and freezer, and how each terminated child ended.
        """

    /// The simulation's process options: this executable, as `app-process`, for each app.
    static func options() throws -> SimulationOptions.ProcessApps {
        let executable = try currentExecutable()
        return SimulationOptions.ProcessApps { app, index, seed in
            ProcessSpecification(executable: executable, arguments: [
                "app-process", "--profile", AppProcessProfile.argument(for: app.profile), "--app", app.name.rawValue,
                "--seed", "\(seed)", "--index", "\(index)",
            ])
        }
    }

    /// The path of this process's executable (`/proc/self/exe`).
    static func currentExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw BadInput("--processes: cannot read /proc/self/exe (errno \(errno))") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The summary's lines for the child processes: each app's peak, pids and freezer, and how
    /// each terminated child ended.
    static func summary(of report: SimulationReport) -> String {
        var lines = ["", "  child processes (peak footprint, launches, freezer):"]
        for process in report.processes ?? [] {
            let frozen = process.samples > 0 ? ", frozen in \(process.frozenSamples) of \(process.samples) samples" : ""
            lines.append("    \(process.app): peak \(ByteCount(process.peakFootprintBytes)), \(process.pids.count) launches"
                + " (pids \(process.pids.map(String.init).joined(separator: " ")))"
                + ", frozen by \(process.freezeMechanism ?? "-")\(frozen)")
        }
        let killed = report.terminations.filter { $0.processExit != nil }
        if !killed.isEmpty {
            lines.append("  terminated processes:")
            for termination in killed {
                lines.append("    \(termination.app) (\(termination.state), \(termination.reason)): \(termination.processExit ?? "")")
            }
        }
        if let exits = report.shutDownExits, !exits.isEmpty {
            lines.append("  at shutdown:")
            for exit in exits { lines.append("    \(exit.app) (\(exit.state)): \(exit.processExit)") }
        }
        return lines.map { $0.escapedForTerminal() }.joined(separator: "\n") + "\n"
    }
}
