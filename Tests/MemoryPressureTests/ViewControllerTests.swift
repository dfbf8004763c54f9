@testable import MemoryPressure
@testable import MemoryPressureRuntime
@testable import MemoryPressureMeasurement
@testable import MemoryPressureMonitor
@testable import MemoryPressureCaches
@testable import MemoryPressureLifecycle
@testable import MemoryPressureProcesses
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ViewControllerTests {
    final class StoreController: ViewController {
        let store: FakeStore
        private(set) var loads = 0

        init(byteCount: Int) {
            store = FakeStore(byteCount: byteCount)
        }

        override func loadView() -> View {
            loads += 1
            let view = View()
            view.addSubview(View(backingStore: store))
            return view
        }
    }

    @Test func theViewLoadsLazilyAndOnce() {
        let controller = StoreController(byteCount: 64)
        #expect(!controller.isViewLoaded)
        _ = controller.view
        _ = controller.view
        #expect(controller.isViewLoaded)
        #expect(controller.loads == 1)
    }

    @Test func childrenFormATreeWithOneParentEach() {
        let root = ViewController()
        let first = ViewController()
        let second = ViewController()
        let leaf = ViewController()
        root.addChild(first)
        root.addChild(second)
        first.addChild(leaf)
        #expect(root.children.map(ObjectIdentifier.init) == [first, second].map(ObjectIdentifier.init))
        #expect(leaf.parent === first)
        second.addChild(leaf)
        #expect(first.children.isEmpty)
        #expect(leaf.parent === second)
        leaf.removeFromParent()
        #expect(leaf.parent == nil)
        #expect(second.children.isEmpty)
    }

    @Test func theDefaultWarningResponseReleasesOnlyHiddenViewsBackingStores() {
        let hidden = StoreController(byteCount: 4096)
        let visible = StoreController(byteCount: 8192)
        let unloaded = StoreController(byteCount: 1024)
        visible.isVisible = true
        _ = hidden.view
        _ = visible.view
        for controller in [hidden, visible, unloaded] {
            controller.didReceiveMemoryWarning()
        }
        #expect(hidden.store.byteCount == 0)
        #expect(visible.store.byteCount == 8192)
        #expect(unloaded.store.byteCount == 1024)
        #expect(!unloaded.isViewLoaded)
    }

    @Test func aControllersVisibilityIsMarkedOnItsViewTreesStoresForTheSystemsPurges() {
        let controller = StoreController(byteCount: 4096)
        controller.isVisible = true
        let subview = View(backingStore: FakeStore(byteCount: 16))
        controller.view.addSubview(subview)
        #expect(controller.store.isVisible)
        controller.isVisible = false
        #expect(!controller.store.isVisible)
        #expect(subview.backingStore?.isVisible == false)
        controller.isVisible = true
        #expect(subview.backingStore?.isVisible == true)
    }

    @Test func releasingBackingStoresReportsTheBytesReleased() {
        let root = View(backingStore: FakeStore(byteCount: 100))
        root.addSubview(View(backingStore: FakeStore(byteCount: 20)))
        root.addSubview(View())
        #expect(root.releaseBackingStores() == 120)
        #expect(root.releaseBackingStores() == 0)
    }

    @Test func terminationReleasesTheAppsViewControllers() async throws {
        let app = try makeApp("views") { delegate in
            delegate.onDidFinishLaunching = { app, _ in app.rootViewController = ViewController() }
        }
        try await app.launch()
        #expect(await hasRootViewController(app))
        try await app.terminate(reason: .explicit)
        #expect(await !hasRootViewController(app))
    }

    private func hasRootViewController(_ app: isolated App) -> Bool {
        app.rootViewController != nil
    }

    @Test func aViewOrStoreAddedToAVisibleControllersTreeIsMarkedVisible() {
        let controller = ViewController()
        controller.isVisible = true
        let store = FakeStore(byteCount: 10)
        // Added after the controller became visible, the store stayed hidden, and a warning-level
        // purge released a store that was on screen.
        controller.view.addSubview(View(backingStore: store))
        #expect(store.isVisible)
        let later = FakeStore(byteCount: 20)
        let view = View()
        controller.view.addSubview(view)
        view.backingStore = later
        #expect(later.isVisible)
        controller.didReceiveMemoryWarning()
        #expect(store.byteCount == 10 && later.byteCount == 20)
        // Hidden again, the controller's whole tree is, and a warning releases it.
        controller.isVisible = false
        #expect(!store.isVisible && !later.isVisible)
        controller.didReceiveMemoryWarning()
        #expect(store.byteCount == 0 && later.byteCount == 0)
    }

    @Test func aSubviewHasOneSuperviewAndIsMovedNotCopied() {
        let first = View()
        let second = View()
        let child = View(backingStore: FakeStore(byteCount: 8))
        first.addSubview(child)
        first.addSubview(child)
        #expect(first.subviews.count == 1 && child.superview === first)
        second.addSubview(child)
        #expect(first.subviews.isEmpty && second.subviews.count == 1 && child.superview === second)
        child.removeFromSuperview()
        #expect(second.subviews.isEmpty && child.superview == nil)
    }

    @Test func storesWhoseReleasesAddUpPastIntMaxReleaseWithoutATrap() {
        let controller = ViewController()
        controller.view.addSubview(View(backingStore: FakeStore(byteCount: .max)))
        controller.view.addSubview(View(backingStore: FakeStore(byteCount: .max)))
        // The sum of the bytes released overflowed.
        controller.didReceiveMemoryWarning()
        #expect(controller.view.subviews.allSatisfy { $0.backingStore?.byteCount == 0 })
    }
}

