/// Why a ``MemoryPressureClient`` cannot be made or started.
public struct MemoryPressureClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. Opaque and extensible: new codes can be added without breaking a switch.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as it is spelled here: `malformedDescriptorNumber`, ….
        public let description: String

        private init(_ name: String) {
            description = name
        }

        /// The value of `MEMORY_PRESSURE_CLIENT_FD` is not a descriptor number (decimal digits,
        /// at most `Int32.max`).
        public static let malformedDescriptorNumber = Code("malformedDescriptorNumber")
        /// The descriptor is not open, or is not a Unix `SOCK_SEQPACKET` socket.
        public static let unusableDescriptor = Code("unusableDescriptor")
        /// The client's thread, or what it waits on, could not be made (``MemoryPressureClientError/errno`` says why).
        public static let threadCouldNotStart = Code("threadCouldNotStart")
        /// A state to save that is larger than ``ClientProtocol/largestSavedState``, or a system of
        /// protocol 1, which keeps no state.
        public static let stateNotAccepted = Code("stateNotAccepted")
        /// The state could not be sent: the system's end is closed, or its queue stayed full
        /// (``MemoryPressureClientError/errno`` says why).
        public static let stateNotSent = Code("stateNotSent")
    }

    /// The kind of problem.
    public let code: Code
    /// The message: names the problem, the value given and what is accepted.
    public let description: String
    /// The errno of the failed system call, when there is one.
    public let errno: Int32?

    init(_ code: Code, _ description: String, errno: Int32? = nil) {
        self.code = code
        self.description = description
        self.errno = errno
    }

    /// Errors are equal when their codes are: the code is what a program handles, the message is
    /// for people.
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: Whether the two have the same code.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code, which is what equality compares.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    static func malformedDescriptorNumber(_ value: String) -> Self {
        Self(
            .malformedDescriptorNumber,
            "\(MemoryPressureClient.environmentName)=\(value.debugDescription) is not a descriptor number; expected decimal digits, at most \(Int32.max)"
        )
    }

    static func unusableDescriptor(_ descriptor: Int32, _ reason: String, errno: Int32? = nil) -> Self {
        Self(
            .unusableDescriptor,
            "descriptor \(descriptor) of \(MemoryPressureClient.environmentName) \(reason); expected the Unix SOCK_SEQPACKET socket the system gave this process",
            errno: errno
        )
    }

    static func stateTooLarge(_ count: Int) -> Self {
        Self(.stateNotAccepted, "a saved state of \(count) bytes is too large; expected at most \(ClientProtocol.largestSavedState) bytes (96 KiB)")
    }

    static func stateNotKept(systemProtocol: Int) -> Self {
        Self(
            .stateNotAccepted,
            "the system speaks client protocol \(systemProtocol), which keeps no state; expected protocol 2 or later (\(ClientProtocol.environmentName))"
        )
    }

    static func stateNotSent(_ reason: String, errno: Int32? = nil) -> Self {
        Self(.stateNotSent, "the state was not sent: \(reason)", errno: errno)
    }

    static func threadCouldNotStart(_ step: String, errno: Int32) -> Self {
        Self(.threadCouldNotStart, "the memory-pressure client could not start: \(step) failed with errno \(errno)", errno: errno)
    }
}
