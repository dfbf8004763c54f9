import MemoryPressure

/// What the simulation asks of a simulated app, run on the app's run loop like any of its code.
/// Each does nothing for an app that is not (or no longer) running the simulation's code.
extension App {
    /// The root controller of a simulated app's current launch.
    var simulatedRoot: AppRootController? {
        rootViewController as? AppRootController
    }

    /// `seconds` of the user's activity, when the app is active; returns whether it was.
    func simulateActivity(seconds: Double) -> Bool {
        guard state == .active, let root = simulatedRoot else { return false }
        root.performActivity(seconds: seconds)
        return true
    }

    /// Allocates `bytes` more for a spike, when the app is running; returns whether it could.
    func simulateSpike(bytes: Int) -> Bool {
        guard state.isRunning, let root = simulatedRoot else { return false }
        return root.allocateSpike(bytes)
    }

    /// Frees a spike's memory.
    func endSimulatedSpike() {
        simulatedRoot?.releaseSpike()
    }

    /// Ends launch `launch`'s background work: closes its background task `task` (or the open one,
    /// for nil), so the app suspends if it is in the background, and for playback stops the audio.
    func finishSimulatedBackgroundWork(launch: Int, task expected: BackgroundTaskIdentifier?, endsPlayback: Bool) {
        guard let root = simulatedRoot, root.launch == launch, let task = root.backgroundTask,
              expected == nil || expected == task else { return }
        root.backgroundTask = nil
        if endsPlayback, state == .background { root.stopPlayback() }
        try? endBackgroundTask(task)
    }
}
