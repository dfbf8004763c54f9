/// A mallctl name together with the type of its value.
///
/// ```swift
/// try Jemalloc.advanceEpoch()
/// let allocated = try MallctlKey.statsAllocated.read()
/// ```
///
/// Each read by name makes jemalloc look the name up. On a hot path, resolve the key once with
/// ``mib()`` and read the ``MallctlMIB`` instead.
public struct MallctlKey<Value: MallctlValue>: Hashable, Sendable, CustomStringConvertible {
    /// The dotted mallctl name, for example `stats.allocated`.
    public let name: String

    /// A key for `name`, whose value has the C type that `Value` stands for.
    public init(_ name: String) {
        self.name = name
    }

    /// Reads the value by name.
    public func read() throws(JemallocError) -> Value {
        try Mallctl.read(name)
    }

    /// Writes the value by name.
    public func write(_ value: Value) throws(JemallocError) {
        try Mallctl.write(name, value)
    }

    /// Translates the name into its management information base once, for cheap repeated access.
    public func mib() throws(JemallocError) -> MallctlMIB<Value> {
        try MallctlMIB(name: name)
    }

    public var description: String { name }
}

extension MallctlKey where Value == UInt64 {
    /// `epoch`: writing it refreshes the statistics snapshot that every `stats.*` read returns.
    public static var epoch: Self { .init("epoch") }
}

extension MallctlKey where Value == Int {
    /// `stats.allocated`: bytes allocated by the application (thread-cached bytes included).
    public static var statsAllocated: Self { .init("stats.allocated") }
    /// `stats.active`: bytes in active pages, a multiple of the page size.
    public static var statsActive: Self { .init("stats.active") }
    /// `stats.resident`: bytes in physically resident data pages mapped by jemalloc.
    public static var statsResident: Self { .init("stats.resident") }
    /// `stats.mapped`: bytes in active extents mapped by jemalloc.
    public static var statsMapped: Self { .init("stats.mapped") }
    /// `stats.retained`: bytes in virtual memory mappings retained rather than returned to the OS.
    public static var statsRetained: Self { .init("stats.retained") }
    /// `stats.metadata`: bytes dedicated to jemalloc's own metadata.
    public static var statsMetadata: Self { .init("stats.metadata") }
    /// `arenas.page`: the page size jemalloc uses.
    public static var pageSize: Self { .init("arenas.page") }
    /// `arenas.dirty_decay_ms`: default time for dirty pages to be purged; -1 disables decay.
    public static var dirtyDecayMilliseconds: Self { .init("arenas.dirty_decay_ms") }
    /// `arenas.muzzy_decay_ms`: default time for muzzy pages to be purged; -1 disables decay.
    public static var muzzyDecayMilliseconds: Self { .init("arenas.muzzy_decay_ms") }
    /// `opt.oversize_threshold`: automatic-arena allocations at least this large go to a dedicated arena.
    public static var oversizeThreshold: Self { .init("opt.oversize_threshold") }
}

extension MallctlKey where Value == UInt32 {
    /// `arenas.narenas`: the number of arena indices in use (automatic and created).
    public static var arenaCount: Self { .init("arenas.narenas") }
    /// `opt.narenas`: the number of automatic arenas.
    public static var automaticArenaCount: Self { .init("opt.narenas") }
    /// `arenas.create`: reading it creates an arena and returns its index.
    public static var createArena: Self { .init("arenas.create") }
}

extension MallctlKey where Value == Bool {
    /// `config.stats`: whether jemalloc was built with statistics.
    public static var statisticsEnabled: Self { .init("config.stats") }
    /// `background_thread`: whether background threads purge dirty pages asynchronously.
    public static var backgroundThread: Self { .init("background_thread") }
    /// `opt.tcache`: whether thread caches are enabled.
    public static var threadCache: Self { .init("opt.tcache") }
}
