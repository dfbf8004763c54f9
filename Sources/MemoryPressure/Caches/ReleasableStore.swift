/// Memory a view owns that can be released under pressure and rebuilt on its next use, such as a
/// backing store of pixels.
public protocol ReleasableStore: AnyObject, Sendable {
    /// Bytes the store holds now: 0 once released and until it is rebuilt.
    var byteCount: Int { get }

    /// Whether the view that owns the store is on screen: a visible store is kept on warnings and at
    /// critical pressure (it is released on entering the background all the same). A view
    /// controller sets it for the stores of its view tree as its own `isVisible` changes; the
    /// system reads it from outside the app's run loop.
    var isVisible: Bool { get set }

    /// Releases the store's bytes, returning how many were released (0 when already released).
    @discardableResult
    func release() -> Int
}
