@testable import MemoryPressureRuntime
import Testing

struct AppIdentifierTests {
    @Test(arguments: ["photos", "com.example.Maps", "a", "ünïcødé-app", String(repeating: "x", count: 255)])
    func acceptsSafeNames(_ text: String) throws {
        #expect(try AppIdentifier(text).rawValue == text)
    }

    @Test(arguments: [
        ("", "is empty"),
        (String(repeating: "x", count: 256), "is 256 bytes long"),
        (String(repeating: "é", count: 128), "is 256 bytes long"),
        (".", "relative path"),
        ("..", "relative path"),
        ("a/b", "path separator"),
        ("../etc", "path separator"),
        ("a\\b", "path separator"),
        ("a/\u{301}b", "path separator"),
        ("tab\there", "control character"),
        ("nul\u{0}", "control character"),
        ("line\nbreak", "control character"),
    ])
    func rejectsUnsafeNamesSayingWhy(_ text: String, _ reason: String) {
        let error = #expect(throws: MemoryPressureError.self) {
            _ = try AppIdentifier(text)
        }
        #expect(error?.code == .invalidIdentifier)
        #expect(error?.description.contains(reason) == true)
        #expect(
            error?.description.hasSuffix(
                "; expected 1 to 255 UTF-8 bytes, without '/', '\\\\' or control characters, and not '.' or '..'"
            ) == true
        )
    }
}
