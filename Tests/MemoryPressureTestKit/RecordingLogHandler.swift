import Logging

/// A log handler that keeps the messages, to count them.
public struct RecordingLogHandler: LogHandler {
    /// The messages logged, in order.
    public final class Messages: Sendable {
        private let lines = SharedLog<(level: Logger.Level, message: String)>()
        public var all: [String] { lines.all.map(\.message) }
        func append(_ line: String, at level: Logger.Level) { lines.append((level, line)) }

        /// The messages logged at `level` or above.
        public func messages(atLeast level: Logger.Level) -> [String] {
            lines.all.filter { $0.level >= level }.map(\.message)
        }
    }

    let messages: Messages
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        messages.append(event.message.description, at: event.level)
    }

    /// A logger whose messages end up in the returned list.
    public static func logger() -> (Logger, Messages) {
        let messages = Messages()
        return (Logger(label: "test") { _ in RecordingLogHandler(messages: messages) }, messages)
    }
}
