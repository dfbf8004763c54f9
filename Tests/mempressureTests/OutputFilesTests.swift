import Foundation
@testable import mempressure
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Issue 18, items 2 to 5: outputs against real files, symbolic links, FIFOs and device nodes.
@Suite(.serialized)
final class OutputFilesTests {
    let directory: String

    init() throws {
        var template = Array("\(FileManager.default.temporaryDirectory.path)/mempressure-outputs-XXXXXX".utf8CString)
        directory = String(cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String) -> String { "\(directory)/\(name)" }

    func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    func fileType(_ path: String) -> mode_t {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
    }

    func checkRefused(report: String? = nil, timeline: String? = nil, chart: String? = nil, _ expected: String) {
        #expect {
            _ = try OutputFiles(report: report, timeline: timeline, chart: chart)
        } throws: { error in
            let message = "\(error)"
            if !message.contains(expected) || message.contains("\n") { Issue.record("message was: \(message)") }
            return error is BadInput && message.contains(expected) && !message.contains("\n")
        }
    }

    // MARK: Item 2: only a regular file, or none, is replaced

    @Test func aFIFOIsRefusedWithoutBlockingAndStaysAFIFO() throws {
        let fifo = path("fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        checkRefusedKeeping(fifo, type: S_IFIFO, "--report \(fifo.debugDescription) is a FIFO; expected a regular file or a new one")
    }

    @Test(.enabled(if: getuid() == 0, "mknod of a device node needs root"))
    func aDeviceNodeIsRefusedAndStaysADevice() throws {
        let node = path("null")
        #expect(mknod(node, S_IFCHR | 0o666, dev_t(1 << 8 | 3) /* makedev(1, 3): the null device */) == 0)
        checkRefusedKeeping(node, type: S_IFCHR, "--report \(node.debugDescription) is a character device; expected a regular file or a new one")
    }

    @Test func devNullIsRefused() {
        checkRefused(report: "/dev/null", #"--report "/dev/null" is a character device; expected a regular file or a new one"#)
    }

    @Test func aSymbolicLinkIsRefusedAndItsTargetKept() throws {
        let victim = path("victim")
        try Data("keep".utf8).write(to: URL(filePath: victim))
        let link = path("link")
        #expect(symlink(victim, link) == 0)
        checkRefused(report: link, "--report \(link.debugDescription) is a symbolic link; expected a regular file or a new one")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(fileType(link) == S_IFLNK)
    }

    @Test func aDirectoryIsRefused() {
        checkRefused(chart: directory, "--chart \(directory.debugDescription) is a directory")
    }

    func checkRefusedKeeping(_ node: String, type: mode_t, _ expected: String) {
        #expect {
            _ = try OutputFiles(report: node, timeline: nil, chart: nil)
        } throws: { error in
            "\(error)" == expected
        }
        #expect(fileType(node) == type, "the node keeps its type")
        #expect((try? entries()) == [node.split(separator: "/").last.map(String.init)!], "nothing else is created")
    }

    // MARK: Item 3: the temporary file

    @Test func temporaryFilesHaveUnpredictableNamesInTheTargetsDirectory() throws {
        let target = path("report.json")
        let first = try OutputFiles.createTemporaryFile(beside: target)
        let second = try OutputFiles.createTemporaryFile(beside: target)
        close(first.descriptor)
        close(second.descriptor)
        #expect(first.path != second.path)
        for temporary in [first.path, second.path] {
            #expect(temporary.hasPrefix(directory + "/.mempressure-") && temporary.hasSuffix(".tmp"))
            #expect(!temporary.contains("\(getpid())") && !temporary.contains("report.json"))
            #expect(fileType(temporary) == S_IFREG)
        }
    }

    @Test func aLinkPlantedAtTheOldPredictableNameIsNotFollowed() throws {
        let target = path("report.json")
        let victim = path("victim")
        try Data("keep".utf8).write(to: URL(filePath: victim))
        #expect(symlink(victim, "\(target).\(getpid()).tmp") == 0)
        try Data("old".utf8).write(to: URL(filePath: target))
        _ = try OutputFiles(report: target, timeline: nil, chart: nil)
        try OutputFiles.write([(target, Array("new".utf8))])
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(try entries() == ["report.json", "report.json.\(getpid()).tmp", "victim"], "no temporary file is left")
    }

    @Test func aLinkPlantedAtTheTargetDuringTheRunIsRefusedAndNothingIsLeft() throws {
        let target = path("report.json")
        let victim = path("victim")
        try Data("keep".utf8).write(to: URL(filePath: victim))
        _ = try OutputFiles(report: target, timeline: nil, chart: nil)
        #expect(symlink(victim, target) == 0)
        #expect {
            try OutputFiles.write([(path("timeline.csv"), Array("t".utf8)), (target, Array("new".utf8))])
        } throws: { error in
            "\(error)" == "cannot write \(target.debugDescription): is a symbolic link; expected a regular file or a new one"
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(fileType(target) == S_IFLNK)
        #expect(try entries() == ["report.json", "victim"], "no temporary file and no other output is left")
    }

    // MARK: Item 4: two names for one file

    @Test func twoSpellingsOfOneNewFileAreRefused() throws {
        checkRefused(report: path("r.json"), timeline: "\(directory)/./r.json",
                     "--report \(path("r.json").debugDescription) and --timeline \("\(directory)/./r.json".debugDescription) name one file")
    }

    @Test func aHardLinkToAnExistingOutputIsRefusedAndTheFileKept() throws {
        let report = path("r.json")
        try Data("old".utf8).write(to: URL(filePath: report))
        #expect(link(report, path("hard")) == 0)
        #expect {
            _ = try OutputFiles(report: report, timeline: nil, chart: path("hard"))
        } throws: { error in
            "\(error)" == "--report \(report.debugDescription) and --chart \(path("hard").debugDescription) name one file; expected a different file for each"
        }
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "old")
    }

    // MARK: Item 5: every output checked to be creatable

    @Test func aLongFileNameThatFitsIsWrittenAndOneThatDoesNotIsRefused() throws {
        let fits = path(String(repeating: "a", count: 250))
        _ = try OutputFiles(report: fits, timeline: nil, chart: nil)
        try OutputFiles.write([(fits, Array("{}".utf8))])
        #expect(try String(contentsOfFile: fits, encoding: .utf8) == "{}")
        let tooLong = path(String(repeating: "b", count: 256))
        checkRefused(report: tooLong, "--report \(tooLong.debugDescription): the file name is 256 bytes long; expected at most 255")
    }

    @Test func aFileUnderProcIsRefused() {
        checkRefused(timeline: "/proc/x", #"--timeline "/proc/x": cannot create a file in directory "/proc": "#)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/kernel"), "needs sysfs mounted at /sys"))
    func aFileUnderSysIsRefused() {
        checkRefused(chart: "/sys/x", #"--chart "/sys/x": cannot create a file in directory "/sys": "#)
    }
}
