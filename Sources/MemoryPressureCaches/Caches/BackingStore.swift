import Synchronization
import MemoryPressureRuntime

/// Memory a view owns that can be released under pressure and rebuilt on its next use, such as a
/// backing store of pixels.
public protocol ReleasableStore: AnyObject, Sendable {
    /// Bytes the store holds now: 0 once released and until it is rebuilt.
    var byteCount: Int { get }

    /// Whether the view that owns the store is on screen: a visible store is kept on warnings and at
    /// critical pressure (it is released on entering the background all the same). A view
    /// controller sets it for the stores of its view tree as its own `isVisible` changes; the
    /// system reads it from outside the app's run loop.
    var isVisible: Bool { get set }

    /// Releases the store's bytes; the store rebuilds them on its next use.
    ///
    /// - Returns: The bytes released: 0 when the store was already released.
    @discardableResult
    func release() -> Int
}

/// A view's pixels: a buffer of width x height x bytes per pixel in its app's heap, released under
/// pressure and re-rendered on its first use after that.
///
/// The first use renders it too. A reader holds the buffer it was given for the length of its
/// access, so a release during the access only lets the store forget the buffer; the bytes are
/// freed when the access ends.
public final class BackingStore: ReleasableStore {
    /// Draws the store's content into fresh bytes.
    public typealias Renderer = @Sendable (_ pixels: UnsafeMutableRawBufferPointer) -> Void

    /// Pixels per row.
    public let width: Int
    /// Rows.
    public let height: Int
    /// Bytes per pixel.
    package let bytesPerPixel: Int
    /// The heap the pixels live in.
    package let heap: AppHeap

    private let render: Renderer
    private let pixels = LibraryLock<HeapBuffer?>(nil)
    private let visible = Atomic<Bool>(false)
    private let renders = Atomic<Int>(0)
    /// The threads running the renderer now (`PosixThread.current`): a use from one of them is the
    /// renderer reading its own store, which would render again without end.
    private let renderingThreads = LibraryLock<[UInt]>([])

    /// Makes a store of `width` x `height` pixels of `bytesPerPixel` bytes in `heap`, drawn by
    /// `render` on first use and after each release. Dimensions must be at least 1. Nothing is
    /// allocated until the first use.
    ///
    /// Register the store with `MemorySystem.register(_:owner:)` so the system releases it.
    ///
    /// - Parameters:
    ///   - width: Pixels per row, at least 1.
    ///   - height: Rows, at least 1.
    ///   - bytesPerPixel: Bytes per pixel, at least 1; 4 by default.
    ///   - heap: The heap the pixels live in, usually the owning app's
    ///     (`MemorySystem.heap(for:)`).
    ///   - render: Draws the content into fresh bytes, on the thread of the use that needs them,
    ///     outside the store's lock: it may read the store (``byteCount``, ``isVisible``), but not
    ///     its pixels, which it is drawing (``withPixels(_:)`` throws there).
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidArgument`` when a
    ///   dimension is less than 1 or the total size overflows `Int`.
    public init(
        width: Int,
        height: Int,
        bytesPerPixel: Int = 4,
        in heap: AppHeap,
        render: @escaping Renderer
    ) throws(MemoryPressureError) {
        let invalid = MemoryPressureError.invalidDimensions(width: width, height: height, bytesPerPixel: bytesPerPixel)
        guard width > 0, height > 0, bytesPerPixel > 0 else { throw invalid }
        let (rowBytes, rowOverflow) = width.multipliedReportingOverflow(by: bytesPerPixel)
        let (_, totalOverflow) = rowBytes.multipliedReportingOverflow(by: height)
        guard !rowOverflow, !totalOverflow else { throw invalid }
        self.width = width
        self.height = height
        self.bytesPerPixel = bytesPerPixel
        self.heap = heap
        self.render = render
    }

    /// The size of the pixels when present.
    package var capacity: Int { width * height * bytesPerPixel }

    /// Calls `body` with the pixels, rendering them first if they were released (or never made).
    ///
    /// A release during `body` only makes the store forget the buffer; its bytes are freed when
    /// `body` returns.
    ///
    /// - Parameter body: Reads the pixels; the buffer is valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError`` with ``/MemoryPressureRuntime/MemoryPressureError/Code/heapClosed`` when the
    ///   pixels must be rendered and the heap is closed (its app was terminated),
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/allocationFailed`` when jemalloc cannot allocate them, or
    ///   ``/MemoryPressureRuntime/MemoryPressureError/Code/reentrantCall`` when called by this store's renderer while it
    ///   draws the pixels.
    public func withPixels<Result: Sendable>(
        _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(MemoryPressureError) -> Result {
        if let buffer = pixels.withLock({ $0 }) {
            return buffer.withUnsafeBytes(body)
        }
        // The renderer is the owner's code: it runs outside the lock, so that it may use the store
        // and a release (a purge) never waits for a rendering. Two first uses at once may both
        // render; the first to finish is kept and the other's bytes are freed.
        let thread = PosixThread.current
        let isRendering = renderingThreads.withLock { threads in
            if threads.contains(thread) { return true }
            threads.append(thread)
            return false
        }
        guard !isRendering else { throw .renderReadsOwnStore(width: width, height: height) }
        defer {
            renderingThreads.withLock { $0.removeAll { $0 == thread } }
        }
        let rendered = try heap.allocate(byteCount: capacity)
        rendered.withUnsafeMutableBytes(render)
        renders.add(1, ordering: .relaxed)
        let buffer = pixels.withLock { pixels in
            if let pixels { return pixels }
            pixels = rendered
            return rendered
        }
        return buffer.withUnsafeBytes(body)
    }

    /// Whether the owning view is on screen; the view sets it.
    public var isVisible: Bool {
        get { visible.load(ordering: .relaxed) }
        set { visible.store(newValue, ordering: .relaxed) }
    }

    /// The number of times the pixels have been rendered.
    package var renderCount: Int { renders.load(ordering: .relaxed) }

    /// The bytes of the pixels while they are present: 0 once released and until the next use.
    public var byteCount: Int { pixels.withLock { $0 == nil ? 0 : capacity } }

    /// Releases the pixels; the next use renders them again. A reader in ``withPixels(_:)`` keeps
    /// its buffer until it returns, and the bytes are freed then.
    ///
    /// - Returns: The bytes released: 0 when the pixels were already released.
    @discardableResult
    public func release() -> Int {
        // The buffer is freed here, after the lock is released.
        let released = pixels.withLock { pixels in
            let released = pixels
            pixels = nil
            return released
        }
        return released?.byteCount ?? 0
    }
}
