import MemoryPressure

/// Hands the foreground app a slice of the user's activity every interval, so it grows its cache,
/// its screens and its own data at its profile's rates in real time.
struct ActivityTicker: Sendable {
    let interval: Duration
    let driver: SimulationDriver
    let apps: [AppIdentifier: App]

    /// Ticks until the task is cancelled. Each slice is the time since the last one (at most four
    /// intervals), so a slow tick does not slow the app's growth.
    func run() async {
        let clock = ContinuousClock()
        var last = clock.now
        while !Task.isCancelled {
            try? await Task.sleep(until: last + interval, clock: clock)
            let now = clock.now
            let seconds = min(now - last, interval * 4).inSeconds
            last = now
            if let foreground = driver.foreground, let app = apps[foreground] {
                _ = await app.simulateActivity(seconds: seconds)
            }
        }
    }
}
