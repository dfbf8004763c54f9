/// Whether the reclamation ladder compresses suspended apps' memory before it terminates any, as
/// iOS's compressor and Android's app compaction do.
///
/// Under critical pressure, after the purge and before any termination, the ladder pages the
/// memory of suspended apps, then of background apps that keep running (a process app's child, an
/// in-process app's large heap buffers), out to a zram swap device, where it is kept compressed,
/// least important band first and largest first, measuring after each, and terminates only if that
/// was not enough. An app compressed is not told: it wakes with its memory as it left it, paying the
/// page-in as it touches it. Compressed memory still counts in the footprint, at what it costs
/// compressed (see <doc:TheReclamationLadder>).
///
/// This type grows as the library does: new settings are new static members.
public struct Compression: Hashable, Sendable, CustomStringConvertible {
    private enum Mode: Hashable, Sendable {
        case automatic, off
    }

    private let mode: Mode

    /// On where a zram swap device is on; elsewhere off, and the log says why once. The default.
    public static let automatic = Compression(mode: .automatic)
    /// Never: the ladder goes from its purge to its terminations.
    public static let off = Compression(mode: .off)

    /// Whether the ladder may compress at all.
    var mayCompress: Bool { mode == .automatic }

    /// `automatic` or `off`.
    public var description: String {
        switch mode {
        case .automatic: "automatic"
        case .off: "off"
        }
    }
}
