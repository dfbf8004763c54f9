// The example of the "Hosting tenants" article (Sources/MemoryPressure/MemoryPressure.docc/
// HostingTenants.md), compiled and run by HostingTenantsTests; the article shows the lines between
// the markers, and a test checks that the two are the same.

import MemoryPressure

// example begins
/// One tenant's code. Everything here runs isolated to the tenant's app, one call at a time, so it
/// needs no locks: its session, its cache of pages, its buffers.
final class TenantDelegate: AppDelegate {
    /// What the tenant saves on entering the background and gets back on its next launch.
    struct Session: Codable, Sendable {
        var requests = 0
    }

    let system: MemorySystem
    var session = Session()
    /// Why the tenant's previous instance ended, when it was terminated.
    var previousTermination: TerminationReason?
    /// Pages kept between requests; their bytes live in the tenant's heap.
    var pages: PurgeableCache<String, HeapBuffer>?

    init(system: MemorySystem) {
        self.system = system
    }

    func didFinishLaunching(_ app: isolated App, options: LaunchOptions) {
        if let saved = try? options.restoredState(as: Session.self) { session = saved }
        previousTermination = options.previousTermination
        pages = try? PurgeableCache(
            name: "pages", owner: app.identifier, category: .rebuildableObjects, payloadLocation: .appHeap
        )
        if let pages { system.register(pages) }
    }

    func didEnterBackground(_ app: isolated App) {
        // A suspended tenant may be terminated without a word: save now.
        try? app.saveState(session)
    }

    /// Serves one request: a page from the cache, or a new one made in the tenant's heap. The cache
    /// holds the buffer, so the bytes stay counted to the tenant until the page is purged or the
    /// tenant is terminated; a buffer nobody holds frees its bytes at once.
    func handle(_ path: String, in app: isolated App) throws -> Int {
        session.requests += 1
        if let page = pages?.value(forKey: path) { return page.byteCount }
        let page = try system.heap(for: app.identifier).allocate(byteCount: 256 << 10)
        try pages?.setValue(page, forKey: path, cost: page.byteCount)
        return page.byteCount
    }
}

/// The service's side: tenants registered as apps, requests sent to them, and tenants moved
/// between the foreground and the background as they get busy and idle.
struct TenantHost {
    let system: MemorySystem

    /// Registers a tenant with limits of its own: warned past 24 MiB, terminated past 32 MiB.
    func add(_ name: String) throws -> App {
        let limits = AppMemoryLimits(foreground: try .init(softBytes: 24 << 20, hardBytes: 32 << 20))
        return try system.register(try AppIdentifier(name), limits: limits) { [system] in
            TenantDelegate(system: system)
        }
    }

    /// Sends a request to `tenant`, bringing it forward first: launched again if the system
    /// terminated it (its saved session comes back), resumed if it is in the background.
    func serve(_ path: String, on tenant: App) async throws -> Int {
        await bringForward(tenant)
        return try await tenant.perform { app in
            try app.delegate(as: TenantDelegate.self)?.handle(path, in: app) ?? 0
        }
    }

    /// Sends an idle tenant to the background, where the system may purge and terminate it.
    func idle(_ tenant: App) async {
        do {
            try await tenant.enterBackground()
        } catch {
            // `invalidTransition`: not in the foreground any more, because the system terminated it
            // meanwhile (for pressure or its hard limit) or is terminating it. Nothing to do: the
            // next request launches it again.
        }
    }

    private func bringForward(_ tenant: App) async {
        // The system may terminate the tenant between one look and the next, and the move then
        // throws `invalidTransition`: look again. If it still does not run, `perform` says so.
        for _ in 0..<3 where tenant.state != .active {
            try? await move(tenant)
        }
    }

    private func move(_ tenant: App) async throws(MemoryPressureError) {
        switch tenant.state {
        case .notRunning: try await tenant.launch()
        case .background, .suspended: try await tenant.enterForeground()
        case .inactive: try await tenant.activate()
        case .active: break
        }
    }
}
// example ends
