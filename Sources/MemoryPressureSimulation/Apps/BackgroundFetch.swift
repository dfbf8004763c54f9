import MemoryPressure

/// The event that launches an app into the background for a fetch: its name carries how long the
/// fetch works (`fetch 1500ms`), as a push payload would.
struct BackgroundFetch: Hashable, Sendable {
    /// How long the fetch keeps its background task open.
    var work: Duration

    static let prefix = "fetch "

    /// The launch options for this fetch.
    var launchOptions: LaunchOptions {
        LaunchOptions(reason: .backgroundEvent(Self.prefix + "\(Int64((work / .milliseconds(1)).rounded()))ms"))
    }

    /// The fetch a launch was for, or nil when it was not a fetch.
    init?(_ options: LaunchOptions) {
        guard case .backgroundEvent(let name) = options.reason, name.hasPrefix(Self.prefix),
              let work = try? DurationParser.parse(String(name.dropFirst(Self.prefix.count)))
        else { return nil }
        self.work = work
    }

    init(work: Duration) {
        self.work = work
    }
}
