import MemoryPressure

/// An app's code for tests: records the name of every callback it runs in `log`, in order, then
/// runs the hook a test set for that callback, if any.
///
/// Give apps made afresh for each launch one log to share, so that it spans their launches.
public class RecordingDelegate: AppDelegate {
    /// The callbacks run so far, by name (`"willFinishLaunching"`, `"didEnterBackground"`, ...).
    public let log: SharedLog<String>
    /// Runs in `willFinishLaunching`, after the callback is recorded; and so on for the others.
    public var onWillFinishLaunching: (@Sendable (isolated App, LaunchOptions) -> Void)?
    public var onDidFinishLaunching: (@Sendable (isolated App, LaunchOptions) -> Void)?
    public var onDidEnterBackground: (@Sendable (isolated App) -> Void)?
    public var onWillTerminate: (@Sendable (isolated App) -> Void)?
    public var onMemoryWarning: (@Sendable (isolated App, MemoryWarning) -> Void)?

    /// A delegate recording in `log`, with no hooks.
    public init(log: SharedLog<String> = SharedLog()) {
        self.log = log
    }

    public func willFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        log.append("willFinishLaunching")
        onWillFinishLaunching?(app, options)
    }

    public func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        log.append("didFinishLaunching")
        onDidFinishLaunching?(app, options)
    }

    public func didBecomeActive(_ app: isolated App) {
        log.append("didBecomeActive")
    }

    public func willResignActive(_ app: isolated App) {
        log.append("willResignActive")
    }

    public func didEnterBackground(_ app: isolated App) {
        log.append("didEnterBackground")
        onDidEnterBackground?(app)
    }

    public func willEnterForeground(_ app: isolated App) {
        log.append("willEnterForeground")
    }

    public func willTerminate(_ app: isolated App) {
        log.append("willTerminate")
        onWillTerminate?(app)
    }

    public func didReceiveMemoryWarning(_ app: isolated App, warning: MemoryWarning) {
        log.append("didReceiveMemoryWarning")
        onMemoryWarning?(app, warning)
    }
}

/// A recording delegate whose app fills its own heap with `bytes` of ballast when it finishes
/// launching (1 MiB buffers, every page written, so the bytes are resident) and holds it until it
/// is terminated: made afresh for each launch, the delegate and its ballast go with the app's run.
public final class BallastDelegate: RecordingDelegate {
    /// The ballast's size.
    public let bytes: Int
    private let heap: @Sendable (AppIdentifier) throws -> AppHeap
    private let onFailure: @Sendable (String) -> Void
    private var ballast: [HeapBuffer] = []

    /// A delegate whose app holds `bytes` of ballast in the heap `heap` returns for it, recording
    /// in `log`; `onFailure` is told when the ballast cannot be made (a callback cannot throw).
    public init(
        bytes: Int,
        heap: @escaping @Sendable (AppIdentifier) throws -> AppHeap,
        log: SharedLog<String> = SharedLog(),
        onFailure: @escaping @Sendable (String) -> Void
    ) {
        self.bytes = bytes
        self.heap = heap
        self.onFailure = onFailure
        super.init(log: log)
    }

    override public func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        super.didFinishLaunching(app, options: options)
        guard bytes > 0 else { return }
        do {
            ballast = try residentBuffers(in: heap(app.identifier), totalBytes: bytes)
        } catch {
            onFailure("ballast for \(app.identifier): \(error)")
        }
    }
}

/// An app with no code of its own: a test or benchmark fills its caches or counts its bytes.
public struct IdleDelegate: AppDelegate {
    public init() {}
}
