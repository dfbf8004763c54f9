import MemoryPressure
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
        #expect {
            _ = try AppIdentifier(text)
        } throws: { error in
            let description = (error as? AppIdentifierError)?.description ?? ""
            return description.contains(reason) && description.contains("expected 1 to 255 UTF-8 bytes")
        }
    }
}
