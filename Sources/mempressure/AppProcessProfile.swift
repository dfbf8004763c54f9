import Foundation
import MemoryPressureSimulation

/// An ``AppProfile`` as `mempressure app-process --profile` takes it: the name of a built-in
/// profile, or the whole profile as JSON (what `run --processes` passes, so that the profiles a
/// scenario file defines reach the child as they are).
struct AppProcessProfile: Codable, Hashable, Sendable {
    var name: String
    var cacheKind: String
    var cacheEntryBytes: [Int]
    var cacheLimitBytes: Int
    var cacheBytesPerSecond: Int
    var screens: Int
    var backingStoreBytes: Int
    var launchBytes: Int
    var workingSetBytesPerSecond: Int
    var workingSetLimitBytes: Int
    var keptOnWarning: Double
    var fetchBytes: Int
    var playbackBufferBytes: Int?
    var playbackBackgroundMilliseconds: Int64?

    init(_ profile: AppProfile) {
        name = profile.name
        cacheKind = profile.cache.kind.rawValue
        cacheEntryBytes = [profile.cache.entryBytes.lowerBound, profile.cache.entryBytes.upperBound]
        cacheLimitBytes = profile.cache.limitBytes
        cacheBytesPerSecond = profile.cache.bytesPerSecond
        screens = profile.screens
        backingStoreBytes = profile.backingStoreBytes
        launchBytes = profile.launchBytes
        workingSetBytesPerSecond = profile.workingSet.bytesPerSecond
        workingSetLimitBytes = profile.workingSet.limitBytes
        keptOnWarning = profile.keptOnWarning
        fetchBytes = profile.fetchBytes
        playbackBufferBytes = profile.playback?.bufferBytes
        playbackBackgroundMilliseconds = profile.playback.map { Int64(($0.backgroundLength / .milliseconds(1)).rounded()) }
    }

    /// The profile, or nil when a figure is out of range.
    var profile: AppProfile? {
        guard let kind = CacheKind(rawValue: cacheKind), cacheEntryBytes.count == 2,
              cacheEntryBytes[0] > 0, cacheEntryBytes[0] <= cacheEntryBytes[1],
              [cacheLimitBytes, cacheBytesPerSecond, screens, backingStoreBytes, launchBytes,
               workingSetBytesPerSecond, workingSetLimitBytes, fetchBytes, playbackBufferBytes ?? 0].allSatisfy({ $0 >= 0 }),
              (0 ... 1).contains(keptOnWarning)
        else { return nil }
        let playback = playbackBufferBytes.map { bytes in
            AppProfile.Playback(bufferBytes: bytes, backgroundLength: .milliseconds(playbackBackgroundMilliseconds ?? 0))
        }
        return AppProfile(
            name: name,
            cache: .init(kind: kind, entryBytes: cacheEntryBytes[0] ... cacheEntryBytes[1], limitBytes: cacheLimitBytes, bytesPerSecond: cacheBytesPerSecond),
            screens: screens, backingStoreBytes: backingStoreBytes, launchBytes: launchBytes,
            workingSet: .init(bytesPerSecond: workingSetBytesPerSecond, limitBytes: workingSetLimitBytes),
            keptOnWarning: keptOnWarning, fetchBytes: fetchBytes, playback: playback
        )
    }

    /// The profile `text` names (a built-in profile's name) or holds (JSON), or nil.
    static func parse(_ text: String) -> AppProfile? {
        if let builtIn = AppProfile.builtIn[text] { return builtIn }
        guard text.hasPrefix("{") else { return nil }
        return (try? JSONDecoder().decode(AppProcessProfile.self, from: Data(text.utf8)))?.profile
    }

    /// `profile` as the JSON `--profile` takes.
    static func argument(for profile: AppProfile) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(AppProcessProfile(profile)) else { return profile.name }
        return String(decoding: data, as: UTF8.self)
    }
}
