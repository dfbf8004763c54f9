import MemoryPressureCaches
/// A view controller, as UIKit's: a node of the app's view-controller tree that loads its view
/// lazily and gives memory back on a memory warning.
///
/// View controllers belong to one app and live in its isolation domain (reached from
/// ``App/rootViewController``, or created in its callbacks): they are not `Sendable` and never need
/// to be.
open class ViewController {
    /// The controllers this one contains, in the order added.
    public private(set) var children: [ViewController] = []
    /// The controller containing this one.
    public private(set) weak var parent: ViewController?
    /// Whether the view is on screen; the default memory-warning response spares visible views.
    /// Setting it marks the backing stores of the loaded view tree visible or not, so that the
    /// system's purges spare them too.
    public var isVisible = false {
        didSet { loadedView?.markBackingStores(visible: isVisible) }
    }

    private var loadedView: View?

    /// A controller whose view is not loaded yet.
    public init() {}

    /// The controller's view, loaded (`loadView()`, then `viewDidLoad()`) on first use.
    public var view: View {
        if let loadedView {
            return loadedView
        }
        let view = loadView()
        view.markBackingStores(visible: isVisible)
        loadedView = view
        viewDidLoad()
        return view
    }

    /// Whether the view has been loaded.
    public var isViewLoaded: Bool {
        loadedView != nil
    }

    /// Makes the controller's view; the default is an empty view. Called once, on the first use of
    /// ``view``.
    ///
    /// - Returns: The view, with its subviews and backing stores.
    open func loadView() -> View {
        View()
    }

    /// Called once the view is loaded.
    open func viewDidLoad() {}

    /// Called on each memory warning, parents before children. The default releases the backing
    /// stores of the controller's views when they are not visible; overrides that free more should
    /// call it too.
    open func didReceiveMemoryWarning() {
        if !isVisible {
            loadedView?.releaseBackingStores()
        }
    }

    /// Adds `child` (removing it from its former parent), unless it is this controller or one of
    /// its ancestors: that would make the tree a cycle, whose walk by every memory warning never
    /// ends and whose controllers are never released. The tree is then left as it was.
    ///
    /// - Parameter child: The controller to contain; it hears memory warnings after this one.
    /// - Returns: Whether `child` was added: false for this controller or one of its ancestors.
    @discardableResult
    public func addChild(_ child: ViewController) -> Bool {
        var ancestor: ViewController? = self
        while let node = ancestor {
            guard node !== child else { return false }
            ancestor = node.parent
        }
        child.removeFromParent()
        children.append(child)
        child.parent = self
        return true
    }

    /// Removes the controller from its parent.
    public func removeFromParent() {
        parent?.children.removeAll { $0 === self }
        parent = nil
    }

    /// Calls `visit` on this controller and every descendant, parents before children.
    func forEachInTree(_ visit: (ViewController) -> Void) {
        visit(self)
        for child in children {
            child.forEachInTree(visit)
        }
    }
}

/// A view: a node of a view hierarchy that may own a backing store (its rendered pixels).
open class View {
    /// The memory the view renders into, when it has one; released under pressure and rebuilt on
    /// the next draw. A store set here is marked visible or not as the view is (in the loaded tree
    /// of a visible controller, or not).
    public var backingStore: (any ReleasableStore)? {
        didSet { backingStore?.isVisible = isOnScreen }
    }
    /// The views inside this one.
    public private(set) var subviews: [View] = []
    /// The view this one is inside, if any.
    public private(set) weak var superview: View?
    /// Whether the view is in the loaded tree of a visible controller: what its backing store, and
    /// those of views added to it later, are marked.
    private var isOnScreen = false

    /// A view owning `backingStore`, when given.
    ///
    /// - Parameter backingStore: The memory the view renders into, or nil (the default) for none.
    public init(backingStore: (any ReleasableStore)? = nil) {
        self.backingStore = backingStore
    }

    /// Adds `view` on top of the subviews, removing it from its former superview first, as UIKit
    /// does, unless it is this view or has this view inside it: that would make the hierarchy a
    /// cycle, whose walk (marking visibility, releasing backing stores) never ends. The hierarchy
    /// is then left as it was. The backing stores of `view`'s tree are marked visible or not as
    /// this view is.
    ///
    /// - Parameter view: The view to add.
    /// - Returns: Whether `view` was added: false for this view or one that contains it.
    @discardableResult
    public func addSubview(_ view: View) -> Bool {
        guard !view.hasInHierarchy(self) else { return false }
        view.removeFromSuperview()
        subviews.append(view)
        view.superview = self
        view.markBackingStores(visible: isOnScreen)
        return true
    }

    /// Removes the view from its superview; its backing stores keep their marks.
    public func removeFromSuperview() {
        superview?.subviews.removeAll { $0 === self }
        superview = nil
    }

    /// Whether `view` is this view or inside it.
    private func hasInHierarchy(_ view: View) -> Bool {
        self === view || subviews.contains { $0.hasInHierarchy(view) }
    }

    /// Marks the backing stores of this view and every view inside it visible or not.
    package func markBackingStores(visible: Bool) {
        isOnScreen = visible
        backingStore?.isVisible = visible
        for view in subviews { view.markBackingStores(visible: visible) }
    }

    /// Releases the backing stores of this view and every view inside it; returns the bytes
    /// released, at most `Int.max` (a store of the caller's own may say anything).
    @discardableResult
    package func releaseBackingStores() -> Int {
        subviews.reduce(backingStore?.release() ?? 0) { $0.addingClamped($1.releaseBackingStores()) }
    }
}
