#if canImport(Glibc)
import Glibc
#endif
import MemoryPressureClient
import MemoryPressureWire
import Testing

/// Protocol 2 of the client channel: the launch options and saved states on the wire, and what
/// the client refuses.
struct ClientProtocolTests {
    @Test(arguments: [
        ClientLaunchOptions(),
        ClientLaunchOptions(reason: "backgroundEvent", reasonDetail: "fetch 100% done/ünïcode=ok"),
        ClientLaunchOptions(
            reason: "url", reasonDetail: "https://example.com/a b?c=d",
            previousTermination: .init(reason: "systemPressure", signal: 9, time: 1_795_000_000.25), restoredState: Array(0...255)
        ),
        ClientLaunchOptions(previousTermination: .init(reason: "processExited", exitStatus: 3), restoredState: []),
        ClientLaunchOptions(restoredState: Array("position 1".utf8)),
    ])
    func launchOptionsCrossTheWireUnchanged(_ options: ClientLaunchOptions) throws {
        let message = ClientMessage(sequence: 7, callback: .launchOptions(options))
        let datagram = message.datagram
        #expect(!datagram.dropFirst("7 launchOptions ".count).contains { $0 == "\n" })
        let read = try #require(ClientMessage(Array(datagram.utf8)))
        #expect(read == message)
    }

    @Test(arguments: [
        "1 launchOptions previous=explicit",  // no reason
        "1 launchOptions reason=user state=abc",  // not base64
        "1 launchOptions reason=user state=A===",  // too much padding
        "1 launchOptions reason=%ZZ",  // not percent-encoding
        "1 launchOptions reason=%C3",  // not UTF-8
        "1 launchOptions reason",  // no `=`
    ])
    func malformedLaunchOptionsAreAnsweredWithoutACallback(_ text: String) throws {
        let message = try #require(ClientMessage(Array(text.utf8)), "a message with a sequence is answered")
        #expect(message.sequence == 1)
        #expect(message.callback == nil)
    }

    @Test func unknownFieldsOfANewerSystemAreSkipped() throws {
        let message = try #require(ClientMessage(Array("2 launchOptions reason=user colour=blue".utf8)))
        #expect(message.callback == .launchOptions(ClientLaunchOptions()))
    }

    @Test(arguments: [[], [0], [0, 1], [0, 1, 2], Array("position 12".utf8), Array(repeating: 0xFF, count: 1_000)])
    func aSavedStateCrossesTheWireUnchanged(_ state: [UInt8]) {
        let datagram = ClientMessage.saveStateDatagram(state)
        #expect(ClientMessage.savedState(Array(datagram.utf8)) == state)
        #expect(ClientMessage.answeredSequence(Array(datagram.utf8)) == nil)
    }

    @Test func otherDatagramsSaveNothing() {
        for text in ["3 done", "saveState", "saveState ***", "savestate AAAA"] {
            #expect(ClientMessage.savedState(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aStateTooLargeOrForASystemOfTheFirstProtocolIsRefused() throws {
        var ends: (Int32, Int32) = (-1, -1)
        #expect(withUnsafeMutableBytes(of: &ends) { socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, $0.baseAddress!.assumingMemoryBound(to: Int32.self)) } == 0)
        defer { close(ends.1) }
        let client = try MemoryPressureClient(descriptor: ends.0)
        let tooLarge = #expect(throws: MemoryPressureClientError.self) {
            try client.saveState(Array(repeating: 1, count: ClientProtocol.largestSavedState + 1))
        }
        #expect(tooLarge?.code == .stateNotAccepted)
        #expect(tooLarge?.description.contains("expected at most \(ClientProtocol.largestSavedState) bytes") == true)
        try client.saveState(Array(repeating: 1, count: ClientProtocol.largestSavedState))
        var received = [UInt8](repeating: 0, count: 200_000)
        let count = recv(ends.1, &received, received.count, 0)
        #expect(ClientMessage.savedState(received[..<max(count, 0)]) == Array(repeating: 1, count: ClientProtocol.largestSavedState))

        var older: (Int32, Int32) = (-1, -1)
        #expect(withUnsafeMutableBytes(of: &older) { socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, $0.baseAddress!.assumingMemoryBound(to: Int32.self)) } == 0)
        defer { close(older.1) }
        let clientOfAnOlderSystem = try MemoryPressureClient(descriptor: older.0, systemProtocolVersion: 1)
        let notKept = #expect(throws: MemoryPressureClientError.self) { try clientOfAnOlderSystem.saveState([1]) }
        #expect(notKept?.code == .stateNotAccepted)
        #expect(notKept?.description.contains("expected protocol 2 or later") == true)
    }
}
