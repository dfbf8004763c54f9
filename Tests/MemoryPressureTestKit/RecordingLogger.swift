import InMemoryLogging
import Logging

/// A logger whose messages are kept, to count them: swift-log's `InMemoryLogHandler`.
public func recordingLogger() -> (Logger, InMemoryLogHandler) {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "test") { _ in handler }
    logger.logLevel = .trace
    return (logger, handler)
}

extension InMemoryLogHandler {
    /// The messages logged, in order.
    public var all: [String] { entries.map(\.message.description) }

    /// The messages logged at `level` or above, in order.
    public func messages(atLeast level: Logger.Level) -> [String] {
        entries.filter { $0.level >= level }.map(\.message.description)
    }
}
