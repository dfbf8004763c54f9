import Foundation
import MemoryPressure
import MemoryPressureTestKit
import Testing

/// The "Hosting tenants" article's example, run: requests served, tenants idled and brought back, a
/// tenant held at its hard limit, and one terminated by the system and launched again with its
/// session.
@Suite struct HostingTenantsTests {
    @Test func theArticlesHostServesTenantsThroughTheirLifecycle() async throws {
        let archive = try TemporaryDirectory()
        let system = try MemorySystem(configuration: .test(targetBytes: 1 << 33, archiveIn: archive))
        let host = TenantHost(system: system)
        let tenants = try ["acme", "globex", "initech"].map(host.add)

        for tenant in tenants {
            #expect(try await host.serve("/", on: tenant) == 256 << 10)
            #expect(try await host.serve("/", on: tenant) == 256 << 10)
        }
        #expect(tenants.allSatisfy { $0.state == .active })
        #expect(system.footprint(of: tenants[0].identifier).heapBytes == 256 << 10)

        // Idle tenants suspend (their caches trimmed on the way); a request brings one back.
        for tenant in tenants { await host.idle(tenant) }
        #expect(tenants.allSatisfy { $0.state == .suspended })
        _ = try await host.serve("/about", on: tenants[1])
        #expect(tenants[1].state == .active)

        // Past its hard limit a tenant's allocation is refused, and it is not terminated for it.
        var refusal: MemoryPressureError?
        for page in 0..<200 {
            do {
                _ = try await host.serve("/page/\(page)", on: tenants[1])
            } catch let error as MemoryPressureError {
                refusal = error
                break
            }
        }
        #expect(refusal?.code == .allocationRefused)
        #expect(system.footprint(of: tenants[1].identifier).heapBytes <= 32 << 20)
        #expect(tenants[1].state == .active)

        // The system terminates a suspended tenant; its next request launches it again, with the
        // session it saved and why its previous instance ended.
        try await tenants[0].terminate(reason: .systemPressure)
        _ = try await host.serve("/", on: tenants[0])
        let (requests, previous) = try await tenants[0].perform { app in
            let delegate = app.delegate(as: TenantDelegate.self)
            return (delegate?.session.requests ?? 0, delegate?.previousTermination)
        }
        #expect(requests == 3)
        #expect(previous == .systemPressure)
        await host.idle(tenants[0])
        await system.shutDown()
    }

    @Test func theArticleShowsTheExampleThatRuns() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let example = try String(contentsOf: tests.appending(path: "HostingTenantsExample.swift"), encoding: .utf8)
        let article = try String(
            contentsOf: tests.appending(path: "../../Sources/MemoryPressure/MemoryPressure.docc/HostingTenants.md").standardized,
            encoding: .utf8
        )
        let code = try #require(example.components(separatedBy: "// example begins\n").last?.components(separatedBy: "// example ends").first)
        #expect(article.contains("```swift\n" + code + "```"), "the article's example differs from HostingTenantsExample.swift")
    }
}
