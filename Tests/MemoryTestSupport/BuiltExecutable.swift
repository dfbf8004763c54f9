import Foundation

/// The executable `name` (`mempressure`, say) in the build directory the running tests come from:
/// the nearest directory above the test binary that holds it.
///
/// - Throws: ``ExecutableNotBuilt`` when there is none.
public func builtExecutable(named name: String) throws -> URL {
    let testBinary = URL(filePath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    var directory = testBinary.deletingLastPathComponent()
    while directory.path != "/" {
        let candidate = directory.appending(path: name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw ExecutableNotBuilt(name: name, testBinary: testBinary.path)
}

/// No executable of that name beside the test binary.
public struct ExecutableNotBuilt: Error, CustomStringConvertible {
    /// The executable looked for.
    public let name: String
    /// The test binary it was looked for beside.
    public let testBinary: String

    public var description: String { "no \(name) executable beside \(testBinary); build it first (swift build)" }
}
