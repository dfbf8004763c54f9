/// How much an app matters to the service when memory runs short: its importance band, like
/// jetsam's priority bands on iOS and the `oom_score_adj` classes on Android.
///
/// At the critical level the reclamation ladder terminates the least important band first: every
/// suspended app of the band, then every background app of it, largest footprint first, before it
/// turns to the next band. An app's band never puts it at risk in the foreground: the active (or
/// inactive) app is never terminated for system pressure, whatever its band.
///
/// The bands, from least to most important, which is also their order as `Comparable` values:
/// ``cached``, ``service``, ``perceptible``, ``foreground``. An app gets its band from
/// ``AppConfiguration/importance`` (``service`` by default).
///
/// Codable as its name, such as `"perceptible"`.
public enum AppImportance: String, Hashable, Sendable, CaseIterable, Comparable, Codable, CustomStringConvertible {
    /// Kept only so that it starts faster next time: the first to go, as Android's cached processes
    /// are.
    case cached
    /// Doing work the service relies on but nobody waits on: the default band.
    case service
    /// Doing work someone notices, audible or visible: a music app playing in the background, a
    /// download whose progress is on screen.
    case perceptible
    /// As important as the app in the foreground, even while it is not: terminated only when every
    /// other band has gone.
    case foreground

    /// The band's place from least to most important: 0 for ``cached`` to 3 for ``foreground``.
    private var rank: Int {
        switch self {
        case .cached: 0
        case .service: 1
        case .perceptible: 2
        case .foreground: 3
        }
    }

    /// Whether `lhs` is less important than `rhs`: ``cached`` < ``service`` < ``perceptible`` <
    /// ``foreground``.
    public static func < (lhs: AppImportance, rhs: AppImportance) -> Bool {
        lhs.rank < rhs.rank
    }

    /// The band's name, such as `perceptible`.
    public var description: String { rawValue }

    /// The `oom_score_adj` a child process of this band should have in `state`, so that the
    /// kernel's OOM killer, if it ever fires, picks victims in the order the ladder terminates them.
    ///
    /// - In the foreground (``AppState/active``, ``AppState/inactive``) and when not running: 0, the
    ///   kernel's default: the ladder never terminates these for pressure.
    /// - In the background or suspended: `900 - 100 * r`, where the rank `r` is
    ///   `2 * band + (state == .background ? 1 : 0)` and `band` counts from 0 for ``cached`` to 3
    ///   for ``foreground``. So a suspended ``cached`` app gets 900 (the kernel's first choice),
    ///   a background ``cached`` one 800, a suspended ``service`` one 700, on down to 200 for a
    ///   background ``foreground`` one: the ladder's order, least important band first and
    ///   suspended before background within a band. Every value is in -1000 through 1000.
    ///
    /// The kernel scores a process by its memory plus `oom_score_adj` thousandths of the memory it
    /// may use, and kills the highest score: among equal values the largest process, as the ladder
    /// does; across values each step of 100 weighs as much as a tenth of that memory, so a more
    /// important process goes first only when it is larger by more than a tenth of it for each step
    /// between them.
    package func oomScoreAdjustment(in state: AppState) -> Int {
        switch state {
        case .active, .inactive, .notRunning:
            return 0
        case .background, .suspended:
            let rank = rank * 2 + (state == .background ? 1 : 0)
            return 900 - rank * 100
        }
    }
}
