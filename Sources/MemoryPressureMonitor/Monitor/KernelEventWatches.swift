#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import MemoryPressureMeasurement
import SystemPackage

/// What a sampling thread waits on besides its tick and its control pipe: a PSI trigger, a watch on
/// the cgroup v2 `memory.events`, the cgroup v1 `memory.pressure_level` notifications, and a watch
/// for writes to the files that set the cgroup's limit. Each is
/// armed where the host's layout, the kernel and the process's rights allow; ``statuses`` says
/// which are, and why the others are not. The descriptors close when the last reference goes away.
final class KernelEventWatches {
    /// What the kernel reported through the descriptors `poll` found ready.
    struct Wake: Hashable {
        /// Something changed: take a full sample now.
        package var sample = false
        /// The highest `memory.pressure_level` notification, if any came.
        var pressureLevel: ControlGroupPressureLevelWatch.Level?
        /// Whether a cgroup event fired (`memory.events` or `memory.pressure_level`): the limits
        /// may have changed.
        var controlGroupEvent = false
        /// A file that sets the cgroup's limit was written (or is gone): the limits are to be read now.
        var limitWritten = false
        /// The limit files written.
        var limitFilesWritten: Set<FilePath> = []
        /// A source ended and was dropped: ``pollDescriptors`` has changed.
        var sourceEnded = false
    }

    private var stall: StallWatch?
    private var memoryEvents: ControlGroupEventsWatch?
    private var pressureLevel: ControlGroupPressureLevelWatch?
    private var limitFiles: ControlGroupLimitWatch?
    /// Each source, in ``KernelEventSourceStatus/Kind`` order, as armed.
    package let statuses: [KernelEventSourceStatus]

    /// Arms `trigger` (none when nil) and the watches on `targets`.
    package init(trigger: StallTrigger?, targets: ControlGroupEventTargets) {
        var statuses: [KernelEventSourceStatus] = []
        if let trigger {
            let (watch, status) = StallWatch.arm(trigger)
            stall = watch
            statuses.append(status)
        } else {
            statuses.append(KernelEventSourceStatus(.pressureStallTrigger, .off, detail: "not configured"))
        }

        let (eventsTarget, levelTarget, limitTarget) = targets.resolved()
        switch eventsTarget {
        case .paths(let paths):
            statuses.append(KernelEventSourceStatus(.memoryEvents, .refused, detail: "one memory.events file expected, not \(paths.count)"))
        case .path(let path):
            do {
                memoryEvents = try ControlGroupEventsWatch(watching: path)
                statuses.append(KernelEventSourceStatus(.memoryEvents, .armed, path: path, detail: "high, max, oom, oom_kill"))
            } catch {
                statuses.append(KernelEventSourceStatus(.memoryEvents, .refused, path: path, detail: error.description))
            }
        case .off(let reason):
            statuses.append(KernelEventSourceStatus(.memoryEvents, .off, detail: reason))
        }
        switch levelTarget {
        case .paths(let paths):
            statuses.append(KernelEventSourceStatus(.pressureLevel, .refused, detail: "one cgroup directory expected, not \(paths.count)"))
        case .path(let directory):
            let path = directory.appending("memory.pressure_level")
            do {
                pressureLevel = try ControlGroupPressureLevelWatch(directory: directory)
                statuses.append(KernelEventSourceStatus(.pressureLevel, .armed, path: path, detail: ControlGroupPressureLevelWatch.levelNames))
            } catch {
                statuses.append(KernelEventSourceStatus(.pressureLevel, .refused, path: path, detail: error.description))
            }
        case .off(let reason):
            statuses.append(KernelEventSourceStatus(.pressureLevel, .off, detail: reason))
        }
        let limitPaths: [FilePath]
        switch limitTarget {
        case .path(let path): limitPaths = [path]
        case .paths(let paths): limitPaths = paths
        case .off(let reason):
            limitPaths = []
            statuses.append(KernelEventSourceStatus(.limitFiles, .off, detail: reason))
        }
        if let first = limitPaths.first {
            let detail = limitPaths.map(\.string).joined(separator: ", ")
            do {
                limitFiles = try ControlGroupLimitWatch(watching: limitPaths)
                statuses.append(KernelEventSourceStatus(.limitFiles, .armed, path: first, detail: detail))
            } catch {
                statuses.append(KernelEventSourceStatus(.limitFiles, .refused, path: error.path, detail: "\(error) (watching \(detail))"))
            }
        }
        self.statuses = statuses
    }

    /// Logs each source armed (at `debug`) or refused (at `notice`, with what the monitor does
    /// without it) once; one that is off has nothing to report.
    package func log(to logger: Logger) {
        for status in statuses {
            switch status.state {
            case .armed: logger.debug("\(status)")
            case .off: break
            case .refused: logger.notice("\(status); the monitor goes on without it")
            }
        }
    }

    /// The descriptors to wait on, each with the events that mean the kernel spoke.
    var pollDescriptors: [pollfd] {
        var descriptors: [pollfd] = []
        if let stall { descriptors.append(pollfd(fd: stall.descriptor, events: Int16(POLLPRI), revents: 0)) }
        if let memoryEvents { descriptors.append(pollfd(fd: memoryEvents.descriptor, events: Int16(POLLIN), revents: 0)) }
        for (_, descriptor) in pressureLevel?.descriptors ?? [] {
            descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        }
        if let limitFiles { descriptors.append(pollfd(fd: limitFiles.descriptor, events: Int16(POLLIN), revents: 0)) }
        return descriptors
    }

    /// Reads what `poll` reported on `polled` (descriptors from ``pollDescriptors``). A source whose
    /// descriptor reports an error, or whose file is gone, has ended: it is logged and dropped, and
    /// the monitor goes on without it.
    package func take(_ polled: some Sequence<pollfd>, logger: Logger) -> Wake {
        var wake = Wake()
        let failed = Int16(POLLERR | POLLHUP | POLLNVAL)
        var readyLevels: [Int32] = []
        for entry in polled where entry.revents != 0 {
            if let watch = stall, entry.fd == watch.descriptor {
                if entry.revents & failed != 0 {
                    logger.notice("memory pressure trigger on \(watch.path) ended; the monitor goes on without it")
                    stall = nil
                    wake.sourceEnded = true
                } else {
                    wake.sample = true
                }
            } else if let watch = memoryEvents, entry.fd == watch.descriptor {
                if entry.revents & failed != 0 || !watch.drain() {
                    logger.notice("memory.events watch on \(watch.path) ended; the monitor goes on without it")
                    memoryEvents = nil
                    wake.sourceEnded = true
                }
                wake.sample = true
                wake.controlGroupEvent = true
            } else if let watch = limitFiles, entry.fd == watch.descriptor {
                let (written, alive) = watch.drain()
                wake.limitFilesWritten.formUnion(written)
                if entry.revents & failed != 0 || !alive {
                    logger.notice("the watch on the cgroup's limit files (\(watch.paths.map(\.string).joined(separator: ", "))) ended; the monitor goes on without it")
                    limitFiles = nil
                    wake.sourceEnded = true
                }
                // A write, or a file gone (its cgroup removed, the process moved): read the limits now.
                wake.limitWritten = true
            } else if let watch = pressureLevel, watch.descriptors.contains(where: { $0.descriptor == entry.fd }) {
                if entry.revents & failed != 0 {
                    logger.notice("memory.pressure_level notifications in \(watch.directory) ended; the monitor goes on without them")
                    pressureLevel = nil
                    wake.sourceEnded = true
                    wake.sample = true
                } else {
                    readyLevels.append(entry.fd)
                }
            }
        }
        if let watch = pressureLevel, let level = watch.takeLevel(ready: readyLevels) {
            wake.pressureLevel = level
            wake.sample = true
            wake.controlGroupEvent = true
        }
        return wake
    }
}
