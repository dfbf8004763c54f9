import MemoryPressure

/// What kind of app a simulated app is: how fast it fills its cache, its views' backing stores and
/// its own data while it is in the foreground, and what it does in the background.
///
/// The built-in profiles (``builtIn``) are a photo library, a music player, a map, a browser and a
/// small utility; a scenario file can define more.
package struct AppProfile: Hashable, Sendable {
    /// The profile's name, as scenarios refer to it.
    package var name: String
    /// The purgeable cache the app fills while active.
    package var cache: Cache
    /// The app's screens: child view controllers, one visible at a time, each with a view that
    /// has a backing store.
    package var screens: Int
    /// The bytes of each screen's backing store.
    package var backingStoreBytes: Int
    /// What the app loads into its own data when it launches (its database, its models).
    package var launchBytes: Int
    /// The app's own data (a library index, a document): grown while active beyond what it loaded
    /// at launch, kept until the app is terminated, since nothing can rebuild it.
    package var workingSet: Growth
    /// The fraction of its cache the app keeps when its delegate hears a memory warning (0 empties
    /// it, as Kingfisher and SDWebImage do).
    package var keptOnWarning: Double
    /// What a launch into the background (a fetch) downloads into the app's own data.
    package var fetchBytes: Int
    /// Playback that goes on in the background under a background task, for a music player.
    package var playback: Playback?

    /// A purgeable cache of decoded payloads in the app's heap.
    package struct Cache: Hashable, Sendable {
        /// What the cache holds, which decides what the system purges when.
        package var kind: CacheKind
        /// The size of each entry, drawn uniformly.
        package var entryBytes: ClosedRange<Int>
        /// The cache's cost limit: the least recently used entries go beyond it.
        package var limitBytes: Int
        /// How fast the app fills it while active.
        package var bytesPerSecond: Int

        /// A cache of `kind` with these sizes.
        package init(kind: CacheKind, entryBytes: ClosedRange<Int>, limitBytes: Int, bytesPerSecond: Int) {
            self.kind = kind
            self.entryBytes = entryBytes
            self.limitBytes = limitBytes
            self.bytesPerSecond = bytesPerSecond
        }
    }

    /// Memory that grows at a rate up to a limit.
    package struct Growth: Hashable, Sendable {
        /// How fast it grows while the app is active.
        package var bytesPerSecond: Int
        /// Where it stops.
        package var limitBytes: Int

        /// Growth at `bytesPerSecond` up to `limitBytes`.
        package init(bytesPerSecond: Int, limitBytes: Int) {
            self.bytesPerSecond = bytesPerSecond
            self.limitBytes = limitBytes
        }
    }

    /// Audio that plays on after the app leaves the foreground.
    package struct Playback: Hashable, Sendable {
        /// The decoded audio held while playing.
        package var bufferBytes: Int
        /// How long playback goes on in the background (under a background task) before the track
        /// ends and the app suspends.
        package var backgroundLength: Duration

        /// Playback holding `bufferBytes`, going on `backgroundLength` in the background.
        package init(bufferBytes: Int, backgroundLength: Duration) {
            self.bufferBytes = bufferBytes
            self.backgroundLength = backgroundLength
        }
    }

    /// A profile with these figures.
    package init(
        name: String, cache: Cache, screens: Int, backingStoreBytes: Int, launchBytes: Int, workingSet: Growth,
        keptOnWarning: Double, fetchBytes: Int, playback: Playback? = nil
    ) {
        self.name = name
        self.cache = cache
        self.screens = screens
        self.backingStoreBytes = backingStoreBytes
        self.launchBytes = launchBytes
        self.workingSet = workingSet
        self.keptOnWarning = keptOnWarning
        self.fetchBytes = fetchBytes
        self.playback = playback
    }

    /// The most the app can hold that no purge gives back: its own data, its backing stores (the
    /// visible one is kept on warnings) and its playback buffer. Only termination returns it.
    package var unpurgeableBytes: Int {
        launchBytes + workingSet.limitBytes + fetchBytes + screens * backingStoreBytes + (playback?.bufferBytes ?? 0)
    }
}

/// What a simulated app's cache holds: one of the library's built-in categories.
package enum CacheKind: String, Hashable, Sendable, CaseIterable {
    /// Decoded images: emptied on entering the background and on warnings.
    case images
    /// Decoded media (tiles, audio): emptied on entering the background and on warnings.
    case media
    /// Objects rebuilt from elsewhere: trimmed to 10% on entering the background, emptied on warnings.
    case rebuildableObjects

    /// The library's category.
    package var category: CacheCategory {
        switch self {
        case .images: .images
        case .media: .media
        case .rebuildableObjects: .rebuildableObjects
        }
    }
}
