/// Memory a view owns that can be released under pressure and rebuilt on its next use, such as a
/// backing store of pixels.
public protocol ReleasableStore: AnyObject, Sendable {
    /// Bytes the store holds now: 0 once released and until it is rebuilt.
    var byteCount: Int { get }

    /// Whether the view that owns the store is on screen: a visible store is kept on warnings.
    /// False unless the store says otherwise.
    var isVisible: Bool { get }

    /// Releases the store's bytes, returning how many were released (0 when already released).
    @discardableResult
    func release() -> Int
}

extension ReleasableStore {
    public var isVisible: Bool { false }
}
