/// The parts of jemalloc's configuration that decide how memory is returned to the system.
///
/// Codable as an object: `version`, `statisticsEnabled`, `automaticArenaCount`, `arenaCount`,
/// `dirtyDecayMilliseconds`, `muzzyDecayMilliseconds`, `backgroundThread`, `threadCache`,
/// `pageSizeBytes` and `oversizeThresholdBytes`.
public struct JemallocConfiguration: Hashable, Sendable, Codable {
    /// jemalloc's version string, for example `5.3.0-0-g54eaed1d…`.
    public var version: String
    /// Whether jemalloc was built with statistics (`config.stats`); without them no footprint can be read.
    public var statisticsEnabled: Bool
    /// Number of automatic arenas (`opt.narenas`).
    public var automaticArenaCount: UInt32
    /// Number of arena indices in use, automatic and created (`arenas.narenas`).
    public var arenaCount: UInt32
    /// Default time in milliseconds before unused dirty pages are purged; -1 means never.
    public var dirtyDecayMilliseconds: Int
    /// Default time in milliseconds before unused muzzy pages are purged; -1 means never.
    public var muzzyDecayMilliseconds: Int
    /// Whether background threads purge pages asynchronously.
    public var backgroundThread: Bool
    /// Whether thread caches are enabled (`opt.tcache`).
    public var threadCache: Bool
    /// jemalloc's page size in bytes.
    public var pageSize: Int
    /// Allocations at least this large from automatic arenas go to a dedicated arena.
    public var oversizeThreshold: Int

    private enum CodingKeys: String, CodingKey {
        case version, statisticsEnabled, automaticArenaCount, arenaCount
        case dirtyDecayMilliseconds, muzzyDecayMilliseconds, backgroundThread, threadCache
        case pageSize = "pageSizeBytes"
        case oversizeThreshold = "oversizeThresholdBytes"
    }

    /// Reads the current configuration.
    public static func current() throws(JemallocError) -> JemallocConfiguration {
        JemallocConfiguration(
            version: try Mallctl.readString("version"),
            statisticsEnabled: try MallctlKey.statisticsEnabled.read(),
            automaticArenaCount: try MallctlKey.automaticArenaCount.read(),
            arenaCount: try MallctlKey.arenaCount.read(),
            dirtyDecayMilliseconds: try MallctlKey.dirtyDecayMilliseconds.read(),
            muzzyDecayMilliseconds: try MallctlKey.muzzyDecayMilliseconds.read(),
            backgroundThread: try MallctlKey.backgroundThread.read(),
            threadCache: try MallctlKey.threadCache.read(),
            pageSize: try MallctlKey.pageSize.read(),
            oversizeThreshold: try MallctlKey.oversizeThreshold.read()
        )
    }
}
