/// Where a cache's values keep their bytes, which decides how its cost counts to the owning app's
/// footprint.
public enum PayloadLocation: Hashable, Sendable {
    /// In the owning app's ``AppHeap``: already counted in the heap's arena bytes.
    case appHeap
    /// Anywhere else (the process's shared arenas): counted by the entries' declared cost.
    case elsewhere
}
