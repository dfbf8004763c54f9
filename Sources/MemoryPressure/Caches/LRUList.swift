/// The entries of a ``PurgeableCache`` in least-recently-used order: a doubly linked list threaded
/// through one contiguous array by index, with a free list of vacated slots and a dictionary from
/// key to slot. Every operation is O(1) except trimming, which is O(entries visited). Not
/// thread-safe: the cache keeps it under its lock.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    /// One slot of the array: an entry, or a vacancy on the free list.
    @usableFromInline
    struct Slot {
        /// The entry, or nil when the slot is on the free list.
        @usableFromInline var entry: (key: Key, value: Value)?
        @usableFromInline var cost: Int
        /// The next older slot (towards the least recently used), or the next free slot.
        @usableFromInline var older: Int32
        /// The next newer slot (towards the most recently used).
        @usableFromInline var newer: Int32

        @inlinable
        init(entry: (key: Key, value: Value)?, cost: Int, older: Int32, newer: Int32) {
            self.entry = entry
            self.cost = cost
            self.older = older
            self.newer = newer
        }
    }

    /// An entry taken out of the list.
    @usableFromInline
    typealias Removed = (key: Key, value: Value, cost: Int)

    @inlinable
    static var none: Int32 { -1 }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var slotIndex: [Key: Int32] = [:]
    @usableFromInline var firstFree = none
    @usableFromInline var newest = none
    @usableFromInline var oldest = none

    /// The sum of the entries' costs.
    @usableFromInline var totalCost = 0

    /// The number of entries.
    @inlinable
    var count: Int { slotIndex.count }

    @inlinable
    init(reservingCapacity capacity: Int = 0) {
        slots.reserveCapacity(capacity)
        slotIndex.reserveCapacity(capacity)
    }

    /// The value for `key`, which becomes the most recently used.
    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        guard let slot = slotIndex[key] else { return nil }
        moveToNewest(slot)
        return slots[Int(slot)].entry.unsafelyUnwrapped.value
    }

    /// Stores `value` as the most recently used entry, returning the value it replaced.
    @inlinable
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Value? {
        if let slot = slotIndex[key] {
            let replaced = slots[Int(slot)].entry.unsafelyUnwrapped.value
            totalCost += cost - slots[Int(slot)].cost
            slots[Int(slot)].entry = (key, value)
            slots[Int(slot)].cost = cost
            moveToNewest(slot)
            return replaced
        }
        let slot: Int32
        if firstFree != Self.none {
            slot = firstFree
            firstFree = slots[Int(slot)].older
            slots[Int(slot)] = Slot(entry: (key, value), cost: cost, older: newest, newer: Self.none)
        } else {
            precondition(slots.count < Int(Int32.max), "a cache holds at most \(Int32.max) entries")
            slot = Int32(truncatingIfNeeded: slots.count)
            slots.append(Slot(entry: (key, value), cost: cost, older: newest, newer: Self.none))
        }
        linkAsNewest(slot)
        slotIndex[key] = slot
        totalCost += cost
        return nil
    }

    /// Removes the entry for `key`.
    @inlinable
    mutating func remove(forKey key: Key) -> Removed? {
        guard let slot = slotIndex[key] else { return nil }
        return remove(slot: slot)
    }

    /// Removes the least recently used entry.
    @inlinable
    mutating func removeOldest() -> Removed? {
        oldest == Self.none ? nil : remove(slot: oldest)
    }

    /// Visits entries from the least recently used while `needsMore` says more must go, removing
    /// each one `shouldRemove` accepts and passing it to `removed`.
    @inlinable
    mutating func trim(
        while needsMore: (_ count: Int, _ totalCost: Int) -> Bool,
        removingIf shouldRemove: (Value) -> Bool,
        _ removed: (Removed) -> Void
    ) {
        var slot = oldest
        while slot != Self.none, needsMore(count, totalCost) {
            let next = slots[Int(slot)].newer
            if shouldRemove(slots[Int(slot)].entry.unsafelyUnwrapped.value) {
                removed(remove(slot: slot))
            }
            slot = next
        }
    }

    /// Every key, from the least to the most recently used.
    @inlinable
    var keysFromOldest: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var slot = oldest
        while slot != Self.none {
            keys.append(slots[Int(slot)].entry.unsafelyUnwrapped.key)
            slot = slots[Int(slot)].newer
        }
        return keys
    }

    @inlinable
    mutating func remove(slot: Int32) -> Removed {
        unlink(slot)
        let entry = slots[Int(slot)].entry.unsafelyUnwrapped
        let cost = slots[Int(slot)].cost
        slots[Int(slot)] = Slot(entry: nil, cost: 0, older: firstFree, newer: Self.none)
        firstFree = slot
        slotIndex[entry.key] = nil
        totalCost -= cost
        return (entry.key, entry.value, cost)
    }

    @inlinable
    mutating func moveToNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = Self.none
        linkAsNewest(slot)
    }

    /// Links a slot whose `older` is already the current newest.
    @inlinable
    mutating func linkAsNewest(_ slot: Int32) {
        if newest != Self.none {
            slots[Int(newest)].newer = slot
        } else {
            oldest = slot
        }
        newest = slot
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let older = slots[Int(slot)].older
        let newer = slots[Int(slot)].newer
        if older != Self.none { slots[Int(older)].newer = newer } else { oldest = newer }
        if newer != Self.none { slots[Int(newer)].older = older } else { newest = older }
    }
}
