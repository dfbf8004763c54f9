#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MemoryPressureLifecycle
@_spi(Benchmarks) import MemoryPressureRuntime
import MemoryPressureWire

/// A process app's code: starts its child as the app launches and carries each callback to it
/// through its channel, within the callback's deadline, on the app's run loop.
///
/// A callback returns once the child has answered (the client channel), or at once (the other
/// channels, and none). A child that does not answer within the deadline is the same as an
/// in-process app's callback overrunning it: the app is terminated, and its child killed.
package final class ProcessAppDelegate: AppDelegate {
    private let processes: ProcessApps

    package init(processes: ProcessApps) {
        self.processes = processes
    }

    package func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        do {
            let running = try processes.start(app.identifier, in: app.systemState) { [weak app] state throws(MemoryPressureError) in
                try app?.saveArchivedState(state)
            }
            // The options first: the client keeps them for the launch callbacks; a client of
            // protocol 1 answers them without calling its delegate.
            _ = running.channel?.call(.launchOptions(processes.clientLaunchOptions(for: app.identifier, options)), timeout: app.configuration.launchDeadline)
            _ = running.channel?.call(.willFinishLaunching, timeout: app.configuration.launchDeadline)
        } catch {
            processes.couldNotStart(app.identifier, error)
            app.endAtOnce(reason: .processExited)
        }
    }

    package func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        call(.didFinishLaunching, app, within: app.configuration.launchDeadline)
    }

    package func didBecomeActive(_ app: isolated App) {
        call(.didBecomeActive, app, within: app.configuration.backgroundDeadline)
    }

    package func willResignActive(_ app: isolated App) {
        call(.willResignActive, app, within: app.configuration.backgroundDeadline)
    }

    package func didEnterBackground(_ app: isolated App) {
        call(.didEnterBackground, app, within: app.configuration.backgroundDeadline)
        holdSuspensionForTheLaunchGrace(app)
    }

    /// A child launched into the background without the client channel runs for its launch grace
    /// before it may be suspended (a client child's launch is done once it has answered
    /// `didFinishLaunching`): the app's suspension is held, once per launch, and released when the
    /// grace has passed on the app's clock. A termination meanwhile ends the hold with the launch.
    private func holdSuspensionForTheLaunchGrace(_ app: isolated App) {
        guard app.launchOptions.reason.launchesInBackground,
              let (running, options) = processes.runningWithOptions(app.identifier),
              options.channel != .client, options.launchGrace > .zero, running.takeLaunchGrace(),
              let hold = app.holdSuspension()
        else { return }
        _ = app.threads.timers.schedule(at: app.clock.now + options.launchGrace) { [weak app] in
            app?.release(hold)
        }
    }

    package func willEnterForeground(_ app: isolated App) {
        call(.willEnterForeground, app, within: app.configuration.backgroundDeadline)
    }

    /// `willTerminate` through the channel, then `SIGTERM`, then waits for the child to exit until
    /// just before the termination deadline; the `SIGKILL` follows as the app is terminated.
    package func willTerminate(_ app: isolated App) {
        let deadline = ContinuousClock.now + app.configuration.terminationDeadline
        processes.beginTerminating(app.identifier)
        guard let running = processes.running(app.identifier) else { return }
        if running.channel?.call(.willTerminate, timeout: app.configuration.terminationDeadline) == .answered {
            // A client child exits once it has answered willTerminate; a moment to do so spares it
            // the SIGTERM.
            if running.child.waitForExit(timeout: min(.milliseconds(100), max(.zero, deadline - .now))) != nil { return }
        }
        do {
            try running.child.signal(SIGTERM)
        } catch {
            return  // It has ended already.
        }
        // Returning a little before the deadline ends the app for its own reason, not `deadline`.
        let margin = min(.milliseconds(20), app.configuration.terminationDeadline / 10)
        _ = running.child.waitForExit(timeout: max(.zero, deadline - margin - .now))
    }

    package func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        processes.warn(app.identifier, level: warning.level)
    }

    private func call(_ callback: ClientCallback, _ app: isolated App, within timeout: Duration) {
        _ = processes.running(app.identifier)?.channel?.call(callback, timeout: timeout)
    }
}
