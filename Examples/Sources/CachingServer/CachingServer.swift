#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import HTTPTypes
import Hummingbird
import Logging
import MemoryPressure
import MemoryPressureService
import Metrics
import NIOCore
import Prometheus

/// The page cache: rendered pages by identifier, their size as cost. Owned by the service itself
/// (not a hosted app), so the memory system purges it at every raised level.
typealias PageCache = PurgeableCache<String, ByteBuffer>

/// A small HTTP service that caches rendered pages and gives them back under memory pressure.
///
/// - `GET /pages/:id`: the page, rendered on a miss and cached (`x-cache: hit` or `miss`);
/// - `GET /memory`: the level, the budget, the latest sample and the cache, as JSON;
/// - `GET /metrics`: every metric in Prometheus's text format.
@main
struct CachingServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caching-server",
        abstract: "Serve rendered pages from a cache that the memory system purges under pressure."
    )

    @Option(help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(help: "Port to bind.")
    var port = 8080

    @Option(help: "Memory budget, such as 128MiB or 1GiB (default: $CACHING_SERVER_BUDGET, else 128MiB).")
    var budget: String?

    @Option(help: "Size of each rendered page, in KiB (1 to 65536).")
    var pageKiB = 256

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level \(logLevel) is not a level; expected trace, debug, info, notice, warning, error or critical")
        }
        guard (1...65536).contains(pageKiB) else {
            throw ValidationError("--page-kib \(pageKiB) is out of range; expected 1 to 65536")
        }
        let pageBytes = pageKiB << 10
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(Self.metricsFactory(registry: registry))
        let logger = Logger(label: "caching-server")

        // The memory system, with the service's page cache registered.
        let budgetText = budget ?? Environment.value(of: "CACHING_SERVER_BUDGET") ?? "128MiB"
        let system = try MemorySystem(configuration: .init(
            budget: MemoryBudget(parsing: budgetText), logger: Logger(label: "memory")
        ))
        let pages = try PageCache(name: "pages", category: .rebuildableObjects)
        system.register(pages)

        let router = Router()
        let renderer = PageRenderer(byteCount: pageBytes)
        router.get("pages/:id") { _, context -> Response in
            let identifier = try context.parameters.require("id")
            var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
            let page: ByteBuffer
            if let cached = pages.value(forKey: identifier) {
                page = cached
                headers[.cacheStatus] = "hit"
            } else {
                page = renderer.render(identifier)
                try pages.setValue(page, forKey: identifier, cost: page.readableBytes)
                headers[.cacheStatus] = "miss"
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: page))
        }
        router.get("memory") { _, _ in
            MemoryReport(system: system, cache: pages)
        }
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
            )
        }

        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "caching-server"),
            services: [MemoryPressureService(system: system)],
            logger: logger
        )
        logger.info("serving pages", metadata: ["address": "\(host):\(port)", "budget": "\(system.configuration.budget)"])
        try await app.runService()
    }

    /// Prometheus, with histogram buckets that suit each timer: purges take milliseconds to seconds,
    /// a sample microseconds.
    static func metricsFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["memory_pressure_sample_duration_seconds"] = [
            .microseconds(1), .microseconds(2), .microseconds(5), .microseconds(10), .microseconds(20),
            .microseconds(50), .microseconds(100), .microseconds(200), .microseconds(500), .milliseconds(1),
        ]
        return factory
    }
}

extension HTTPField.Name {
    /// Whether the page came from the cache.
    static let cacheStatus = HTTPField.Name("x-cache")!
}

/// The process's environment.
enum Environment {
    static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
