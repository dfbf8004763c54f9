import MemoryPressure

/// An app of a scenario: its name and what kind of app it is.
public struct ScenarioApp: Hashable, Sendable {
    /// The name the app is registered under.
    public var name: AppIdentifier
    /// What kind of app it is.
    public var profile: AppProfile

    /// An app named `name` of `profile`.
    public init(name: AppIdentifier, profile: AppProfile) {
        self.name = name
        self.profile = profile
    }
}
