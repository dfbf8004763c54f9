import CJemalloc

/// Process-wide jemalloc operations.
///
/// Linking this module makes jemalloc the process's `malloc`, so its statistics account for every
/// allocation the process makes, Swift objects included.
public enum Jemalloc {
    /// Refreshes the statistics snapshot (`epoch`). Every `stats.*` read returns the figures as of
    /// the last refresh; a refresh costs on the order of ten microseconds, so refresh once and then
    /// read everything needed.
    public static func advanceEpoch() throws(JemallocError) {
        try EpochRefresher.shared.get().advance()
    }

    /// Returns unused dirty pages of every arena to the operating system at once
    /// (`arena.<MALLCTL_ARENAS_ALL>.purge`).
    public static func purgeAllArenas() throws(JemallocError) {
        try Mallctl.perform("arena.\(cjemalloc_arenas_all()).purge")
    }

    /// Flushes the calling thread's cache, so that the bytes parked in it go back to their arenas
    /// (`thread.tcache.flush`).
    public static func flushThreadCache() throws(JemallocError) {
        try Mallctl.perform("thread.tcache.flush")
    }
}

/// Refreshes the epoch through a cached MIB.
struct EpochRefresher: Sendable {
    static let shared = Result { () throws(JemallocError) in try EpochRefresher() }

    private let mib: MallctlMIB<UInt64>

    init() throws(JemallocError) {
        mib = try MallctlKey.epoch.mib()
    }

    func advance() throws(JemallocError) {
        try mib.write(1)
    }
}
