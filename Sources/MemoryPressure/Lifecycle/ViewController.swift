/// A view controller, as UIKit's: a node of the app's view-controller tree that loads its view
/// lazily and gives memory back on a memory warning.
///
/// View controllers belong to one app and live in its isolation domain (reached from
/// `App.rootViewController`, or created in its callbacks): they are not `Sendable` and never need to be.
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

    /// Makes the controller's view; the default is an empty view.
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

    /// Adds `child` (removing it from its former parent).
    public func addChild(_ child: ViewController) {
        child.removeFromParent()
        children.append(child)
        child.parent = self
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
