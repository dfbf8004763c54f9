import Logging

extension Logger {
    /// This logger, whose handler is called through ``callOut(_:)`` in debug builds: a log handler
    /// is code of the service's own (it may take a lock, block, or call back into the library), so
    /// logging while one of the library's locks is held traps there. In release builds, this
    /// logger as it is.
    package var callingOut: Logger {
        #if DEBUG
        guard !(handler is CallOutLogHandler) else { return self }
        var logger = self
        logger.handler = CallOutLogHandler(wrapped: handler)
        return logger
        #else
        return self
        #endif
    }
}

/// A log handler that passes everything to the one it wraps, calling it through ``callOut(_:)``.
struct CallOutLogHandler: LogHandler {
    var wrapped: any LogHandler

    package func log(event: LogEvent) {
        callOut { wrapped.log(event: event) }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    package var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    package var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }
}
