import MemoryPressure

/// The root of a simulated app's view-controller tree, and the app's memory: what it grows while
/// the user is in it, what it gives back on warnings, and the state it saves.
///
/// Everything here lives in the app's heap (`HeapBuffer`s), so terminating the app returns it all:
/// the cache (registered with the system, which purges it by its category), the screens' backing
/// stores (registered too), the app's own data (the working set, which nothing but termination
/// returns), a spike's buffers and a playback buffer.
///
/// The system may refuse an allocation (past the budget, with no room made in time): the app then
/// does as a real one would, and goes on without it. It skips the cache entry, the screen's drawing,
/// the working set's growth or the playback it was for; it stops loading (at launch or for a fetch)
/// with what it has; and it notes the bytes it went without in the journal.
final class AppRootController: ViewController {
    let identifier: AppIdentifier
    let profile: AppProfile
    /// The launch this controller belongs to (1 for the first).
    let launch: Int
    let cache: PurgeableCache<Int, HeapBuffer>
    let screens: [ScreenController]
    /// The open background task of a fetch or of background playback, if any.
    var backgroundTask: BackgroundTaskIdentifier?
    /// The warning being delivered, set by the delegate (which hears it first) for the controllers.
    var currentWarning: ContinuousClock.Instant?

    private let heap: AppHeap
    private let journal: AppJournal
    private var generator: SeededGenerator
    private var state: SavedState
    private var workingSet: [HeapBuffer] = []
    /// How far the working set has grown beyond what the app loaded.
    private var grownBytes = 0
    private var spike: [HeapBuffer] = []
    private var playbackBuffer: HeapBuffer?
    private var cacheCredit = 0.0
    private var workingSetCredit = 0.0
    private var nextEntryBytes: Int

    init(
        identifier: AppIdentifier, profile: AppProfile, launch: Int, restored: SavedState?,
        heap: AppHeap, journal: AppJournal, generator: SeededGenerator
    ) throws(MemoryPressureError) {
        self.identifier = identifier
        self.profile = profile
        self.launch = launch
        self.heap = heap
        self.journal = journal
        self.generator = generator
        state = SavedState(
            app: identifier.rawValue, launch: launch, activity: restored?.activity ?? 0,
            screen: restored?.screen ?? 0, cacheEntries: restored?.cacheEntries ?? 0
        )
        cache = try PurgeableCache(
            name: "\(identifier).\(profile.cache.kind.rawValue)", owner: identifier, category: profile.cache.kind.category,
            costLimit: max(profile.cache.limitBytes, 1), payloadLocation: .appHeap
        )
        screens = try (0 ..< profile.screens).map { index throws(MemoryPressureError) in
            let store = try profile.backingStoreBytes >= 4
                ? BackingStore(width: profile.backingStoreBytes / 4, height: 1, in: heap, render: touchEveryPage)
                : nil
            return ScreenController(number: index + 1, store: store)
        }
        nextEntryBytes = self.generator.uniform(in: profile.cache.entryBytes)
        super.init()
        for screen in screens { addChild(screen) }
    }

    /// The state to save now.
    var savedState: SavedState {
        var saved = state
        saved.launch = launch
        return saved
    }

    /// Puts the screen the state names on show; when the system refuses the memory to draw it, the
    /// screen stays undrawn until its next showing.
    func showCurrentScreen() {
        guard !screens.isEmpty else { return }
        let screen = screens[state.screen % screens.count]
        attempt(allocating: screen.store?.capacity ?? 0) { () throws(MemoryPressureError) in try screen.show() }
    }

    // MARK: Activity

    /// `seconds` of the user's activity: the cache and the working set grow at the profile's rates,
    /// the screen on show is drawn, and now and then the user moves to another screen. An entry the
    /// system refuses memory for is skipped, with the rest of this slice's growth.
    func performActivity(seconds: Double) {
        state.activity += 1
        cacheCredit += Double(profile.cache.bytesPerSecond) * seconds
        while cacheCredit >= Double(nextEntryBytes) {
            cacheCredit -= Double(nextEntryBytes)
            let buffer = allocate(nextEntryBytes)
            if let buffer {
                attempt { () throws(MemoryPressureError) in try cache.setValue(buffer, forKey: state.cacheEntries, cost: buffer.byteCount) }
            }
            state.cacheEntries += 1
            nextEntryBytes = generator.uniform(in: profile.cache.entryBytes)
            if buffer == nil { cacheCredit = 0 }
        }
        // Looking back at recent entries keeps them the most recently used.
        for back in 1 ... 3 {
            _ = cache.value(forKey: state.cacheEntries - 2 * back)
        }
        workingSetCredit += Double(profile.workingSet.bytesPerSecond) * seconds
        while workingSetCredit >= Double(Self.workingSetChunk) {
            workingSetCredit -= Double(Self.workingSetChunk)
            if !grow(by: Self.workingSetChunk) { workingSetCredit = 0 }
        }
        if screens.count > 1, generator.unitInterval() < Self.screenChangeChance {
            screens[state.screen % screens.count].hide()
            state.screen = (state.screen + 1 + generator.uniform(in: 0 ... screens.count - 2)) % screens.count
        }
        showCurrentScreen()
    }

    /// Grows the app's own data by `bytes`, up to the profile's limit; returns false when it could
    /// not allocate them.
    private func grow(by bytes: Int) -> Bool {
        guard grownBytes + bytes <= profile.workingSet.limitBytes else { return true }
        guard let buffer = allocate(bytes) else { return false }
        workingSet.append(buffer)
        grownBytes += bytes
        return true
    }

    /// Loads what the app needs at launch into its own data.
    func load() {
        add(profile.launchBytes)
    }

    /// A fetch in the background: downloads the profile's fetch bytes into the app's own data.
    func fetch() {
        add(profile.fetchBytes)
    }

    /// Adds `bytes` to the app's own data, whatever its limit, in pieces. The first piece it cannot
    /// allocate ends the loading: the app goes on with what it has, and notes the rest as gone
    /// without.
    private func add(_ bytes: Int) {
        var remaining = bytes
        while remaining > 0 {
            let chunk = min(remaining, Self.workingSetChunk)
            do {
                workingSet.append(try touchedBuffer(chunk))
            } catch {
                note(error, goingWithout: remaining)
                return
            }
            remaining -= chunk
        }
    }

    /// Allocates `bytes` more for a spike; returns whether it could.
    func allocateSpike(_ bytes: Int) -> Bool {
        guard let buffer = allocate(bytes) else { return false }
        spike.append(buffer)
        return true
    }

    /// Frees the spike's buffers.
    func releaseSpike() {
        spike.removeAll()
    }

    // MARK: Playback

    /// Whether audio is playing.
    var isPlaying: Bool { playbackBuffer != nil }

    /// Starts playback, when the profile plays audio.
    func startPlayback() {
        guard let playback = profile.playback, playbackBuffer == nil, playback.bufferBytes > 0 else { return }
        playbackBuffer = allocate(playback.bufferBytes)
    }

    /// Stops playback and frees its buffer.
    func stopPlayback() {
        playbackBuffer = nil
    }

    // MARK: Warnings

    /// The delegate's answer to a memory warning: keep the profile's fraction of the cache.
    func trimCacheForWarning() {
        attempt { () throws(MemoryPressureError) in try cache.trim(toFraction: profile.keptOnWarning) }
    }

    /// Records that controller `number` heard the warning being delivered.
    func recordWarning(controller number: Int) {
        guard let currentWarning else { return }
        journal.recordControllerWarning(currentWarning, app: identifier, controller: number)
    }

    override func didReceiveMemoryWarning() {
        super.didReceiveMemoryWarning()
        recordWarning(controller: 0)
    }

    /// The number of controllers in the tree.
    var controllerCount: Int { 1 + screens.count }

    // MARK: Memory

    /// A buffer of `bytes` in the app's heap with every page written, or nil when the heap is
    /// closed (the app was terminated), the system refused the bytes (noted as gone without) or
    /// jemalloc could not allocate them (recorded as an error).
    private func allocate(_ bytes: Int) -> HeapBuffer? {
        do {
            return try touchedBuffer(bytes)
        } catch {
            note(error, goingWithout: bytes)
            return nil
        }
    }

    /// A buffer of `bytes` in the app's heap with every page written.
    private func touchedBuffer(_ bytes: Int) throws(MemoryPressureError) -> HeapBuffer {
        let buffer = try heap.allocate(byteCount: bytes)
        buffer.withUnsafeMutableBytes(touchPages)
        return buffer
    }

    /// Notes an allocation's `error`, for which the app goes without `bytes`: a refusal in the
    /// journal's refusals, jemalloc's failure as an error, a closed heap (the app was terminated)
    /// not at all.
    private func note(_ error: MemoryPressureError, goingWithout bytes: Int) {
        switch error.code {
        case .allocationRefused: journal.recordRefusal(of: identifier, bytes: bytes)
        case .allocationFailed: journal.recordError("\(identifier) could not allocate \(ByteCount(bytes)): \(error)")
        default: break
        }
    }

    /// Runs `body`, which may allocate `bytes` in the app's heap; a refusal of them is noted as gone
    /// without, any other error but a closed heap (the app was terminated) recorded.
    private func attempt<Failure: Error>(allocating bytes: Int = 0, _ body: () throws(Failure) -> Void) {
        do {
            try body()
        } catch let error as MemoryPressureError where error.code == .heapClosed {
            // The app was terminated: nothing to record.
        } catch let error as MemoryPressureError where error.code == .allocationRefused {
            note(error, goingWithout: bytes)
        } catch {
            journal.recordError("\(identifier): \(error)")
        }
    }

    /// The app's own data grows in pieces of this size.
    static let workingSetChunk = 1 << 20
    /// The chance, at each tick of activity, that the user moves to another screen.
    static let screenChangeChance = 0.1
}
