/// A view: a node of a view hierarchy that may own a backing store (its rendered pixels).
open class View {
    /// The memory the view renders into, when it has one; released under pressure and rebuilt on
    /// the next draw.
    public var backingStore: (any ReleasableStore)?
    /// The views inside this one.
    public private(set) var subviews: [View] = []

    /// A view owning `backingStore`, when given.
    public init(backingStore: (any ReleasableStore)? = nil) {
        self.backingStore = backingStore
    }

    /// Adds `view` on top of the subviews.
    public func addSubview(_ view: View) {
        subviews.append(view)
    }

    /// Marks the backing stores of this view and every view inside it visible or not.
    package func markBackingStores(visible: Bool) {
        backingStore?.isVisible = visible
        for view in subviews { view.markBackingStores(visible: visible) }
    }

    /// Releases the backing stores of this view and every view inside it; returns the bytes released.
    @discardableResult
    package func releaseBackingStores() -> Int {
        subviews.reduce(backingStore?.release() ?? 0) { $0 + $1.releaseBackingStores() }
    }
}
