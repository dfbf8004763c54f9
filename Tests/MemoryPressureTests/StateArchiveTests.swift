#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) @testable import MemoryPressure
import MemoryPressureTestKit
import SystemPackage
import Testing

/// The permission bits of `path`.
func mode(of path: FilePath) -> mode_t {
    var status = stat()
    precondition(stat(path.string, &status) == 0, "stat \(path)")
    return status.st_mode & 0o7777
}

struct SavedDocument: Codable, Equatable {
    var title: String
    var scrollOffset: Int
}

@Suite struct StateArchiveTests {
    let directory: TemporaryDirectory
    let archive: StateArchive
    let app = AppIdentifier.test("notes")

    init() throws {
        directory = try TemporaryDirectory()
        archive = try StateArchive(directory: directory.path.appending("nested/states"))
    }

    @Test func savedStateIsLoadedBackWithPrivateModes() throws {
        #expect(try archive.load(for: app) == nil)
        try archive.save([1, 2, 3], for: app)
        try archive.save([4, 5, 6, 7], for: app)
        #expect(try archive.load(for: app) == [4, 5, 6, 7])
        #expect(mode(of: archive.directory) == 0o700)
        #expect(mode(of: archive.directory.appending(app.rawValue)) == 0o700)
        #expect(mode(of: archive.directory.appending(app.rawValue).appending("state")) == 0o600)
        archive.remove(for: app)
        #expect(try archive.load(for: app) == nil)
    }

    /// Ways a state file gets damaged.
    enum Damage: CaseIterable, Sendable {
        case truncatedHeader, wrongMagic, flippedStateByte, missingTail

        func apply(to bytes: [UInt8]) -> [UInt8] {
            switch self {
            case .truncatedHeader: Array(bytes.prefix(10))
            case .wrongMagic: [0x58] + bytes.dropFirst()
            case .flippedStateByte: bytes.dropLast() + [bytes.last! ^ 0xFF]
            case .missingTail: Array(bytes.dropLast(2))
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func damagedFilesAreReportedAsCorrupt(damage: Damage) throws {
        try archive.save(Array("the state".utf8), for: app)
        let file = archive.directory.appending(app.rawValue).appending("state")
        let contents = try readFile(file)
        try writeFile(file, damage.apply(to: contents))
        let error = #expect(throws: MemoryPressureError.self, "\(damage)") { try archive.load(for: app) }
        #expect(error?.code == .stateNotRestored, "\(damage)")
        #expect(error?.app == app)
        #expect(error?.description.hasPrefix("state archive of \(app) at \(file) is corrupt: ") == true)
        #expect(error?.description.hasSuffix("; the app launches fresh") == true)
    }

    @Test func aFailedSaveKeepsTheStateSavedBefore() throws {
        try archive.save([9, 9], for: app)
        // A directory where the temporary file goes makes the write fail, as a full disk would.
        let temporary = archive.directory.appending(app.rawValue).appending("state.tmp")
        #expect(mkdir(temporary.string, 0o700) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.save([1], for: app) }
        #expect(error?.code == .stateNotSaved)
        #expect(error?.errno == .isDirectory)
        #expect(
            error?.description
                == "state archive of \(app) at \(temporary) could not be saved (write: \(Errno.isDirectory)); the state saved before is kept"
        )
        #expect(try archive.load(for: app) == [9, 9])
    }

    @Test func aFullDiskFailsTheSaveWithItsErrnoAndKeepsTheStateSavedBefore() throws {
        try archive.save([7], for: app)
        // The temporary file leads to /dev/full, where every write fails with ENOSPC.
        let temporary = archive.directory.appending(app.rawValue).appending("state.tmp")
        #expect(symlink("/dev/full", temporary.string) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.save([1, 2, 3], for: app) }
        #expect(error?.code == .stateNotSaved)
        #expect(error?.errno == .noSpace)
        #expect(
            error?.description
                == "state archive of \(app) at \(temporary) could not be saved (write: \(Errno.noSpace)); the state saved before is kept"
        )
        #expect(try archive.load(for: app) == [7])
        try archive.save([8], for: app)
        #expect(try archive.load(for: app) == [8])
    }

    @Test func unusableDirectoriesAreClearErrors() throws {
        let file = directory.path.appending("plain")
        try writeFile(file, [1])
        for path in [FilePath(""), file, file.appending("below")] {
            let error = #expect(throws: MemoryPressureError.self, "\(path)") { try StateArchive(directory: path) }
            #expect(error?.code == .stateArchiveUnusable, "\(path)")
            #expect(error?.description.hasSuffix("; expected a writable directory (created with mode 0700 if missing)") == true)
        }
    }

    @Test func anAppSavesCodableStateAndALaunchRestoresIt() async throws {
        let options = SharedBox<[LaunchOptions]>([])
        let events = EventSource<LifecycleEvent>()
        let app = App(identifier: self.app, configuration: .quick, events: events, stateArchive: archive) {
            recordingLaunches(in: options)
        }
        try await app.launch()
        try app.saveState(SavedDocument(title: "groceries", scrollOffset: 240))
        try await app.terminate(reason: .systemPressure)
        try await app.launch()
        let restored = try options.value.last?.restoredState(as: SavedDocument.self)
        #expect(restored == SavedDocument(title: "groceries", scrollOffset: 240))
        #expect(options.value.first?.restoredState == nil)
    }

    @Test func aCorruptArchiveLaunchesTheAppFreshAndSaysWhy() async throws {
        try archive.save(Array("state".utf8), for: app)
        try writeFile(archive.directory.appending(app.rawValue).appending("state"), Array("garbage".utf8))
        let options = SharedBox<[LaunchOptions]>([])
        let events = EventSource<LifecycleEvent>()
        let stream = events.stream()
        let app = App(identifier: self.app, configuration: .quick, events: events, stateArchive: archive) {
            recordingLaunches(in: options)
        }
        #expect(try await app.launch() == .active)
        #expect(options.value.first?.restoredState == nil)
        guard options.value.first?.restorationFailure?.code == .stateNotRestored else {
            Issue.record("expected a corrupt archive in the launch options")
            return
        }
        let failure = await stream.first { if case .restorationFailed = $0 { true } else { false } }
        #expect(failure?.app == self.app)
    }

    @Test func savingWithoutAnArchiveSaysSo() throws {
        let app = try makeApp("no-archive")
        let error = #expect(throws: MemoryPressureError.self) { try app.saveState(1) }
        #expect(error?.code == .stateArchiveUnusable)
        #expect(error?.app == app.identifier)
        #expect(
            error?.description == "state archive of \(app.identifier): the app was made without a state archive; "
                + "register it with a MemorySystem that has an archive directory"
        )
    }
}

/// A delegate that adds the options of each launch to `options`.
func recordingLaunches(in options: SharedBox<[LaunchOptions]>) -> RecordingDelegate {
    let delegate = RecordingDelegate()
    delegate.onWillFinishLaunching = { _, launch in options.update { $0.append(launch) } }
    return delegate
}

func readFile(_ path: FilePath) throws -> [UInt8] {
    let descriptor = try FileDescriptor.open(path, .readOnly)
    return try descriptor.closeAfter {
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let count = try bytes.withUnsafeMutableBytes { try descriptor.read(into: $0) }
        return Array(bytes.prefix(count))
    }
}

func writeFile(_ path: FilePath, _ bytes: [UInt8]) throws {
    let descriptor = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
    try descriptor.closeAfter { _ = try descriptor.writeAll(bytes) }
}
