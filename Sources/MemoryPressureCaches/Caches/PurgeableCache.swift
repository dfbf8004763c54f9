import Synchronization
import MemoryPressureRuntime

/// A thread-safe cache with cost and count limits, true least-recently-used eviction, and a
/// category that decides what it gives back when its app enters the background, on a warning and at
/// critical pressure.
///
/// Every operation is synchronous and O(1) (trims are O(entries removed or skipped)). Inserting
/// beyond a limit evicts least recently used entries until the limits hold again, the new entry
/// included if it alone exceeds the cost limit. Purges and trims (but not limit evictions or
/// explicit removals) skip values that are ``DiscardableContent`` with an access open: they ask each
/// such value to discard its content and remove it only if it did.
///
/// The optional eviction handler is called, outside the cache's lock, for every entry the cache
/// drops on its own: limit evictions, trims and purges; not for ``removeValue(forKey:)``,
/// ``removeAll()`` or a replaced value. Values are released outside the lock too, so their
/// deinitializers may use the cache. The keys' `hash(into:)` and `==` are the one code of the
/// caller's that runs under the lock: they must not use the cache or the memory system.
public final class PurgeableCache<Key: Hashable & Sendable, Value: Sendable>: Purgeable, QuietlyPurgeable {
    /// Called for each entry the cache drops on its own.
    public typealias EvictionHandler = @Sendable (_ key: Key, _ value: Value) -> Void

    /// The cache's name, as purge reports and logs show it.
    public let name: String
    /// The app whose memory the cache holds, whose state its purges follow; ``/MemoryPressureRuntime/AppIdentifier/service``
    /// for a service's own cache, purged per its category at every raised level.
    public let owner: AppIdentifier
    /// What the cache holds, which decides what each purge event does to it.
    public let category: CacheCategory
    /// Whether the values' bytes live in the owner's heap or elsewhere (counted by declared cost).
    public let payloadLocation: PayloadLocation
    // The limits are kept as plain numbers, -1 (0 for the fraction) meaning none: an optional
    // takes a word of padding more each, and a registered cache's size counts (the Footprint suite).
    /// The cost limit given, or -1 for none.
    private let givenCostLimit: Int
    /// The budget fraction given, or 0 for none.
    private let givenBudgetFraction: Double
    /// The cost limit in force, or -1 for none: the given one, lowered to the budget fraction's
    /// share of the budget in force once the cache is registered.
    @usableFromInline let costLimitNow: Atomic<Int>
    /// The count limit given, or -1 for none (then ``maximumCount`` holds).
    @usableFromInline let givenCountLimit: Int

    /// The most total cost kept, or nil for no limit.
    package var costLimit: Int? { givenCostLimit < 0 ? nil : givenCostLimit }
    /// The most entries kept, or nil for no limit other than ``maximumCount``.
    package var countLimit: Int? { givenCountLimit < 0 ? nil : givenCountLimit }
    /// The most total cost kept, as a fraction of the budget of the memory system the cache is
    /// registered with, or nil for none. It follows the budget as the cgroup's limit moves it, and
    /// the cache is trimmed at once when it shrinks.
    public var budgetFraction: Double? { givenBudgetFraction == 0 ? nil : givenBudgetFraction }

    /// The most entries any cache keeps (16,777,214): a cache without a count limit evicts its least
    /// recently used entries beyond it, as if that were its limit.
    public static var maximumCount: Int { LRUList<Key, Value>.maximumCount }

    @usableFromInline package let entries: LibraryLock<LRUList<Key, Value>>
    @usableFromInline let evictionHandler: EvictionHandler?

    /// Makes an empty cache. Limits, when given, must be at least 1, and a count limit at most
    /// ``maximumCount``.
    ///
    /// Register the cache with `MemorySystem.register(_:)` so the system purges it; the system
    /// holds it weakly, so it stays registered for as long as its owner keeps it.
    ///
    /// - Parameters:
    ///   - name: The name purge reports and logs give.
    ///   - owner: The app whose memory the cache holds; ``/MemoryPressureRuntime/AppIdentifier/service`` (the default)
    ///     for a service's own cache.
    ///   - category: What the cache holds, which decides what each purge event does to it.
    ///   - costLimit: The most total cost kept, or nil (the default) for no limit.
    ///   - budgetFraction: The most total cost kept as a fraction of the system's budget, above 0
    ///     and at most 1 (`0.5` for half), or nil (the default) for none. With `costLimit` too,
    ///     the lower of the two holds. Costs should then be bytes.
    ///   - countLimit: The most entries kept, or nil (the default) for no limit but
    ///     ``maximumCount``.
    ///   - payloadLocation: Where the values keep their bytes: ``PayloadLocation/elsewhere`` (the
    ///     default), counted to the owner by declared cost, or ``PayloadLocation/appHeap``, already
    ///     counted in the owner's heap.
    ///   - evictionHandler: Called, outside the lock, for each entry the cache drops on its own.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` when
    ///   a limit is less than 1 or the count limit is larger than ``maximumCount``.
    public init(
        name: String,
        owner: AppIdentifier = .service,
        category: CacheCategory,
        costLimit: Int? = nil,
        budgetFraction: Double? = nil,
        countLimit: Int? = nil,
        payloadLocation: PayloadLocation = .elsewhere,
        onEviction evictionHandler: EvictionHandler? = nil
    ) throws(MemoryPressureError) {
        if let costLimit, costLimit < 1 { throw .cacheLimitNotPositive("cost", value: costLimit) }
        if let budgetFraction, !(budgetFraction > 0 && budgetFraction <= 1) {
            throw .cacheBudgetFractionOutOfRange(budgetFraction)
        }
        if let countLimit, countLimit < 1 { throw .cacheLimitNotPositive("count", value: countLimit) }
        if let countLimit, countLimit > Self.maximumCount {
            throw .cacheCountLimitTooLarge(countLimit, maximum: Self.maximumCount)
        }
        self.name = name
        self.owner = owner
        self.category = category
        self.payloadLocation = payloadLocation
        givenCostLimit = costLimit ?? -1
        givenBudgetFraction = budgetFraction ?? 0
        costLimitNow = Atomic(costLimit ?? -1)
        givenCountLimit = countLimit ?? -1
        self.evictionHandler = evictionHandler
        entries = LibraryLock(LRUList(reservingCapacity: min(countLimit ?? 0, 1 << 16)))
    }

    /// The value stored for `key`, which becomes the most recently used.
    ///
    /// - Parameter key: The key.
    /// - Returns: The value, or nil if there is none.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        entries.withLock { $0.value(forKey: key) }
    }

    /// Stores `value` for `key` as the most recently used entry, then evicts least recently used
    /// entries until the limits hold (the new entry too, if its cost alone exceeds the cost limit).
    ///
    /// - Parameters:
    ///   - value: The value; it replaces any value stored for `key`.
    ///   - key: The key.
    ///   - cost: The entry's declared cost, usually its bytes; 0 by default.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` when
    ///   `cost` is negative; the cache is unchanged.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) throws(MemoryPressureError) {
        guard cost >= 0 else { throw .negativeCost(cost) }
        // The replaced value is dropped here, after the lock is released.
        let (_, evicted) = entries.withLock { entries in
            let replaced = entries.insert(value, forKey: key, cost: cost)
            var evicted = Evicted()
            while exceedsLimits(count: entries.count, totalCost: entries.totalCost),
                  let oldest = entries.removeOldest() {
                evicted.append(oldest)
            }
            return (replaced, evicted)
        }
        evicted.report(to: evictionHandler)
    }

    /// Removes the value for `key`, without calling the eviction handler.
    ///
    /// - Parameter key: The key.
    /// - Returns: The value removed, or nil if there was none.
    @discardableResult
    @inlinable
    public func removeValue(forKey key: Key) -> Value? {
        entries.withLock { $0.remove(forKey: key) }?.value
    }

    /// Removes every entry, accessed or not, without calling the eviction handler.
    @inlinable
    public func removeAll() {
        // The entries are released here, after the lock is released.
        let removed = entries.withLock { entries in
            var removed = LRUList<Key, Value>()
            swap(&removed, &entries)
            return removed
        }
        _ = consume removed
    }

    /// Removes least recently used entries until the total cost is at most `cost`.
    @discardableResult
    package func trim(toCost cost: Int) -> CachePurgeResult {
        trim { count, _ in (count, Int128(cost)) }
    }

    /// Removes least recently used entries until at most `fraction` of the current total cost and
    /// of the current count remain (rounded down). Discardable content with an access open is kept.
    ///
    /// - Parameter fraction: The fraction to keep, from 0 through 1.
    /// - Returns: What was removed.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` when
    ///   `fraction` is outside 0 through 1 (or not a number).
    @discardableResult
    public func trim(toFraction fraction: Double) throws(MemoryPressureError) -> CachePurgeResult {
        guard (0...1).contains(fraction) else { throw .fractionOutOfRange(fraction) }
        return trim(keeping: fraction)
    }

    /// Applies the category's action for `event`: keep, empty, or trim to a fraction. Discardable
    /// content with an access open is kept.
    ///
    /// - Parameter event: What makes the system purge.
    /// - Returns: What was removed.
    @discardableResult
    public func purge(for event: PurgeEvent) -> CachePurgeResult {
        trim(keeping: category.action(for: event).retainedFraction)
    }

    /// Applies the category's action for `event` without running any of the owner's code: no
    /// eviction handler is called, and discardable content is kept. For a suspended owner, which
    /// runs no code.
    func purgeQuietly(for event: PurgeEvent) -> CachePurgeResult {
        trim(keeping: category.action(for: event).retainedFraction, quietly: true)
    }

    /// The sum of the entries' declared costs; `Int.max` when the sum is larger.
    public var totalCost: Int { Int(clamping: entries.withLock { $0.totalCost }) }

    /// The number of entries.
    public var count: Int { entries.withLock { $0.count } }

    /// The keys from the least to the most recently used: the order of eviction.
    package var keysInEvictionOrder: [Key] { entries.withLock { $0.keysFromOldest } }

    /// The cost limit in force: the lower of `costLimit` and the budget fraction's share of the
    /// budget in force; nil when neither limits the cost (a budget fraction counts from
    /// registration with a memory system).
    @inlinable
    public var costLimitInForce: Int? {
        let limit = costLimitNow.load(ordering: .relaxed)
        return limit < 0 ? nil : limit
    }

    @inlinable
    func exceedsLimits(count: Int, totalCost: Int128) -> Bool {
        guard count <= (givenCountLimit < 0 ? Self.maximumCount : givenCountLimit) else { return true }
        let limit = costLimitNow.load(ordering: .relaxed)
        return limit >= 0 && totalCost > Int128(limit)
    }

    private func trim(keeping fraction: Double, quietly: Bool = false) -> CachePurgeResult {
        guard fraction < 1 else { return CachePurgeResult() }
        return trim(quietly: quietly) { count, totalCost in (Int(Double(count) * fraction), Int128(Double(totalCost) * fraction)) }
    }

    /// Removes purgeable entries, least recently used first, until the count and total cost are at
    /// most the targets computed from the current ones.
    ///
    /// No code of the values runs under the lock. Entries that are not discardable content are
    /// removed under it; discardable content the trim reaches is asked to discard itself after the
    /// lock is released, and what did is removed under it again, if still stored. Content that kept
    /// its data (an access is open) is passed over, and the trim goes on to newer entries, as it
    /// would have in one pass. A quiet trim asks nothing and keeps all discardable content.
    private func trim(
        quietly: Bool = false,
        to targets: (_ count: Int, _ totalCost: Int128) -> (count: Int, totalCost: Int128)
    ) -> CachePurgeResult {
        var evicted = Evicted()
        let now = entries.withLock { (count: $0.count, totalCost: $0.totalCost) }
        let target = targets(now.count, now.totalCost)
        /// Discardable content that kept its data when asked: passed over from then on.
        var refused: Set<ObjectIdentifier> = []
        while true {
            let passed = refused
            let (reached, removed) = entries.withLock { entries in
                // Content to ask counts as gone, so the walk goes no further than needed if it goes.
                var reached: [(key: Key, content: any DiscardableContent)] = []
                var removed = Evicted()
                var asked = (count: 0, cost: Int128(0))
                entries.trim(
                    while: { count, totalCost in count - asked.count > target.count || totalCost - asked.cost > target.totalCost },
                    removingIf: { key, value, cost in
                        guard let content = value as? any DiscardableContent else { return true }
                        if !quietly, !passed.contains(ObjectIdentifier(content)) {
                            reached.append((key, content))
                            asked.count += 1
                            asked.cost += Int128(cost)
                        }
                        return false
                    }
                ) { removed.append($0) }
                return (reached, removed)
            }
            evicted.append(contentsOf: removed)
            guard !reached.isEmpty else { break }
            // Outside the lock: the values' own code.
            var discarded: [(key: Key, content: ObjectIdentifier)] = []
            for (key, content) in reached {
                let isDiscarded = callOut {
                    content.discardContentIfPossible()
                    return content.isContentDiscarded
                }
                if isDiscarded {
                    discarded.append((key, ObjectIdentifier(content)))
                } else {
                    refused.insert(ObjectIdentifier(content))
                }
            }
            let discardedRemoved = entries.withLock { entries in
                var removed = Evicted()
                for (key, content) in discarded {
                    // Removed only if the same content is still stored for the key.
                    guard let value = entries.peek(key) as? any DiscardableContent, ObjectIdentifier(value) == content,
                          let entry = entries.remove(forKey: key) else { continue }
                    removed.append(entry)
                }
                return removed
            }
            evicted.append(contentsOf: discardedRemoved)
        }
        let result = evicted.result
        if !quietly { evicted.report(to: evictionHandler) }
        return result
    }

    /// Entries removed under the lock, to report and release after it.
    @usableFromInline
    struct Evicted {
        @usableFromInline package var first: LRUList<Key, Value>.Removed?
        @usableFromInline package var rest: [LRUList<Key, Value>.Removed] = []
        @usableFromInline package var result = CachePurgeResult()

        @inlinable
        package init() {}

        @inlinable
        package mutating func append(_ removed: LRUList<Key, Value>.Removed) {
            if first == nil { first = removed } else { rest.append(removed) }
            result.removedCount += 1
            result.releasedCost = result.releasedCost.addingClamped(removed.cost)
        }

        package mutating func append(contentsOf other: consuming Evicted) {
            if let first = other.first { append(first) }
            for removed in other.rest { append(removed) }
        }

        @inlinable
        package consuming func report(to handler: EvictionHandler?) {
            guard let handler, let first else { return }
            callOut {
                handler(first.key, first.value)
                for removed in rest { handler(removed.key, removed.value) }
            }
        }
    }
}

/// A cache whose cost limit is a fraction of the budget.
protocol BudgetSized: AnyObject {
    /// Takes `budgetBytes` as the budget in force.
    func followBudget(_ budgetBytes: Int)
}

extension PurgeableCache: BudgetSized {
    /// Sets the budget fraction's cost limit from `budgetBytes`, and trims the cache to it when it
    /// shrank (calling the eviction handler, outside the lock).
    package func followBudget(_ budgetBytes: Int) {
        guard givenBudgetFraction > 0 else { return }
        let share = max(1, Int(Double(budgetBytes) * givenBudgetFraction))
        let limit = givenCostLimit < 0 ? share : min(givenCostLimit, share)
        let previous = costLimitNow.exchange(limit, ordering: .relaxed)
        if previous < 0 || limit < previous {
            trim(toCost: limit)
        }
    }
}
