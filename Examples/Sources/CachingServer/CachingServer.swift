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

/// A small HTTP service that caches rendered pages and gives them back under memory pressure.
///
/// - `GET /pages/:id`: the page, rendered on a miss into the service's app heap and cached there
///   (`x-cache: hit` or `miss`), or rendered into the response alone while the memory system
///   reports pressure or the budget has no room for it (`x-cache: bypass`);
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

    @Option(help: "Memory budget, such as 128MiB or 1GiB, or auto for 90% of the cgroup's limit (else of physical memory) (default: $CACHING_SERVER_BUDGET, else 128MiB).")
    var budget: String?

    @Option(name: .customLong("page-kib"), help: "Size of each rendered page, in KiB (1 to 65536).")
    var pageKiB = 256

    @Option(help: "Most bytes of pages the cache keeps: a size such as 64MiB, or a percentage of the budget such as 50%.")
    var cacheLimit = "50%"

    @Option(help: "Seconds between readings of the cgroup's limit, which the budget follows (1 to 3600), or 0 to keep the budget as started.")
    var limitCheckSeconds = 10

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
        // `auto` follows the container: in a Kubernetes pod, 90% of its resources.limits.memory.
        let resolved = budgetText == "auto" ? try MemoryBudget.resolve(.automatic()) : try MemoryBudget(parsing: budgetText)
        guard (0...3600).contains(limitCheckSeconds) else {
            throw ValidationError("--limit-check-seconds \(limitCheckSeconds) is out of range; expected 0 (off) to 3600")
        }
        var configuration = MemorySystem.Configuration(budget: resolved, logger: Logger(label: "memory"))
        configuration.monitor.limitCheckInterval = limitCheckSeconds == 0 ? nil : .seconds(limitCheckSeconds)
        let system = try MemorySystem(configuration: configuration)
        // A percentage is a fraction of the budget, which follows the cgroup's limit while the
        // server runs: the cache's limit follows it too.
        let limit = try Self.cacheLimit(cacheLimit)
        // The pages' bytes live in the service's heap, so their cost is already counted there.
        let cache = try PageCache(
            name: "pages", category: .rebuildableObjects, costLimit: limit.bytes, budgetFraction: limit.fraction,
            payloadLocation: .appHeap
        )
        system.register(cache)
        let pages = Pages(
            cache: cache, heap: try system.heap(for: .service), monitor: system.monitor,
            renderer: PageRenderer(byteCount: pageBytes)
        )

        let router = Router()
        router.get("pages/:id") { _, context -> Response in
            try await pages.response(for: context.parameters.require("id"))
        }
        router.get("memory") { _, _ in
            MemoryReport(system: system, cache: cache)
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
        logger.info("serving pages", metadata: [
            "address": "\(host):\(port)", "budget": "\(system.budget)", "cacheLimit": "\(cache.costLimitInForce.map(String.init) ?? "none")",
        ])
        try await app.runService()
    }

    /// `text` as a cache limit: a size such as `64MiB` (bytes), or a percentage of the budget
    /// such as `50%` (a fraction).
    static func cacheLimit(_ text: String) throws -> (bytes: Int?, fraction: Double?) {
        if text.hasSuffix("%") {
            guard let percent = Double(text.dropLast()), percent > 0, percent <= 100 else {
                throw ValidationError("--cache-limit \(text) is not a percentage of the budget above 0 and at most 100")
            }
            return (nil, percent / 100)
        }
        let bytes: Int
        do {
            // The budget's parser reads sizes such as 64MiB.
            bytes = try MemoryBudget(parsing: text).totalBytes
        } catch {
            throw ValidationError("--cache-limit \(text) is not a size (such as 64MiB) or a percentage (such as 50%)")
        }
        guard bytes >= 1 else { throw ValidationError("--cache-limit \(text) leaves no room for a page") }
        return (bytes, nil)
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

/// The process's environment.
enum Environment {
    static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
