/// What a simulated app saves on entering the background (and in `willTerminate`), and checks when
/// it is launched again: a terminated app must find exactly what it saved last. A process app's
/// child (`mempressure app-process`) saves one too, through its client, as JSON.
package struct SavedState: Codable, Hashable, Sendable {
    /// The app that saved it.
    package var app: String
    /// The launch that saved it (1 for the first).
    package var launch: Int
    /// The user's activity so far, in ticks, across launches.
    var activity: Int
    /// The screen on show.
    var screen: Int
    /// The next cache key: how many entries the app has ever made.
    var cacheEntries: Int

    /// A state with these figures.
    package init(app: String, launch: Int, activity: Int, screen: Int, cacheEntries: Int) {
        self.app = app
        self.launch = launch
        self.activity = activity
        self.screen = screen
        self.cacheEntries = cacheEntries
    }
}
