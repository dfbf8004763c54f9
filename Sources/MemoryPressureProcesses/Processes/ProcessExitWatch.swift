#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Synchronization
import MemoryPressureRuntime

/// Notices, at once, the process apps' children that end by themselves: one thread for all of
/// them, waiting in `poll` on their pidfds (readable once a child has exited), so threads stay
/// bounded however many children run. The thread runs while children are watched and ends with
/// the last one; a child on a kernel without pidfds is looked at every 100 ms instead.
///
/// Each child is reaped here once it has ended and its handler called once, outside the lock.
final class ProcessExitWatch: Sendable {
    private struct Watched: Sendable {
        let child: ChildProcess
        let ended: @Sendable (ChildTermination) -> Void
    }

    private struct State {
        var watched: [ObjectIdentifier: Watched] = [:]
        var threadRuns = false
    }

    private let state = LibraryLock(State())
    private let wake: WakePipe?
    private let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
        do {
            wake = try WakePipe()
        } catch {
            logger.warning("child exits are noticed every 100 ms: no pipe to wake their watch (\(error))")
            wake = nil
        }
    }

    /// Watches `child` until it ends, then calls `ended` with its termination, on the watch's
    /// thread; unless ``forget(_:)`` comes first.
    package func watch(_ child: ChildProcess, ended: @escaping @Sendable (ChildTermination) -> Void) {
        let startsThread = state.withLock { state in
            state.watched[ObjectIdentifier(child)] = Watched(child: child, ended: ended)
            defer { state.threadRuns = true }
            return !state.threadRuns
        }
        if startsThread {
            do {
                let thread = try PosixThread.start(named: "mp-child-exits") { [self] in run() }
                pthread_detach(thread)
            } catch {
                state.withLock { $0.threadRuns = false }
                logger.error("child exits cannot be watched: the watch's thread could not start (\(error)); a child that ends by itself is noticed at its next kill")
            }
        } else {
            wake?.wake()
        }
    }

    /// Stops watching `child`: the system ends it itself.
    func forget(_ child: ChildProcess) {
        state.withLock { state in
            state.watched.removeValue(forKey: ObjectIdentifier(child))
            state.watched.shrinkIfSparse()
        }
        wake?.wake()
    }

    private func run() {
        var descriptors: [pollfd] = []
        var children: [Watched?] = []
        while true {
            let watching = state.withLock { state -> Bool in
                guard !state.watched.isEmpty else {
                    state.threadRuns = false
                    return false
                }
                descriptors.removeAll(keepingCapacity: true)
                children.removeAll(keepingCapacity: true)
                if let wake {
                    descriptors.append(pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0))
                    children.append(nil)
                }
                for watched in state.watched.values {
                    descriptors.append(pollfd(fd: watched.child.exitDescriptor ?? -1, events: Int16(POLLIN), revents: 0))
                    children.append(watched)
                }
                return true
            }
            guard watching else { return }
            let pollsWithoutPidfd = wake == nil || descriptors.contains { $0.fd < 0 }
            _ = poll(&descriptors, nfds_t(descriptors.count), pollsWithoutPidfd ? 100 : -1)
            wake?.drain()
            for (descriptor, watched) in zip(descriptors, children) {
                guard let watched, descriptor.revents != 0 || descriptor.fd < 0 else { continue }
                guard let termination = watched.child.pollExit() else { continue }
                let stillWatched = state.withLock { state in
                    state.watched.removeValue(forKey: ObjectIdentifier(watched.child)) != nil
                }
                if stillWatched { watched.ended(termination) }
            }
        }
    }
}
