import MemoryPressure

/// Discardable content for tests, counting its accesses with the library's counter.
final class TestContent: DiscardableContent {
    let id: Int
    private let access = ContentAccessCount()

    init(id: Int) {
        self.id = id
    }

    func beginContentAccess() -> Bool { access.begin() }
    func endContentAccess() { access.end() }
    func discardContentIfPossible() { access.discardIfPossible() }
    var isContentDiscarded: Bool { access.isDiscarded }
    var openAccesses: Int { access.openAccesses }
}
