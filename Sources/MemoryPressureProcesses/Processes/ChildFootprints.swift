import Synchronization
import MemoryPressureRuntime
import MemoryPressureMeasurement
import MemoryPressureMonitor

/// The footprints of the process apps' children, by app, and their sum, kept as the children move.
///
/// A running child is read on every sample (about 20 µs through its cgroup's files). A frozen one
/// cannot change its memory: it is read once as it is frozen, and that figure counts until it is
/// thawed. The sum of every child's last figure is kept as each reading changes it and as children
/// come and go, so a sample reads only the running children and sums none, and the ladder, after a
/// termination, counts the others as last read (``/MemoryPressureMonitor/ContributionReading``).
///
/// Its lock guards the table only, and calls nothing; it is taken last, inside ``ProcessApps``'s
/// (the lock order there: the process apps' table, then this one). Readings are made outside it.
package final class ChildFootprints: Sendable {
    /// One child: how to read it, and its figure as last read.
    private final class Child: Sendable {
        /// The child's footprint now; nil once it has ended.
        let read: @Sendable () -> Int?
        /// The figure last read, counted in ``ChildFootprints/total``; ``dropped`` once the child no
        /// longer counts, after which no reading changes it.
        let kept = Atomic<Int>(0)
        static let dropped = -1

        init(read: @escaping @Sendable () -> Int?) {
            self.read = read
        }
    }

    private struct Table {
        var children: [AppIdentifier: Child] = [:]
        /// The children not frozen, as a list a sample takes with a retain (no copy, no allocation)
        /// and reads outside the lock; made again only as a child starts, freezes, thaws or ends.
        private(set) var running: [Child] = []
        private var frozen: Set<ObjectIdentifier> = []

        func isFrozen(_ child: Child) -> Bool { frozen.contains(ObjectIdentifier(child)) }

        /// Marks `child` frozen or running.
        mutating func setFrozen(_ isFrozen: Bool, _ child: Child) {
            let changed = isFrozen ? frozen.insert(ObjectIdentifier(child)).inserted : frozen.remove(ObjectIdentifier(child)) != nil
            if changed { listRunning() }
        }

        /// Sets (or, with nil, removes) `identifier`'s child; returns the one it replaces.
        mutating func set(_ child: Child?, for identifier: AppIdentifier) -> Child? {
            let previous = children[identifier]
            children[identifier] = child
            if let previous { frozen.remove(ObjectIdentifier(previous)) }
            if previous != nil || child != nil {
                children.shrinkIfSparse()
                listRunning()
            }
            return previous
        }

        private mutating func listRunning() {
            running = children.values.filter { !isFrozen($0) }
        }
    }

    private let table = LibraryLock(Table())
    /// The sum of every child's ``Child/kept`` figure.
    private let total = Atomic<Int>(0)
    /// What a child's bytes in swap cost in memory, as the system last read its swap devices:
    /// counted in the children's figures.
    package let swapCost = SwapCost()

    package init() {}

    /// Counts `identifier`'s child, running, read by `read` (nil once it has ended), in place of any
    /// child it had; it is first read by the next sample or query.
    package func track(_ identifier: AppIdentifier, read: @escaping @Sendable () -> Int?) {
        let replaced = table.withLock { $0.set(Child(read: read), for: identifier) }
        if let replaced { drop(replaced) }
    }

    /// `identifier`'s child no longer counts (it ended, or its app was terminated).
    package func remove(_ identifier: AppIdentifier) {
        guard let removed = table.withLock({ $0.set(nil, for: identifier) }) else { return }
        drop(removed)
    }

    /// `identifier`'s child is frozen: read now, and counted at that figure, unread, until it is
    /// thawed.
    package func freeze(_ identifier: AppIdentifier) {
        guard let child = table.withLock({ $0.children[identifier] }) else { return }
        _ = reading(child)
        table.withLock { table in
            // Unless it was replaced or removed meanwhile.
            guard table.children[identifier] === child else { return }
            table.setFrozen(true, child)
        }
    }

    /// Reads `identifier`'s child again now, frozen or not, and counts that figure: for what
    /// changes a frozen child's memory (its pages paged out to compressed swap).
    package func readAgain(_ identifier: AppIdentifier) {
        guard let child = table.withLock({ $0.children[identifier] }) else { return }
        _ = reading(child)
    }

    /// `identifier`'s child is thawed: read again on every sample.
    package func thaw(_ identifier: AppIdentifier) {
        table.withLock { table in
            guard let child = table.children[identifier] else { return }
            table.setFrozen(false, child)
        }
    }

    /// `identifier`'s child's footprint: a running child's now (or at its last reading once it has
    /// ended: what it held), a frozen child's as read when it was frozen; nil when it has none.
    package func bytes(of identifier: AppIdentifier) -> Int? {
        guard let (child, isFrozen) = table.withLock({ table in table.children[identifier].map { ($0, table.isFrozen($0)) } }) else {
            return nil
        }
        let now = isFrozen ? nil : reading(child)
        return now ?? max(0, child.kept.load(ordering: .relaxed))
    }

    /// Every child's footprint, with what `reading` says read again and the others as last read;
    /// nil when there is no child.
    package func totalBytes(reading: ContributionReading) -> Int? {
        let children: [Child]? = table.withLock { table in
            guard !table.children.isEmpty else { return nil }
            switch reading {
            case .everything: return Array(table.children.values)
            case .changing: return table.running
            case .nothing: return []
            }
        }
        guard let children else { return nil }
        for child in children {
            _ = self.reading(child)
        }
        return max(0, total.load(ordering: .relaxed))
    }

    /// Reads `child` and keeps the figure, unless it was dropped meanwhile; nil once it has ended
    /// (its last figure is kept).
    private func reading(_ child: Child) -> Int? {
        guard let bytes = child.read() else { return nil }
        var kept = child.kept.load(ordering: .relaxed)
        while kept != Child.dropped {
            let (exchanged, original) = child.kept.compareExchange(expected: kept, desired: bytes, ordering: .relaxed)
            if exchanged {
                total.wrappingAdd(bytes - kept, ordering: .relaxed)
                break
            }
            kept = original
        }
        return bytes
    }

    /// Takes `child`'s figure out of the sum, for good.
    private func drop(_ child: Child) {
        let kept = child.kept.exchange(Child.dropped, ordering: .relaxed)
        if kept != Child.dropped { total.wrappingSubtract(kept, ordering: .relaxed) }
    }
}
