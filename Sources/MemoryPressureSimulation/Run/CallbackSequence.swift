import MemoryPressure

/// The order an app's delegate callbacks may come in, as UIKit's: launch, then into the foreground
/// or the background; interruptions; background and back; memory warnings only while launched; and
/// after `willTerminate` nothing until the app has let go of its memory and launches again.
package struct CallbackSequence: Hashable, Sendable {
    /// Where the app is in its sequence.
    package enum Phase: Hashable, Sendable, CustomStringConvertible {
        case notLaunched, launching, launched, active, inactive, background, foregrounding, terminating

        package var description: String {
            switch self {
            case .notLaunched: "not launched"
            case .launching: "launching"
            case .launched: "launched"
            case .active: "active"
            case .inactive: "inactive"
            case .background: "in the background"
            case .foregrounding: "entering the foreground"
            case .terminating: "terminating"
            }
        }
    }

    package private(set) var phase = Phase.notLaunched
    package private(set) var last: LifecycleCallback?

    /// A sequence that has not started: the app has not launched.
    package init() {}

    /// Takes `callback`; returns a description of the problem when it may not come now.
    package mutating func accept(_ callback: LifecycleCallback) -> String? {
        guard let next = Self.phase(after: callback, in: phase) else {
            let after = last.map { "after \($0)" } ?? "first"
            return "\(callback) came \(after) while \(phase)"
        }
        phase = next
        last = callback
        return nil
    }

    /// The app has let go of its memory after a termination: the next callback starts a launch.
    package mutating func released() {
        phase = .notLaunched
        last = nil
    }

    private static func phase(after callback: LifecycleCallback, in phase: Phase) -> Phase? {
        switch (phase, callback) {
        case (.notLaunched, .willFinishLaunching): .launching
        case (.launching, .didFinishLaunching): .launched
        case (.launched, .didBecomeActive), (.inactive, .didBecomeActive), (.foregrounding, .didBecomeActive): .active
        case (.launched, .didEnterBackground), (.inactive, .didEnterBackground): .background
        case (.active, .willResignActive): .inactive
        case (.background, .willEnterForeground): .foregrounding
        case (.notLaunched, _), (.terminating, _): nil
        case (_, .willTerminate): .terminating
        case (_, .didReceiveMemoryWarning): phase
        default: nil
        }
    }
}
