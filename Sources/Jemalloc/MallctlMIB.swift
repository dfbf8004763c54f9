import CJemalloc

/// A mallctl name translated once into its management information base (MIB), so that reads skip
/// jemalloc's name lookup.
///
/// Keys with an arena index (`stats.arenas.<i>.pactive`, `arena.<i>.purge`) are resolved once with
/// any index and then pointed at another arena with ``replacingIndex(at:with:)``, as the jemalloc
/// manual recommends.
public struct MallctlMIB<Value: MallctlValue>: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let template: String
    @usableFromInline var components: [Int]

    /// The name this MIB stands for, with its index components as they are now.
    public var name: String {
        name(replacingIndexAt: nil, with: 0)
    }

    @usableFromInline
    func name(replacingIndexAt replaced: Int?, with index: Int) -> String {
        var parts = template.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for position in parts.indices where parts[position].allSatisfy(\.isNumber) {
            parts[position] = String(position == replaced ? index : components[position])
        }
        return parts.joined(separator: ".")
    }

    /// Resolves `name` (`mallctlnametomib`).
    public init(name: String) throws(JemallocError) {
        let depth = name.utf8.count { $0 == UInt8(ascii: ".") } + 1
        var components = [Int](repeating: 0, count: depth)
        var count = depth
        let status = components.withUnsafeMutableBufferPointer { mallctlnametomib(name, $0.baseAddress, &count) }
        try Mallctl.check(status, key: name)
        self.template = name
        self.components = Array(components.prefix(count))
    }

    /// Reads the value (`mallctlbymib`).
    @inlinable
    public func read() throws(JemallocError) -> Value {
        try read(replacingIndexAt: nil, with: 0)
    }

    /// Reads the value with the component at `position` replaced by `index`, without copying the
    /// MIB: the way to read one statistic of many arenas in a sampling loop.
    @inlinable
    public func read(replacingIndexAt position: Int?, with index: Int) throws(JemallocError) -> Value {
        var value = Value()
        var size = MemoryLayout<Value>.size
        let status = withComponents(replacingIndexAt: position, with: index) { mib, count in
            mallctlbymib(mib, count, &value, &size, nil, 0)
        }
        try Mallctl.check(status, key: self.name(replacingIndexAt: position, with: index))
        return value
    }

    /// Writes the value (`mallctlbymib`).
    @inlinable
    public func write(_ value: Value) throws(JemallocError) {
        var value = value
        let status = withComponents(replacingIndexAt: nil, with: 0) { mib, count in
            mallctlbymib(mib, count, nil, nil, &value, MemoryLayout<Value>.size)
        }
        try Mallctl.check(status, key: self.name)
    }

    /// Runs a command key that takes and returns nothing, such as `arena.<i>.purge`.
    @inlinable
    public func perform() throws(JemallocError) {
        let status = withComponents(replacingIndexAt: nil, with: 0) { mib, count in
            mallctlbymib(mib, count, nil, nil, nil, 0)
        }
        try Mallctl.check(status, key: self.name)
    }

    /// Calls `body` with the components, one of them replaced on a copy on the stack when asked.
    @inlinable
    func withComponents(
        replacingIndexAt position: Int?,
        with index: Int,
        _ body: (UnsafePointer<Int>, Int) -> Int32
    ) -> Int32 {
        components.withUnsafeBufferPointer { stored in
            guard let position else { return body(stored.baseAddress!, stored.count) }
            precondition(stored.indices.contains(position), "\(template) has no component \(position)")
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: stored.count) { copy in
                _ = copy.initialize(from: stored)
                copy[position] = index
                return body(UnsafePointer(copy.baseAddress!), stored.count)
            }
        }
    }

    /// The same MIB with the component at `position` (0-based, counting the dots of the name)
    /// replaced by `index`: for example position 2 of `stats.arenas.0.pactive` is the arena.
    @inlinable
    public func replacingIndex(at position: Int, with index: Int) -> Self {
        precondition(components.indices.contains(position), "\(name) has no component \(position)")
        var copy = self
        copy.components[position] = index
        return copy
    }

    public var description: String { name }
}
