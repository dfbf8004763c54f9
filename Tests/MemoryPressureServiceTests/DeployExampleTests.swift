import MemoryPressure
@testable import MemoryPressureService
import MemoryPressureTestKit
import MemoryTestSupport
import MetricsTestKit
import SystemPackage
import Testing

import Foundation

/// `Examples/deploy`: the YAML and JSON parse (through Python), the Dockerfile has its stages and
/// packages (through hadolint where it is installed), and every metric the dashboard and the rules
/// name is one that `MemoryMetrics` exports, as read from its source.
struct DeployExampleTests {
    /// The repository's root, three levels above this file.
    static let root = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()
    static let deploy = root.appending("Examples/deploy")
    static let yamlFiles = ["kubernetes/deployment.yaml", "prometheus/prometheus.yml", "prometheus/memory-pressure-rules.yml"]
    static let dashboard = "grafana/memory-pressure-dashboard.json"

    static func text(_ path: FilePath) throws -> String {
        let file = try FileDescriptor.open(path, .readOnly)
        return String(decoding: try file.closeAfter { try file.readToEnd() }, as: UTF8.self)
    }

    /// What a program printed on its standard output, and its exit status; nil when it is not on
    /// the PATH.
    static func run(_ program: String, _ arguments: [String]) async throws -> (status: Int32, output: String, errors: String)? {
        guard let executable = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map({ "\($0)/\(program)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return await blockingWait {
            let printed = output.fileHandleForReading.bytesToEnd()
            let complained = errors.fileHandleForReading.bytesToEnd()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: printed, as: UTF8.self), String(decoding: complained, as: UTF8.self))
        }
    }

    /// Every document of each file, parsed by Python (`yaml.safe_load_all` for YAML, `json.load`
    /// for JSON) and handed back as JSON, by file name.
    static func parsedByPython(_ files: [String]) async throws -> [String: Any] {
        let script = """
            import json, sys
            parsed = {}
            for path in sys.argv[1:]:
                with open(path) as file:
                    if path.endswith(".json"):
                        parsed[path] = [json.load(file)]
                    else:
                        import yaml
                        parsed[path] = list(yaml.safe_load_all(file))
            print(json.dumps(parsed))
            """
        guard let result = try await run("python3", ["-c", script] + files.map { deploy.appending($0).string }) else {
            try Test.cancel("python3 is not installed here; it parses the YAML and JSON files")
        }
        if result.status != 0, result.errors.contains("No module named 'yaml'") {
            try Test.cancel("PyYAML is not installed here (apt-get install python3-yaml); it parses the YAML files")
        }
        try #require(result.status == 0, "python3 could not parse the files: \(result.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] ?? [:]
        return Dictionary(uniqueKeysWithValues: files.map { ($0, object[deploy.appending($0).string] as Any) })
    }

    @Test func theYAMLFilesParseAndHoldTheLimitTheScrapeAndTheAlerts() async throws {
        let parsed = try await Self.parsedByPython(Self.yamlFiles)

        let manifests = try #require(parsed["kubernetes/deployment.yaml"] as? [[String: Any]])
        let deployment = try #require(manifests.first { $0["kind"] as? String == "Deployment" })
        let podSpec = try #require(((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((podSpec["containers"] as? [[String: Any]])?.first)
        let resources = try #require(container["resources"] as? [String: Any])
        let limit = try #require((resources["limits"] as? [String: Any])?["memory"] as? String)
        #expect(limit == "512Mi")
        #expect((resources["requests"] as? [String: Any])?["memory"] as? String == limit)
        let environment = (container["env"] as? [[String: Any]] ?? []).map { ($0["name"] as? String, $0["value"] as? String) }
        #expect(environment.contains { $0 == ("CACHING_SERVER_BUDGET", "auto") }, "the budget follows the pod's limit")
        #expect(manifests.contains { $0["kind"] as? String == "Service" })

        let prometheus = try #require((parsed["prometheus/prometheus.yml"] as? [[String: Any]])?.first)
        #expect(prometheus["rule_files"] as? [String] == ["memory-pressure-rules.yml"])
        let scrapes = try #require(prometheus["scrape_configs"] as? [[String: Any]])
        #expect(scrapes.contains { $0["metrics_path"] as? String == "/metrics" })
        #expect(scrapes.contains { $0["kubernetes_sd_configs"] != nil })

        let rules = try #require((parsed["prometheus/memory-pressure-rules.yml"] as? [[String: Any]])?.first)
        let alerts = ((rules["groups"] as? [[String: Any]]) ?? []).flatMap { $0["rules"] as? [[String: Any]] ?? [] }
        func alert(_ name: String) -> [String: Any]? { alerts.first { $0["alert"] as? String == name } }
        let nearBudget = try #require(alert("MemoryFootprintNearBudget"))
        #expect(nearBudget["for"] as? String == "5m")
        #expect(nearBudget["expr"] as? String == "memory_pressure_footprint_bytes > 0.9 * memory_pressure_budget_bytes")
        #expect((alert("AppsTerminatedForMemoryPressure")?["expr"] as? String)?.contains("reason=\"systemPressure\"") == true)
        #expect((alert("HeapAllocationsRefused")?["expr"] as? String)?.contains("memory_pressure_refused_allocations_total") == true)
        #expect(alerts.allSatisfy { $0["expr"] is String && ($0["annotations"] as? [String: Any])?["summary"] is String })
    }

    @Test func theDashboardIsJSONWithAPanelForEachFigure() async throws {
        let parsed = try await Self.parsedByPython([Self.dashboard])
        let dashboard = try #require((parsed[Self.dashboard] as? [Any])?.first as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let titles = panels.compactMap { $0["title"] as? String }
        for title in ["Footprint against budget and target", "Pressure level", "Largest apps", "Purged bytes", "Terminations by reason", "Purge latency"] {
            #expect(titles.contains(title))
        }
        #expect(panels.allSatisfy { ($0["targets"] as? [[String: Any]])?.allSatisfy { $0["expr"] is String } == true })
        #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count)
    }

    /// The metric names `MemoryMetrics` exports with the default prefix, read from the service
    /// module's source (every `label("…")`), and the timers among them, which Prometheus exports
    /// as histograms (`_bucket`, `_sum`, `_count`).
    static func exportedNames() throws -> (all: Set<String>, timers: Set<String>) {
        let sources = root.appending("Sources/MemoryPressureService")
        var all: Set<String> = []
        var timers: Set<String> = []
        let prefix = MemoryMetrics.Configuration.standard.prefix + "_"
        for name in ["MemoryMetrics.swift", "AppFootprintGauges.swift", "CounterFamily.swift"] {
            let source = try text(sources.appending(name))
            for match in source.matches(of: /label\("([a-z0-9_]+)"\)/) { all.insert(prefix + match.1) }
            for match in source.matches(of: /Timer\(label: label\("([a-z0-9_]+)"\)/) { timers.insert(prefix + match.1) }
        }
        return (all, timers)
    }

    @Test func everyMetricTheDashboardAndTheRulesNameIsExported() throws {
        let (exported, timers) = try Self.exportedNames()
        // The names read from the source are those a real recorder registers.
        let metrics = TestMetrics()
        let system = try MemorySystem(configuration: .init(budget: try MemoryBudget(totalBytes: 64 << 20), logger: silentLogger))
        let recorder = MemoryMetrics(system: system, configuration: try .init(factory: metrics))
        recorder.stop()
        let registered = Set(metrics.counters.map(\.label) + metrics.recorders.map(\.label) + metrics.timers.map(\.label))
        #expect(registered.isSubset(of: exported))
        #expect(exported.subtracting(registered) == ["memory_pressure_app_footprint_bytes"])  // made per app, once one has bytes
        #expect(Set(metrics.timers.map(\.label)) == timers)

        let prometheusNames = exported.union(timers.flatMap { timer in ["_bucket", "_sum", "_count"].map { timer + $0 } })
        var named: Set<String> = []
        var reasons: Set<String> = []
        for file in Self.yamlFiles + [Self.dashboard] {
            let text = try Self.text(Self.deploy.appending(file))
            named.formUnion(text.matches(of: /memory_pressure_[a-z0-9_]+/).map { String($0.0) })
            reasons.formUnion(text.matches(of: /reason="([A-Za-z]+)"/).map { String($0.1) })
        }
        #expect(named.subtracting(prometheusNames).isEmpty, "named but not exported: \(named.subtracting(prometheusNames).sorted())")
        #expect(reasons.isSubset(of: Set(TerminationReason.allCases.map(\.rawValue))))
        // The figures the issue asks the dashboard and the rules to show are all there.
        for figure in ["footprint_bytes", "budget_bytes", "target_bytes", "level", "app_footprint_bytes", "purged_bytes_total",
                       "terminations_total", "purge_latency_seconds_bucket", "refused_allocations_total"] {
            #expect(named.contains("memory_pressure_" + figure))
        }
    }

    /// The Dockerfile's instructions, continuation lines joined and comments dropped.
    static func instructions(of dockerfile: String) -> [(keyword: String, arguments: String)] {
        var joined: [String] = []
        var pending = ""
        for line in dockerfile.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if pending.isEmpty, trimmed.hasPrefix("#") || trimmed.isEmpty { continue }
            if trimmed.hasSuffix("\\") {
                pending += String(trimmed.dropLast()) + " "
            } else {
                joined.append(pending + trimmed)
                pending = ""
            }
        }
        return joined.map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (parts[0].uppercased(), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    @Test func theDockerfileBuildsOnTheSwiftImageAndRunsWithJemalloc() async throws {
        let path = Self.deploy.appending("Dockerfile")
        if let hadolint = try await Self.run("hadolint", [path.string]) {
            #expect(hadolint.status == 0, "hadolint: \(hadolint.output)")
        }
        let instructions = Self.instructions(of: try Self.text(path))
        #expect(instructions.allSatisfy { ["ARG", "FROM", "RUN", "WORKDIR", "COPY", "USER", "EXPOSE", "ENV", "ENTRYPOINT"].contains($0.keyword) })
        let stageStarts = instructions.indices.filter { instructions[$0].keyword == "FROM" }
        try #require(stageStarts.count == 2)
        let build = instructions[stageStarts[0]..<stageStarts[1]]
        let run = instructions[stageStarts[1]...]
        #expect(build.first!.arguments.hasPrefix("swift:") && build.first!.arguments.hasSuffix(" AS build"))
        #expect(build.contains { $0.keyword == "RUN" && $0.arguments.contains("apt-get install") && $0.arguments.contains("libjemalloc-dev") })
        #expect(build.contains { $0.keyword == "RUN" && $0.arguments.contains("swift build --package-path Examples -c release") })
        #expect(!run.first!.arguments.hasPrefix("swift:"))
        #expect(run.contains { $0.keyword == "RUN" && $0.arguments.contains("apt-get install") && $0.arguments.contains("libjemalloc2") })
        #expect(!run.contains { $0.arguments.contains("libjemalloc-dev") })
        #expect(run.contains { $0.keyword == "COPY" && $0.arguments.hasPrefix("--from=build ") })
        #expect(run.contains { $0.keyword == "USER" && $0.arguments != "root" && $0.arguments != "0" })
        #expect(run.contains { $0.keyword == "ENV" && $0.arguments == "CACHING_SERVER_BUDGET=auto" })
        #expect(run.last?.keyword == "ENTRYPOINT")
        // Every ARG a FROM uses is declared before the first stage.
        let declared = Set(instructions[..<stageStarts[0]].map { $0.arguments.split(separator: "=")[0] })
        for stage in stageStarts {
            for used in instructions[stage].arguments.matches(of: /\$\{([A-Z_]+)\}/) { #expect(declared.contains(used.1)) }
        }
        // The binary it copies is the example's executable target.
        #expect(try Self.text(Self.root.appending("Examples/Package.swift")).contains("name: \"CachingServer\""))
    }
}
