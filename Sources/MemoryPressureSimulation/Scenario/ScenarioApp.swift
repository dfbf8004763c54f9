import MemoryPressure

/// An app of a scenario: its name and what kind of app it is.
package struct ScenarioApp: Hashable, Sendable {
    /// The name the app is registered under.
    package var name: AppIdentifier
    /// What kind of app it is.
    package var profile: AppProfile

    /// An app named `name` of `profile`.
    package init(name: AppIdentifier, profile: AppProfile) {
        self.name = name
        self.profile = profile
    }
}
