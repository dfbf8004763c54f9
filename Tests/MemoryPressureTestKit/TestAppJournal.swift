import MemoryPressure

/// What the test apps did, by app: the entries their callbacks made, in order, and the options of
/// each launch. Apps made afresh for each launch share one journal, which spans their launches.
public final class TestAppJournal: Sendable {
    private struct Record: Sendable {
        var entries: [String] = []
        var launches: [LaunchOptions] = []
    }

    private let records = SharedBox<[AppIdentifier: Record]>([:])

    /// An empty journal.
    public init() {}

    /// Adds `entry` to what `app` did.
    public func record(_ entry: String, of app: AppIdentifier) {
        records.update { $0[app, default: Record()].entries.append(entry) }
    }

    /// Notes a launch of `app` with `options`.
    public func recordLaunch(of app: AppIdentifier, options: LaunchOptions) {
        records.update { $0[app, default: Record()].launches.append(options) }
    }

    /// The entries of the app named `name`, in order.
    public func callbacks(of name: String) -> [String] {
        records.value[.test(name)]?.entries ?? []
    }

    /// The state each launch of `app` restored, in launch order: nil for a launch that restored
    /// none, or one that is no `State`.
    public func restoredStates<State: Decodable>(of app: AppIdentifier, as type: State.Type) -> [State?] {
        (records.value[app]?.launches ?? []).map { try? $0.restoredState(as: type) }
    }
}
