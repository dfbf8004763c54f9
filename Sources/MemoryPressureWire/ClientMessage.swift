/// One message of a client channel, and its answer: the wire format both ends share.
///
/// - **System → child**: one datagram of UTF-8 text, `<sequence> <callback>` or
///   `<sequence> <callback> <argument>`, fields separated by one space, no line ending. The
///   sequence is a decimal `UInt64`; the callbacks are ``ClientCallback``'s names, and
///   `didReceiveMemoryWarning`'s argument is the level, `warning` or `critical`.
///   `launchOptions`' argument is ``ClientLaunchOptions``' fields (protocol 2).
/// - **Child → system**: one datagram `<sequence> done` once the callback of that message has
///   returned. The child answers every message, also one whose callback it does not know. And, at
///   any time, `saveState <base64>`: the state for the app's next launch (protocol 2).
package struct ClientMessage: Hashable, Sendable {
    /// The sequence the answer names.
    package var sequence: UInt64
    /// The callback; nil for one the reader does not know (a newer system's, or an argument it
    /// does not take), which is answered without calling the delegate, so that the system never
    /// waits on it.
    package var callback: ClientCallback?

    package init(sequence: UInt64, callback: ClientCallback?) {
        self.sequence = sequence
        self.callback = callback
    }

    /// Reads `bytes`; nil when they do not start with a sequence and a space (nothing to answer).
    package init?(_ bytes: some Collection<UInt8>) {
        let fields = bytes.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, let sequence = Self.decimal(fields[0]) else { return nil }
        self.sequence = sequence
        let name = fields[1]
        if fields.count == 2 {
            callback = ClientCallback.withoutArgument.first { name.elementsEqual($0.name.utf8) }
        } else if name.elementsEqual("didReceiveMemoryWarning".utf8) {
            callback = MemoryWarningLevel.allCases.first { fields[2].elementsEqual($0.rawValue.utf8) }
                .map(ClientCallback.didReceiveMemoryWarning)
        } else if name.elementsEqual("launchOptions".utf8) {
            callback = ClientLaunchOptions(wireArgument: fields[2]).map(ClientCallback.launchOptions)
        } else {
            callback = nil
        }
    }

    /// The datagram that carries the message: `<sequence> <name>`, or `<sequence> <name> <level>`
    /// for a memory warning; the sequence and a space alone when there is no callback.
    package var datagram: String {
        switch callback {
        case nil: "\(sequence) "
        case .didReceiveMemoryWarning(let level)?: "\(sequence) \(ClientCallback.didReceiveMemoryWarning(level).name) \(level)"
        case .launchOptions(let options)?: "\(sequence) \(ClientCallback.launchOptions(options).name) \(options.wireArgument)"
        case let callback?: "\(sequence) \(callback.name)"
        }
    }

    /// The datagram that carries a state the child saves: `saveState <base64>`.
    package static func saveStateDatagram(_ state: [UInt8]) -> String {
        "\(saveStatePrefix)\(WireText.base64(state))"
    }

    /// The state a `saveState <base64>` datagram carries; nil for any other datagram, or one whose
    /// state does not decode.
    package static func savedState(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let prefix = saveStatePrefix.utf8
        guard bytes.count >= prefix.count, bytes.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        return WireText.decodingBase64(bytes.dropFirst(prefix.count))
    }

    private static let saveStatePrefix = "saveState "

    /// The answer: `<sequence> done`.
    package var answer: String { "\(sequence) done" }

    /// The sequence of an answer, `<sequence> done`; nil for anything else.
    package static func answeredSequence(_ bytes: some Collection<UInt8>) -> UInt64? {
        let suffix = " done".utf8
        guard bytes.count > suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        return decimal(bytes.dropLast(suffix.count))
    }

    /// `digits` as a decimal `UInt64`: one to twenty ASCII digits, no sign, no spaces; nil
    /// otherwise or on overflow.
    package static func decimal(_ digits: some Collection<UInt8>) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}
