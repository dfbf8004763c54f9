import FoundationEssentials
import MemoryPressure
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads scenarios from JSON files.
///
/// ```json
/// {
///   "name": "commute",
///   "budget": "512MiB",
///   "duration": "30s",
///   "seed": 7,
///   "profiles": { "gallery": { "base": "photos", "cache": { "limit": "96MiB" } } },
///   "apps": [ "maps", { "name": "gallery", "profile": "gallery" }, "music" ],
///   "random": { "meanGap": "1.5s", "weights": { "open": 4, "spike": 1 }, "spikeSize": ["32MiB", "64MiB"] },
///   "events": [ { "at": "10s", "kind": "interruption", "length": "2s" } ]
/// }
/// ```
///
/// `budget` and `apps` are required; `name` defaults to the file's name, `duration` to 20 s, `seed`
/// to 1. An app is a built-in profile's name or `{ "name", "profile" }`. A profile has a built-in
/// `base` and changes any of `cache` (`kind`, `entrySize`, `limit`, `growth`), `screens`,
/// `backingStore`, `launch`, `workingSet` (`growth`, `limit`), `keptOnWarning`, `fetch`, `playback` (`buffer`,
/// `backgroundLength`, or null). `random` gives `meanGap`, `weights` (`open`, `home`,
/// `interruption`, `backgroundLaunch`, `spike`; missing ones are 0) and the ranges
/// `interruptionLength`, `backgroundWork`, `spikeSize`, `spikeHold`. An event has `at` and a `kind`:
/// `open` and `backgroundLaunch` (with `app`; `work` for the latter), `home`, `interruption`
/// (`length`), `spike` (`size`, `hold`). Sizes are strings such as "64MiB" or numbers of bytes,
/// durations strings such as "1.5s" or numbers of seconds; a range is `[low, high]` or one value.
///
/// Only a regular file of at most ``maximumSize`` is read: a FIFO, a device, a socket or a
/// directory is refused without waiting. Its text is checked before it is decoded
/// (``JSONCheck``): the line and column where the JSON breaks, nesting deeper than
/// ``JSONCheck/maximumDepth`` levels, a key given twice in one object, a number no `Double` holds.
package enum ScenarioFile {
    /// The largest scenario file read: 16 MiB, far beyond any real scenario.
    package static let maximumSize = ByteCount(16 << 20)

    /// The scenario in the file at `path`, checked against `limits`.
    package static func load(_ path: FilePath, limits: MemoryLimits) throws(SimulationError) -> Scenario {
        let source = "scenario file \(path.string.escapedForTerminal(limit: 256))"
        let bytes = try read(path, source: source)
        let stem = path.stem ?? "scenario"
        return try parse(bytes, source: source, defaultName: stem, limits: limits)
    }

    /// The contents of the regular file at `path`, of at most ``maximumSize``. It is opened without
    /// waiting (`O_NONBLOCK`: opening a FIFO would wait for a writer), then refused unless
    /// `fstat` says it is a regular file.
    private static func read(_ path: FilePath, source: String) throws(SimulationError) -> [UInt8] {
        let unreadable = { (problem: String, expected: String) in
            SimulationError(.unreadableScenarioFile, source: source, problem: problem, expected: expected)
        }
        let tooLarge = unreadable("is larger than \(maximumSize)", "a JSON file of at most \(maximumSize)")
        do {
            let file = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .nonBlocking])
            return try file.closeAfter {
                var status = stat()
                guard fstat(file.rawValue, &status) == 0 else { throw Errno(rawValue: errno) }
                if let kind = FileKind.irregular(status.st_mode) {
                    throw unreadable("is \(kind)", "a regular file")
                }
                guard Int(status.st_size) <= maximumSize.bytes else { throw tooLarge }
                return try file.readToEnd(limit: maximumSize.bytes)
            }
        } catch let error as SimulationError {
            throw error
        } catch Errno.fileTooLarge {
            throw tooLarge
        } catch {
            throw unreadable("cannot be read (\(error))", "a readable JSON file")
        }
    }

    /// The scenario in `bytes`, named `defaultName` unless it names itself; errors name `source`.
    package static func parse(_ bytes: [UInt8], source: String, defaultName: String, limits: MemoryLimits) throws(SimulationError) -> Scenario {
        let document: Document
        do {
            try JSONCheck.check(bytes)
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch let error as SimulationError {
            throw error.from(source)
        } catch {
            throw SimulationError(source: source, problem: "is not valid JSON (\(reason(error)))", expected: "a JSON object describing a scenario")
        }
        var scenario = document.scenario
        scenario.name = document.name ?? defaultName
        scenario.summary = document.summary ?? "Scenario file \(defaultName)."
        return try scenario.validated(source: source, limits: limits)
    }

    private static func reason(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "\(error)" }
        return context.underlyingError.map { "\($0)" } ?? context.debugDescription
    }
}
