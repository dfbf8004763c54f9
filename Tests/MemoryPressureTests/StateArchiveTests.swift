#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@_spi(Benchmarks) @testable import MemoryPressure
@_spi(Benchmarks) @testable import MemoryPressureRuntime
@_spi(Benchmarks) @testable import MemoryPressureMeasurement
@_spi(Benchmarks) @testable import MemoryPressureMonitor
@_spi(Benchmarks) @testable import MemoryPressureCaches
@_spi(Benchmarks) @testable import MemoryPressureLifecycle
@_spi(Benchmarks) @testable import MemoryPressureProcesses
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
        // Temporary names are random; this archive draws a known one, so the test can plant a file there.
        let archive = try StateArchive(directory: directory.path.appending("planted"), temporaryName: { "state.tmp" })
        try archive.save([9, 9], for: app)
        // A directory planted where the temporary file goes makes the write fail: the temporary
        // file is created with O_EXCL, so nothing already there is reused.
        let temporary = archive.directory.appending(app.rawValue).appending("state.tmp")
        #expect(mkdir(temporary.string, 0o700) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.save([1], for: app) }
        #expect(error?.code == .stateNotSaved)
        #expect(error?.errno == .fileExists)
        #expect(
            error?.description
                == "state archive of \(app) at \(temporary) could not be saved (write: \(Errno.fileExists)); the state saved before is kept"
        )
        #expect(try archive.load(for: app) == [9, 9])
    }

    @Test func aFullDiskFailsTheSaveWithItsErrnoAndKeepsTheStateSavedBefore() throws {
        // A 64 KiB tmpfs: a real full disk. Mounting it takes root (CAP_SYS_ADMIN).
        let mountPoint = directory.path.appending("full")
        #expect(mkdir(mountPoint.string, 0o700) == 0)
        guard mount("tmpfs", mountPoint.string, "tmpfs", 0, "size=64k,mode=0700") == 0 else {
            try Test.cancel("cannot mount a small tmpfs to fill (\(Errno(rawValue: errno))); needs root with CAP_SYS_ADMIN")
        }
        defer { umount2(mountPoint.string, Int32(MNT_DETACH)) }
        let archive = try StateArchive(directory: mountPoint.appending("states"), temporaryName: { "state.tmp" })
        try archive.save([7], for: app)
        let temporary = archive.directory.appending(app.rawValue).appending("state.tmp")
        let error = #expect(throws: MemoryPressureError.self) {
            try archive.save([UInt8](repeating: 1, count: 1 << 20), for: app)
        }
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

    /// Issue 18, item 6: two saves of one app at once, while loads run, 200 times over.
    @Test func concurrentSavesSerializeAndLoadsSeeWholeFiles() throws {
        let (archive, app) = (self.archive, self.app)
        try archive.save(Array("round -1".utf8), for: app)
        var previous = Array("round -1".utf8)
        for round in 0..<200 {
            // Different lengths, so a torn file cannot pass for either.
            let first = Array("round \(round) first ".utf8) + [UInt8](repeating: 0x61, count: 4096 + round)
            let second = Array("round \(round) second ".utf8) + [UInt8](repeating: 0x62, count: 9000 - round)
            let saveErrors = SharedBox<[String]>([])
            let loaded = SharedBox<[[UInt8]?]>([])
            let loadErrors = SharedBox<[String]>([])
            let savesDone = SharedBox(0)
            DispatchQueue.concurrentPerform(iterations: 3) { task in
                switch task {
                case 0, 1:
                    do {
                        try archive.save(task == 0 ? first : second, for: app)
                    } catch {
                        saveErrors.update { $0.append("\(error)") }
                    }
                    savesDone.update { $0 += 1 }
                default:
                    repeat {
                        do {
                            let state = try archive.load(for: app)
                            loaded.update { $0.append(state) }
                        } catch {
                            loadErrors.update { $0.append("\(error)") }
                        }
                    } while savesDone.value < 2
                }
            }
            #expect(saveErrors.value.isEmpty, "round \(round)")
            #expect(loadErrors.value.isEmpty, "round \(round)")
            #expect(loaded.value.allSatisfy { $0 == previous || $0 == first || $0 == second }, "round \(round)")
            let final = try archive.load(for: app)
            #expect(final == first || final == second, "round \(round)")
            #expect(try entries(of: archive.directory.appending(app.rawValue)) == ["state"], "round \(round)")
            guard saveErrors.value.isEmpty, loadErrors.value.isEmpty, let final else { break }
            previous = final
        }
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

    @Test func temporaryFilesLeftByACrashedSaveAreRemovedByTheNextSave() throws {
        try archive.save([1], for: app)
        let appDirectory = archive.directory.appending(app.rawValue)
        try writeFile(appDirectory.appending("state.tmp-00000000deadbeef"), [0xFF])
        let victim = directory.path.appending("victim")
        try writeFile(victim, [42])
        #expect(symlink(victim.string, appDirectory.appending("state.tmp-feedfacecafebeef").string) == 0)
        try archive.save([2], for: app)
        #expect(try entries(of: appDirectory) == ["state"])
        #expect(try readFile(victim) == [42])
        #expect(try archive.load(for: app) == [2])
    }

    // MARK: Issue 18, item 7: a hostile filesystem

    @Test func aSymlinkPlantedAtTheTemporaryNameIsNotFollowed() throws {
        let archive = try StateArchive(directory: directory.path.appending("planted"), temporaryName: { "state.tmp" })
        try archive.save([1], for: app)
        let victim = directory.path.appending("victim")
        try writeFile(victim, [42])
        let temporary = archive.directory.appending(app.rawValue).appending("state.tmp")
        #expect(symlink(victim.string, temporary.string) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.save([2, 2], for: app) }
        #expect(error?.code == .stateNotSaved)
        #expect(error?.errno == .fileExists)
        #expect(try readFile(victim) == [42])
        #expect(try archive.load(for: app) == [1])
    }

    @Test func aSymlinkedAppDirectoryIsRefused() throws {
        let elsewhere = directory.path.appending("elsewhere")
        #expect(mkdir(elsewhere.string, 0o700) == 0)
        let appDirectory = archive.directory.appending(app.rawValue)
        #expect(symlink(elsewhere.string, appDirectory.string) == 0)
        let saveError = #expect(throws: MemoryPressureError.self) { try archive.save([1], for: app) }
        #expect(saveError?.code == .stateArchiveUnusable)
        #expect(
            saveError?.description
                == "state archive of \(app) at \(appDirectory) cannot be used: it is a symbolic link, which is not followed; "
                + "expected a writable directory (created with mode 0700 if missing)"
        )
        #expect(try entries(of: elsewhere).isEmpty)
        // A state file planted behind the link is not read either.
        try writeFile(elsewhere.appending("state"), StateArchiveFormat.encode([6, 6, 6]))
        let loadError = #expect(throws: MemoryPressureError.self) { try archive.load(for: app) }
        #expect(loadError?.code == .stateArchiveUnusable)
        #expect(loadError?.app == app)
    }

    @Test func aSymlinkedStateFileIsRefused() throws {
        try archive.save([1], for: app)
        let planted = directory.path.appending("planted-state")
        try writeFile(planted, StateArchiveFormat.encode([6, 6, 6]))
        let file = archive.directory.appending(app.rawValue).appending("state")
        #expect(unlink(file.string) == 0)
        #expect(symlink(planted.string, file.string) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.load(for: app) }
        #expect(error?.code == .stateNotRestored)
        #expect(
            error?.description
                == "state archive of \(app) at \(file) is refused: it is a symbolic link, which is not followed; the app launches fresh"
        )
    }

    @Test func aBaseDirectoryOthersCanWriteIsRefusedUnlessStickyAndOurs() throws {
        let base = directory.path.appending("shared")
        #expect(mkdir(base.string, 0o700) == 0)
        for mode: mode_t in [0o777, 0o770, 0o722] {
            #expect(chmod(base.string, mode) == 0)
            let error = #expect(throws: MemoryPressureError.self, "\(String(mode, radix: 8))") { try StateArchive(directory: base) }
            #expect(error?.code == .stateArchiveUnusable)
            #expect(
                error?.description
                    == "state archive at \(base) cannot be used: others can write it (mode 0\(String(mode, radix: 8))) and it is not "
                    + "sticky and ours; expected a writable directory (created with mode 0700 if missing)"
            )
        }
        // Made safe, then opened to others after the archive was made: the next save is refused.
        #expect(chmod(base.string, 0o700) == 0)
        let archive = try StateArchive(directory: base)
        #expect(chmod(base.string, 0o777) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try archive.save([1], for: app) }
        #expect(error?.code == .stateArchiveUnusable)
        #expect(try entries(of: base).isEmpty)
        // Sticky and ours, like a private /tmp: accepted.
        #expect(chmod(base.string, 0o1777) == 0)
        try archive.save([3], for: app)
        #expect(try archive.load(for: app) == [3])
    }

    @Test func aStickyBaseDirectoryOfAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { try Test.cancel("giving a directory to another user takes root") }
        let base = directory.path.appending("theirs")
        #expect(mkdir(base.string, 0o700) == 0)
        #expect(chown(base.string, 65534, 65534) == 0)
        #expect(chmod(base.string, 0o1777) == 0)
        let error = #expect(throws: MemoryPressureError.self) { try StateArchive(directory: base) }
        #expect(error?.code == .stateArchiveUnusable)
        #expect(
            error?.description
                == "state archive at \(base) cannot be used: it belongs to user 65534, who can write it; "
                + "expected a writable directory (created with mode 0700 if missing)"
        )
    }

    @Test func aFIFOIsRefusedWithoutWaiting() throws {
        try archive.save([1], for: app)
        let file = archive.directory.appending(app.rawValue).appending("state")
        #expect(unlink(file.string) == 0)
        guard mkfifo(file.string, 0o600) == 0 else {
            try Test.cancel("cannot make a FIFO here (\(Errno(rawValue: errno)))")
        }
        let error = #expect(throws: MemoryPressureError.self) { try archive.load(for: app) }
        #expect(error?.code == .stateNotRestored)
        #expect(
            error?.description
                == "state archive of \(app) at \(file) is refused: it is not a regular file but a FIFO; the app launches fresh"
        )
    }

    @Test func statesAndFilesPastTheSizeLimitAreRefused() throws {
        let archive = try StateArchive(directory: directory.path.appending("small"), maximumFileSize: 1024)
        try archive.save([UInt8](repeating: 1, count: 1000), for: app)
        let file = archive.directory.appending(app.rawValue).appending("state")
        let saveError = #expect(throws: MemoryPressureError.self) { try archive.save([UInt8](repeating: 2, count: 1001), for: app) }
        #expect(saveError?.code == .stateNotSaved)
        #expect(
            saveError?.description
                == "state archive of \(app) at \(file) could not be saved: the state file would be 1025 bytes, more than the "
                + "1024-byte limit; the state saved before is kept"
        )
        #expect(try archive.load(for: app) == [UInt8](repeating: 1, count: 1000))
        // A large sparse file planted in its place is not read.
        #expect(truncate(file.string, 1 << 40) == 0)
        let loadError = #expect(throws: MemoryPressureError.self) { try archive.load(for: app) }
        #expect(loadError?.code == .stateNotRestored)
        #expect(
            loadError?.description
                == "state archive of \(app) at \(file) is refused: it is \(1 << 40) bytes or more, more than the 1024-byte limit; "
                + "the app launches fresh"
        )
    }

    @Test func canonicallyEquivalentIdentifiersShareOneDirectoryNamedInNFC() throws {
        let composed = try AppIdentifier("caf\u{E9}")
        let decomposed = try AppIdentifier("cafe\u{301}")
        #expect(composed == decomposed)
        try archive.save([1], for: decomposed)
        #expect(try archive.load(for: composed) == [1])
        try archive.save([2], for: composed)
        #expect(try archive.load(for: decomposed) == [2])
        #expect(try entries(of: archive.directory).map { Array($0.utf8) } == [Array("caf\u{E9}".utf8)])
        archive.remove(for: decomposed)
        #expect(try archive.load(for: composed) == nil)
    }

    @Test func anAppSavesCodableStateAndALaunchRestoresIt() async throws {
        let options = SharedBox<[LaunchOptions]>([])
        let events = EventSource<LifecycleEvent>()
        let app = App(identifier: self.app, configuration: .patient(), events: events, stateArchive: archive, threads: testThreads) {
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
        let app = App(identifier: self.app, configuration: .patient(), events: events, stateArchive: archive, threads: testThreads) {
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

/// The names in the directory at `path`, sorted, without `.` and `..`.
func entries(of path: FilePath) throws -> [String] {
    guard let stream = opendir(path.string) else { throw Errno(rawValue: errno) }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
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
