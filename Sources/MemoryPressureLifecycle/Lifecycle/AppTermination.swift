import MemoryPressureRuntime

/// One termination of one launch of an app, from the moment its lifecycle decides it (asked for
/// with ``App/beginTermination(reason:from:recordingIn:)``, or by a deadline, an expired background
/// task or a process's exit) to the release of what the launch held.
///
/// The lifecycle makes it as it decides the termination and keeps it until the app's next launch
/// (``App/latestTermination``), so that every call that joins the termination finds this one
/// object. It travels with the termination's `terminated` and `released` events to the app's host
/// (``AppHost/appTerminated(_:_:reason:from:)``, ``AppHost/appReleased(_:_:)``).
///
/// What the host keeps of the termination (the system's record of it) is the host's, of a type the
/// lifecycle does not know: its ``part(orMake:)``. Compared by identity.
package final class AppTermination: Sendable, Equatable {
    /// Resolved once the termination's callbacks end: `willTerminate` returned or overran its
    /// deadline; at once for an app terminated without a callback.
    let callbacksEnded = Completion<AppState>()
    /// The host's part; under the app's lock, the first to be taken after it.
    private let hostPart = LibraryLock<(any AnyObject & Sendable)?>(nil)

    init() {}

    /// Keeps `part` as the host's part of this termination, in place of any kept before.
    func keep(_ part: any AnyObject & Sendable) {
        hostPart.withLock { $0 = part }
    }

    /// The host's part of this termination: the one kept already, or, when there is none (or one of
    /// another type), the one `make` makes, kept from now on.
    package func part<Part: AnyObject & Sendable>(orMake make: () -> Part) -> Part {
        hostPart.withLock { kept in
            if let part = kept as? Part { return part }
            let part = make()
            kept = part
            return part
        }
    }

    /// One termination is equal only to itself.
    package static func == (lhs: AppTermination, rhs: AppTermination) -> Bool {
        lhs === rhs
    }
}
