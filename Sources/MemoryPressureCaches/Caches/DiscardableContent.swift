import Synchronization
import MemoryPressureRuntime

/// A value whose content can be thrown away when nobody is using it, as `NSDiscardableContent`.
///
/// Callers bracket every use with ``beginContentAccess()`` and ``endContentAccess()``; the accesses
/// are counted, and a cache never purges such a value while any access is open. A purge asks the
/// value to ``discardContentIfPossible()`` and removes it only when ``isContentDiscarded`` is then
/// true. ``ContentAccessCount`` does the counting for conforming types.
public protocol DiscardableContent: AnyObject, Sendable {
    /// Opens an access, so that no purge discards the content until ``endContentAccess()``.
    ///
    /// - Returns: Whether an access was opened: false (opening nothing) when the content was
    ///   already discarded.
    func beginContentAccess() -> Bool
    /// Closes an access opened by a successful ``beginContentAccess()``.
    func endContentAccess()
    /// Discards the content if no access is open. A purging cache calls it outside its lock, so it
    /// may use the cache.
    func discardContentIfPossible()
    /// Whether the content has been discarded.
    var isContentDiscarded: Bool { get }
}

/// The access count and discarded flag of a ``DiscardableContent`` value, thread-safe.
public final class ContentAccessCount: Sendable {
    private struct State {
        var openAccesses = 0
        var isDiscarded = false
    }

    private let state = LibraryLock(State())

    /// A count with no access open and the content not discarded.
    public init() {}

    /// Opens an access unless the content was discarded.
    ///
    /// - Returns: Whether an access was opened.
    public func begin() -> Bool {
        state.withLock { state in
            guard !state.isDiscarded else { return false }
            state.openAccesses += 1
            return true
        }
    }

    /// Closes an access; closing one that was never opened is a programming error.
    public func end() {
        state.withLock { state in
            precondition(state.openAccesses > 0, "endContentAccess() without a matching beginContentAccess()")
            state.openAccesses -= 1
        }
    }

    /// Marks the content discarded if no access is open and it was not already, then calls
    /// `discard`. From the mark on, ``begin()`` opens no access, so nobody reads the content while
    /// `discard` frees it.
    ///
    /// - Parameter discard: Frees the content; called outside the count's lock, so it may use the
    ///   count (``isDiscarded`` reads true there) and anything that uses it.
    /// - Returns: Whether the content was discarded by this call.
    @discardableResult
    public func discardIfPossible(_ discard: () -> Void = {}) -> Bool {
        let discards = state.withLock { state in
            guard state.openAccesses == 0, !state.isDiscarded else { return false }
            state.isDiscarded = true
            return true
        }
        if discards { callOut(discard) }
        return discards
    }

    /// Whether the content has been discarded.
    public var isDiscarded: Bool { state.withLock { $0.isDiscarded } }

    /// The number of accesses open now.
    public var openAccesses: Int { state.withLock { $0.openAccesses } }
}
