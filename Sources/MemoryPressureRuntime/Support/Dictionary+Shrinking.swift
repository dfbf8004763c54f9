extension Dictionary {
    /// Gives back the storage of a dictionary that has emptied out: once it holds fewer than a
    /// quarter of the entries it has room for (and has room for more than a few), its entries move
    /// to storage sized for them. A Swift dictionary keeps its capacity as entries are removed, so
    /// one that once held an entry per app (10,000 terminations under way at once, say) would hold
    /// that storage for the process's life. A move copies at most twice as many entries as were
    /// removed since the storage was last sized, so the cost per removal stays constant, and the new
    /// storage has room for at least a third more entries: no shrinking and growing back and forth.
    package mutating func shrinkIfSparse() {
        guard capacity > 64, count < capacity / 4 else { return }
        var shrunk = Self(minimumCapacity: count)
        for (key, value) in self { shrunk[key] = value }
        self = shrunk
    }
}
