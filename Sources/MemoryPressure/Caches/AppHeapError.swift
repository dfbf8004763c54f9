import Jemalloc

/// An allocation in an ``AppHeap`` that could not be made.
public enum AppHeapError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The heap was closed (its app was removed); it makes no new buffers.
    case closed(AppIdentifier)
    /// jemalloc refused: out of memory, or a byte count that is not positive.
    case allocator(JemallocError)

    public var description: String {
        switch self {
        case .closed(let app): "the heap of app \(app) is closed; it makes no new buffers"
        case .allocator(let error): "\(error) (byte counts must be 1 or more)"
        }
    }
}
