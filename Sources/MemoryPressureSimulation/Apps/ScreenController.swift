import MemoryPressure

/// One screen of a simulated app: a view with a backing store, rendered when the screen is shown
/// and re-rendered on its next showing after the system released it.
final class ScreenController: ViewController {
    /// The controller's number in its app, for warning receipts (the root is 0).
    let number: Int
    /// The pixels of the screen's view, or nil for a screen without one.
    let store: BackingStore?

    init(number: Int, store: BackingStore?) {
        self.number = number
        self.store = store
        super.init()
    }

    override func loadView() -> View {
        View(backingStore: store)
    }

    /// Puts the screen on show and renders it.
    func show() throws(MemoryPressureError) {
        isVisible = true
        store?.isVisible = true
        _ = view
        try render()
    }

    /// Takes the screen off show; its store may be released under pressure.
    func hide() {
        isVisible = false
        store?.isVisible = false
    }

    /// Draws the screen, rendering its store again if it was released.
    func render() throws(MemoryPressureError) {
        _ = try store?.withPixels { $0.count }
    }

    override func didReceiveMemoryWarning() {
        super.didReceiveMemoryWarning()
        (parent as? AppRootController)?.recordWarning(controller: number)
    }
}
