/// The entries of a ``PurgeableCache`` in least-recently-used order.
///
/// The entries sit densely in one buffer (a removal moves the last entry into the hole), threaded
/// into a doubly linked list from the least to the most recently used by index. An open-addressing
/// table of entry indices (linear probing, at most half full, deletion by backward shift, no
/// tombstones) finds an entry by its key; each slot also keeps 7 bits of the key's hash, so a probe
/// reads an entry only when they match. Per entry that is the key, the value, the cost and two
/// 4-byte links, plus two to four 4-byte table slots; nothing is allocated per entry, and a lookup
/// touches one table slot and, almost always, one entry. Indices take 24 bits, so a list holds at
/// most ``maximumCount`` (16,777,214) entries. Every operation is O(1) except trimming, which is
/// O(entries visited), and growth, which is amortized O(1).
///
/// The list owns its two buffers and cannot be copied, so no copy-on-write check sits on the hot
/// paths. Not thread-safe: the cache keeps it under its lock.
@usableFromInline
package struct LRUList<Key: Hashable, Value>: ~Copyable {
    /// One entry, with its neighbours in recency order.
    @usableFromInline
    package struct Entry {
        @usableFromInline package var key: Key
        @usableFromInline package var value: Value
        @usableFromInline package var cost: Int
        /// The next older entry (towards the least recently used), or `none`.
        @usableFromInline var older: Int32
        /// The next newer entry (towards the most recently used), or `none`.
        @usableFromInline var newer: Int32

        @inlinable
        package init(key: Key, value: Value, cost: Int, older: Int32, newer: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.older = older
            self.newer = newer
        }
    }

    /// An entry taken out of the list.
    @usableFromInline
    package typealias Removed = (key: Key, value: Value, cost: Int)

    /// No entry: the end of the list, or an empty table slot.
    @inlinable
    package static var none: Int32 { -1 }

    /// `count` initialized entries, then room for `capacity - count` more.
    @usableFromInline package var entries: UnsafeMutablePointer<Entry>
    @usableFromInline package var capacity: Int
    /// The number of entries.
    @usableFromInline package var count = 0
    /// Entry indices by key hash (`none` where empty): `tableMask + 1` slots, a power of two at
    /// least twice `count`.
    @usableFromInline var table: UnsafeMutablePointer<Int32>
    @usableFromInline var tableMask: Int
    @usableFromInline var newest = none
    @usableFromInline var oldest = none

    /// The sum of the entries' costs, exact: 16,777,214 costs of up to `Int.max` each overflow an
    /// `Int` but not an `Int128`.
    @usableFromInline var totalCost: Int128 = 0

    @inlinable
    package init(reservingCapacity capacity: Int = 0) {
        self.capacity = max(capacity, 8)
        entries = .allocate(capacity: self.capacity)
        let tableSize = Self.tableSize(for: self.capacity)
        table = .allocate(capacity: tableSize)
        table.initialize(repeating: Self.none, count: tableSize)
        tableMask = tableSize - 1
    }

    @inlinable
    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
        table.deallocate()
    }

    /// The value for `key`, which becomes the most recently used.
    @inlinable
    package mutating func value(forKey key: Key) -> Value? {
        guard let index = find(key).entry else { return nil }
        moveToNewest(index)
        return entries[Int(index)].value
    }

    /// Stores `value` as the most recently used entry, returning the value it replaced.
    @inlinable
    package mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Value? {
        let (slot, found, tag) = find(key)
        if let index = found {
            let entry = entries + Int(index)
            let replaced = entry.pointee.value
            totalCost += Int128(cost) - Int128(entry.pointee.cost)
            entry.pointee.value = value
            entry.pointee.cost = cost
            moveToNewest(index)
            return replaced
        }
        precondition(count <= Self.maximumCount, "a cache holds at most \(Self.maximumCount) entries")
        if count == capacity {
            grow()
        }
        let index = Int32(truncatingIfNeeded: count)
        (entries + count).initialize(to: Entry(key: key, value: value, cost: cost, older: newest, newer: Self.none))
        count += 1
        linkAsNewest(index)
        totalCost += Int128(cost)
        if count * 2 > tableMask + 1 {
            rebuildTable(size: (tableMask + 1) * 2)
        } else {
            table[slot] = tag | index
        }
        return nil
    }

    /// Removes the entry for `key`.
    @inlinable
    package mutating func remove(forKey key: Key) -> Removed? {
        guard let index = find(key).entry else { return nil }
        return remove(at: index)
    }

    /// The value stored for `key`, leaving its place in the order as it is.
    @inlinable
    package func peek(_ key: Key) -> Value? {
        find(key).entry.map { entries[Int($0)].value }
    }

    /// Removes the least recently used entry.
    @inlinable
    mutating func removeOldest() -> Removed? {
        oldest == Self.none ? nil : remove(at: oldest)
    }

    /// Visits entries from the least recently used while `needsMore` says more must go, removing
    /// each one `shouldRemove` accepts and passing it to `removed`.
    @inlinable
    package mutating func trim(
        while needsMore: (_ count: Int, _ totalCost: Int128) -> Bool,
        removingIf shouldRemove: (_ key: Key, _ value: Value, _ cost: Int) -> Bool,
        _ removed: (Removed) -> Void
    ) {
        var index = oldest
        while index != Self.none, needsMore(count, totalCost) {
            var next = entries[Int(index)].newer
            let entry = entries[Int(index)]
            if shouldRemove(entry.key, entry.value, entry.cost) {
                let last = Int32(truncatingIfNeeded: count - 1)
                removed(remove(at: index))
                // The last entry now sits where the removed one was.
                if next == last { next = index }
            }
            index = next
        }
    }

    /// Every key, from the least to the most recently used.
    @inlinable
    var keysFromOldest: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var index = oldest
        while index != Self.none {
            keys.append(entries[Int(index)].key)
            index = entries[Int(index)].newer
        }
        return keys
    }

    // MARK: The table

    /// The bits of a table slot that hold an entry index; the 7 bits above them hold bits of the
    /// entry key's hash, so a probe compares keys only where those match.
    @inlinable
    static var indexMask: Int32 { 0xFF_FFFF }

    /// The most entries a list keeps between operations. An insert may hold one more until its
    /// caller evicts; every index stays below `indexMask`, which `none` shows as in its low bits.
    @inlinable
    static var maximumCount: Int { Int(indexMask) - 1 }

    /// The key's hash.
    ///
    /// `_rawHashValue(seed:)` is the standard library's hashing entry point for hash tables (its
    /// `Dictionary` and swift-collections' `OrderedSet` use it): for the standard types it hashes
    /// in one shot, where `hashValue` builds and finalizes a `Hasher`.
    @inlinable
    package static func hash(of key: Key) -> Int {
        key._rawHashValue(seed: 0)
    }

    /// The hash bits a slot keeps beside the index: the top 7, as the slot number takes the low ones.
    @inlinable
    static func tag(of hash: Int) -> Int32 {
        Int32(truncatingIfNeeded: (hash >> 57) & 0x7F) << 24
    }

    /// The table slot holding `key`'s entry index, or the empty slot where it would go, and the tag
    /// of `key`'s hash.
    @inlinable
    func find(_ key: Key) -> (slot: Int, entry: Int32?, tag: Int32) {
        let hash = Self.hash(of: key)
        let tag = Self.tag(of: hash)
        var slot = hash & tableMask
        while true {
            let stored = table[slot]
            if stored == Self.none { return (slot, nil, tag) }
            if stored & ~Self.indexMask == tag, entries[Int(stored & Self.indexMask)].key == key {
                return (slot, stored & Self.indexMask, tag)
            }
            slot = (slot + 1) & tableMask
        }
    }

    /// The table slot holding the entry index `index`.
    @inlinable
    package func slot(of index: Int32) -> Int {
        var slot = Self.hash(of: entries[Int(index)].key) & tableMask
        while table[slot] & Self.indexMask != index {
            slot = (slot + 1) & tableMask
        }
        return slot
    }

    /// Empties `slot`, moving later entries of its probe run back so that every entry stays
    /// reachable from its home slot.
    @inlinable
    mutating func vacate(_ slot: Int) {
        var hole = slot
        var next = (slot + 1) & tableMask
        while table[next] != Self.none {
            let home = Self.hash(of: entries[Int(table[next] & Self.indexMask)].key) & tableMask
            // The entry at `next` may fill the hole unless its home lies after the hole (cyclically,
            // between the hole and `next`).
            if (next &- home) & tableMask >= (next &- hole) & tableMask {
                table[hole] = table[next]
                hole = next
            }
            next = (next + 1) & tableMask
        }
        table[hole] = Self.none
    }

    @inlinable
    mutating func rebuildTable(size: Int) {
        table.deallocate()
        table = .allocate(capacity: size)
        table.initialize(repeating: Self.none, count: size)
        tableMask = size - 1
        for index in 0..<count {
            let hash = Self.hash(of: entries[index].key)
            var slot = hash & tableMask
            while table[slot] != Self.none {
                slot = (slot + 1) & tableMask
            }
            table[slot] = Self.tag(of: hash) | Int32(truncatingIfNeeded: index)
        }
    }

    /// Doubles the entry buffer.
    @inlinable
    package mutating func grow() {
        let larger = UnsafeMutablePointer<Entry>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: entries, count: count)
        entries.deallocate()
        entries = larger
        capacity *= 2
    }

    /// The smallest power of two at least twice `count`.
    @inlinable
    static func tableSize(for count: Int) -> Int {
        1 << (Int.bitWidth - (count * 2 - 1).leadingZeroBitCount)
    }

    // MARK: The list

    @inlinable
    package mutating func remove(at index: Int32) -> Removed {
        vacate(slot(of: index))
        unlink(index)
        let last = Int32(truncatingIfNeeded: count - 1)
        let entry = (entries + Int(index)).move()
        if index != last {
            // Move the last entry into the hole: repoint its table slot and its neighbours.
            let movedSlot = slot(of: last)
            table[movedSlot] = table[movedSlot] & ~Self.indexMask | index
            (entries + Int(index)).moveInitialize(from: entries + Int(last), count: 1)
            relink(index)
        }
        count -= 1
        totalCost -= Int128(entry.cost)
        return (entry.key, entry.value, entry.cost)
    }

    @inlinable
    mutating func moveToNewest(_ index: Int32) {
        guard index != newest else { return }
        unlink(index)
        entries[Int(index)].older = newest
        entries[Int(index)].newer = Self.none
        linkAsNewest(index)
    }

    /// Links an entry whose `older` is already the current newest.
    @inlinable
    mutating func linkAsNewest(_ index: Int32) {
        if newest != Self.none {
            entries[Int(newest)].newer = index
        } else {
            oldest = index
        }
        newest = index
    }

    @inlinable
    package mutating func unlink(_ index: Int32) {
        let older = entries[Int(index)].older
        let newer = entries[Int(index)].newer
        if older != Self.none { entries[Int(older)].newer = newer } else { oldest = newer }
        if newer != Self.none { entries[Int(newer)].older = older } else { newest = older }
    }

    /// Points the neighbours of the entry just moved to `index` at its new place.
    @inlinable
    mutating func relink(_ index: Int32) {
        let older = entries[Int(index)].older
        let newer = entries[Int(index)].newer
        if older != Self.none { entries[Int(older)].newer = index } else { oldest = index }
        if newer != Self.none { entries[Int(newer)].older = index } else { newest = index }
    }
}
