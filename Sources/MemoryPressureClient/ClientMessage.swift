extension MemoryPressureClient {
    /// A callback the system sends, as this client reads it.
    package enum Callback: Hashable, Sendable {
        case willFinishLaunching
        case didFinishLaunching
        case didBecomeActive
        case willResignActive
        case didEnterBackground
        case willEnterForeground
        case willTerminate
        case didReceiveMemoryWarning(MemoryWarningLevel)

        /// Calls the delegate's method for the callback.
        func deliver(to delegate: any MemoryPressureClientDelegate) {
            switch self {
            case .willFinishLaunching: delegate.willFinishLaunching()
            case .didFinishLaunching: delegate.didFinishLaunching()
            case .didBecomeActive: delegate.didBecomeActive()
            case .willResignActive: delegate.willResignActive()
            case .didEnterBackground: delegate.didEnterBackground()
            case .willEnterForeground: delegate.willEnterForeground()
            case .willTerminate: delegate.willTerminate()
            case .didReceiveMemoryWarning(let level): delegate.didReceiveMemoryWarning(level: level)
            }
        }
    }

    /// One datagram from the system: `<sequence> <callback>` or `<sequence> <callback> <argument>`.
    package struct Message: Hashable, Sendable {
        /// The sequence to answer with `<sequence> done`.
        package var sequence: UInt64
        /// The callback; nil for one this client does not know (a newer system's, or an argument
        /// it does not take), which is answered without calling the delegate, so that the system
        /// never waits on it.
        package var callback: Callback?

        package init(sequence: UInt64, callback: Callback?) {
            self.sequence = sequence
            self.callback = callback
        }

        /// Reads `bytes`; nil when they do not start with a sequence and a space (nothing to answer).
        package init?(_ bytes: some Collection<UInt8>) {
            let fields = bytes.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count >= 2, let sequence = decimal(fields[0]) else { return nil }
            self.sequence = sequence
            let name = fields[1]
            if fields.count == 2 {
                callback = Self.callbacksWithoutArgument.first { name.elementsEqual($0.name.utf8) }?.callback
            } else if name.elementsEqual("didReceiveMemoryWarning".utf8) {
                callback = MemoryWarningLevel.allCases.first { fields[2].elementsEqual($0.rawValue.utf8) }.map(Callback.didReceiveMemoryWarning)
            } else {
                callback = nil
            }
        }

        /// The callbacks that take no argument, by their names on the wire.
        private static let callbacksWithoutArgument: [(name: String, callback: Callback)] = [
            ("willFinishLaunching", .willFinishLaunching),
            ("didFinishLaunching", .didFinishLaunching),
            ("didBecomeActive", .didBecomeActive),
            ("willResignActive", .willResignActive),
            ("didEnterBackground", .didEnterBackground),
            ("willEnterForeground", .willEnterForeground),
            ("willTerminate", .willTerminate),
        ]

        /// The answer: `<sequence> done`.
        package var answer: String { "\(sequence) done" }
    }
}

/// `digits` as a decimal `UInt64`: one to twenty ASCII digits, no sign, no spaces; nil otherwise or
/// on overflow.
func decimal(_ digits: some Collection<UInt8>) -> UInt64? {
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
