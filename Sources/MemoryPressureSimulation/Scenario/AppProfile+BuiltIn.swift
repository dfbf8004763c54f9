private let kibibyte = 1 << 10
private let mebibyte = 1 << 20

extension AppProfile {
    /// A photo library: an image cache of decoded photos, many screens of thumbnails with their
    /// backing stores, and a growing library index.
    package static let photos = AppProfile(
        name: "photos",
        cache: Cache(kind: .images, entryBytes: 2 * mebibyte ... 6 * mebibyte, limitBytes: 160 * mebibyte, bytesPerSecond: 80 * mebibyte),
        screens: 8, backingStoreBytes: 2 * mebibyte,
        launchBytes: 96 * mebibyte,
        workingSet: Growth(bytesPerSecond: 24 * mebibyte, limitBytes: 96 * mebibyte),
        keptOnWarning: 0, fetchBytes: 16 * mebibyte
    )

    /// A music player: a media cache of downloaded tracks, artwork screens, and playback that goes
    /// on in the background under a background task.
    package static let music = AppProfile(
        name: "music",
        cache: Cache(kind: .media, entryBytes: 1 * mebibyte ... 2 * mebibyte, limitBytes: 48 * mebibyte, bytesPerSecond: 24 * mebibyte),
        screens: 3, backingStoreBytes: 1 * mebibyte,
        launchBytes: 32 * mebibyte,
        workingSet: Growth(bytesPerSecond: 8 * mebibyte, limitBytes: 32 * mebibyte),
        keptOnWarning: 0.5, fetchBytes: 8 * mebibyte,
        playback: Playback(bufferBytes: 16 * mebibyte, backgroundLength: .seconds(8))
    )

    /// A map: large media tiles, a full-screen map view with a large backing store, and the route
    /// and search data it builds.
    package static let maps = AppProfile(
        name: "maps",
        cache: Cache(kind: .media, entryBytes: 4 * mebibyte ... 8 * mebibyte, limitBytes: 192 * mebibyte, bytesPerSecond: 100 * mebibyte),
        screens: 2, backingStoreBytes: 8 * mebibyte,
        launchBytes: 64 * mebibyte,
        workingSet: Growth(bytesPerSecond: 16 * mebibyte, limitBytes: 64 * mebibyte),
        keptOnWarning: 0.25, fetchBytes: 8 * mebibyte
    )

    /// A browser: rebuildable objects (parsed pages, layout), tabs with backing stores, and its
    /// history and session data.
    package static let browser = AppProfile(
        name: "browser",
        cache: Cache(kind: .rebuildableObjects, entryBytes: 256 * kibibyte ... 1 * mebibyte, limitBytes: 128 * mebibyte, bytesPerSecond: 60 * mebibyte),
        screens: 4, backingStoreBytes: 4 * mebibyte,
        launchBytes: 64 * mebibyte,
        workingSet: Growth(bytesPerSecond: 16 * mebibyte, limitBytes: 80 * mebibyte),
        keptOnWarning: 0, fetchBytes: 4 * mebibyte
    )

    /// A small utility (notes, a calculator): little of anything.
    package static let utility = AppProfile(
        name: "utility",
        cache: Cache(kind: .images, entryBytes: 64 * kibibyte ... 256 * kibibyte, limitBytes: 8 * mebibyte, bytesPerSecond: 4 * mebibyte),
        screens: 2, backingStoreBytes: 1 * mebibyte,
        launchBytes: 16 * mebibyte,
        workingSet: Growth(bytesPerSecond: 2 * mebibyte, limitBytes: 16 * mebibyte),
        keptOnWarning: 0, fetchBytes: 1 * mebibyte
    )

    /// A game: a launch that loads hundreds of MiB of levels and textures as fast as it can, a
    /// cache of streamed assets, one full-screen view with a large backing store.
    package static let game = AppProfile(
        name: "game",
        cache: Cache(kind: .media, entryBytes: 4 * mebibyte ... 8 * mebibyte, limitBytes: 64 * mebibyte, bytesPerSecond: 48 * mebibyte),
        screens: 1, backingStoreBytes: 8 * mebibyte,
        launchBytes: 320 * mebibyte,
        workingSet: Growth(bytesPerSecond: 8 * mebibyte, limitBytes: 16 * mebibyte),
        keptOnWarning: 0, fetchBytes: 16 * mebibyte
    )

    /// The built-in profiles, by name.
    package static let builtIn: [String: AppProfile] = Dictionary(
        uniqueKeysWithValues: [photos, music, maps, browser, utility, game].map { ($0.name, $0) }
    )

    /// The built-in profiles' names, in the order they are documented.
    package static let builtInNames = ["photos", "music", "maps", "browser", "utility", "game"]
}
