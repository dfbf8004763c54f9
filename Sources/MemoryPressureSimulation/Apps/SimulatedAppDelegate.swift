import MemoryPressure

/// What a simulated app's delegate is given: where its memory goes and where it reports.
struct AppContext: Sendable {
    /// The system's registry: the app's heap, and where its cache and stores are registered.
    let registry: PurgeRegistry
    /// Where the app reports what it saw.
    let journal: AppJournal
    /// The seed of the app's own random choices, from the scenario's seed and the app's place.
    let seed: UInt64
    /// The app's place in the scenario.
    let index: Int
}

/// A simulated app's code, as any app would write it on the library's public API: it builds its
/// view-controller tree and registers its cache and backing stores on launch, checks the state it
/// restored, saves state on entering the background and in `willTerminate`, keeps a background task
/// while it plays audio or fetches, and gives memory back on a warning.
final class SimulatedAppDelegate: AppDelegate {
    let profile: AppProfile
    let context: AppContext
    private var warningObservers: [ObservationToken] = []

    init(profile: AppProfile, context: AppContext) {
        self.profile = profile
        self.context = context
    }

    /// The observers each app adds for memory warnings: its image decoder and its analytics.
    static let warningObserverCount = 2

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        let identifier = app.identifier
        var restored: SavedState?
        var failure = options.restorationFailure.map { "an unreadable archive (\($0))" }
        do {
            restored = try options.restoredState(as: SavedState.self)
        } catch {
            failure = "a state it could not decode (\(error))"
        }
        let launch = context.journal.recordLaunch(of: identifier, restored: restored, failure: failure)
        let root: AppRootController
        do {
            let heap = try context.registry.heap(for: identifier)
            let stream = UInt64(context.index) << 32 | UInt64(launch)
            root = try AppRootController(
                identifier: identifier, profile: profile, launch: launch, restored: restored,
                heap: heap, journal: context.journal, generator: SeededGenerator(seed: context.seed, stream: stream)
            )
        } catch {
            context.journal.recordError("\(identifier) could not launch: \(error)")
            return
        }
        context.registry.register(root.cache)
        for store in root.screens.compactMap(\.store) {
            context.registry.register(store, owner: identifier)
        }
        app.rootViewController = root
        addWarningObservers(app, launch: launch)
        root.load()
        if let fetch = BackgroundFetch(options) {
            root.fetch()
            beginBackgroundTask(app, root: root, lasting: fetch.work, endsPlayback: false)
        } else {
            root.showCurrentScreen()
            root.startPlayback()
        }
    }

    func didBecomeActive(_ app: isolated App) {
        guard let root = app.simulatedRoot else { return }
        root.showCurrentScreen()
        root.startPlayback()
    }

    func didEnterBackground(_ app: isolated App) {
        guard let root = app.simulatedRoot else { return }
        for screen in root.screens { screen.hide() }
        save(app, root)
        if root.isPlaying, root.backgroundTask == nil, let playback = profile.playback {
            beginBackgroundTask(app, root: root, lasting: playback.backgroundLength, endsPlayback: true)
        }
    }

    func willEnterForeground(_ app: isolated App) {
        guard let root = app.simulatedRoot, let task = root.backgroundTask else { return }
        root.backgroundTask = nil
        try? app.endBackgroundTask(task)
    }

    func willTerminate(_ app: isolated App) {
        guard let root = app.simulatedRoot else { return }
        save(app, root)
    }

    func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        let root = app.simulatedRoot
        context.journal.recordDelegateWarning(
            warning.time, app: app.identifier, controllers: root?.controllerCount ?? 0, observers: warningObservers.count
        )
        root?.currentWarning = warning.time
        root?.trimCacheForWarning()
    }

    // MARK: Parts

    private func save(_ app: isolated App, _ root: AppRootController) {
        let state = root.savedState
        do {
            try app.saveState(state)
            context.journal.recordSave(of: app.identifier, state)
        } catch {
            context.journal.recordError("\(app.identifier) could not save its state: \(error)")
        }
    }

    private func addWarningObservers(_ app: isolated App, launch: Int) {
        let journal = context.journal
        let identifier = app.identifier
        warningObservers = (1 ... Self.warningObserverCount).map { number in
            app.notificationCenter.addObserver(forName: .didReceiveMemoryWarning) { _, notification in
                guard case .memoryWarning(let warning) = notification.payload else { return }
                journal.recordObserverWarning(warning.time, app: identifier, observer: number)
            }
        }
    }

    /// Opens a background task for `length` (a fetch, or playback going on in the background);
    /// when it ends, or when the system says its time is up, the task is closed and the app
    /// suspends.
    private func beginBackgroundTask(_ app: isolated App, root: AppRootController, lasting length: Duration, endsPlayback: Bool) {
        let launch = root.launch
        let task: BackgroundTaskIdentifier
        do {
            task = try app.beginBackgroundTask { app in
                app.finishSimulatedBackgroundWork(launch: launch, task: nil, endsPlayback: endsPlayback)
            }
        } catch where error.code == .invalidTransition {
            // The system gives no more time: the app is being terminated (as inside willTerminate).
            return
        } catch {
            context.journal.recordError("\(app.identifier) could not begin a background task: \(error)")
            return
        }
        root.backgroundTask = task
        Task.detached {
            try? await Task.sleep(for: length)
            await app.finishSimulatedBackgroundWork(launch: launch, task: task, endsPlayback: endsPlayback)
        }
    }
}
