import HTTPTypes
import Hummingbird
import MemoryPressure
import NIOCore
import NIOPosix

/// The page cache: rendered pages by identifier, each in the service's app heap, their size as
/// cost. Owned by the service itself (not a hosted app), so the memory system purges it at every
/// raised level.
typealias PageCache = PurgeableCache<String, HeapBuffer>

/// The pages the service serves, and where their bytes live.
///
/// On a miss, a page is rendered into a buffer of the service's app heap and cached there, so the
/// budget holds exactly for cached pages and for pages being rendered: an allocation that would
/// take the process past its budget waits for the memory system to make room, and is refused when
/// it cannot. While the memory system reports pressure (warning or critical), the service does not
/// ask the heap at all: like an app that has had a memory warning, it stops filling its cache until
/// the level is normal again. A page that is not cached is served uncached (a bypass), rendered a
/// chunk at a time straight into the response.
///
/// Rendering a whole page is CPU-bound, and the allocation before it may block (for up to the
/// memory system's `admissionWait`), so both run on NIO's thread pool, one page per thread: the
/// pages being rendered are never more than its threads, and the threads of the cooperative pool
/// stay free to serve small requests (`/memory`, `/metrics`) and to copy pages out.
///
/// Every response copies its page out a chunk at a time, so a connection holds at most a chunk (and
/// what the channel buffers, up to its high watermark) outside the heap, however large the page.
struct Pages: Sendable {
    /// Where a response's page came from, as its `x-cache` header says.
    enum CacheStatus: String {
        /// From the cache.
        case hit
        /// Rendered into the heap and cached.
        case miss
        /// Rendered into the response only: the memory system reports pressure, or the heap had no
        /// room within the budget.
        case bypass
    }

    /// The bytes a response renders, or copies, into the channel at a time.
    static let chunkByteCount = 64 << 10

    let cache: PageCache
    let heap: AppHeap
    let monitor: PressureMonitor
    let renderer: PageRenderer

    /// The page for `identifier`, from the cache or rendered now.
    func response(for identifier: String) async throws -> Response {
        if let page = cache.value(forKey: identifier) {
            return Self.response(.hit, body: Self.body(copying: page))
        }
        guard monitor.level == .normal, let page = try await renderIntoHeap(identifier) else {
            return Self.response(.bypass, body: Self.body(rendering: renderer.page(identifier), byteCount: renderer.byteCount))
        }
        try cache.setValue(page, forKey: identifier, cost: page.byteCount)
        return Self.response(.miss, body: Self.body(copying: page))
    }

    /// The page rendered into a new buffer in the heap, on NIO's thread pool; nil when the budget
    /// has no room for it, or when pressure rose while the page waited for a thread.
    private func renderIntoHeap(_ identifier: String) async throws -> HeapBuffer? {
        do {
            return try await NIOThreadPool.singleton.runIfActive { [heap, monitor, renderer] in
                guard monitor.level == .normal else { return nil }
                let buffer = try heap.allocate(byteCount: renderer.byteCount)
                var page = renderer.page(identifier)
                buffer.withUnsafeMutableBytes { _ = page.render(into: $0) }
                return buffer
            }
        } catch let error as MemoryPressureError where error.code == .allocationRefused {
            return nil
        }
    }

    private static func response(_ status: CacheStatus, body: ResponseBody) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/html; charset=utf-8", .cacheStatus: status.rawValue],
            body: body
        )
    }

    /// A body that copies `page` out of the heap a chunk at a time, waiting for the channel to take
    /// each.
    private static func body(copying page: HeapBuffer) -> ResponseBody {
        ResponseBody(contentLength: page.byteCount) { writer in
            var offset = 0
            while offset < page.byteCount {
                let chunk = page.withUnsafeBytes { bytes in
                    ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset..<min(offset + chunkByteCount, bytes.count)]))
                }
                try await writer.write(chunk)
                offset += chunk.readableBytes
            }
            try await writer.finish(nil)
        }
    }

    /// A body that renders the page a chunk at a time, waiting for the channel to take each, and
    /// letting other tasks run between chunks so that a large page does not hold a thread of the
    /// cooperative pool for long.
    private static func body(rendering page: PageRenderer.Cursor, byteCount: Int) -> ResponseBody {
        ResponseBody(contentLength: byteCount) { writer in
            var page = page
            while page.remainingBytes > 0 {
                var chunk = ByteBuffer()
                chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: chunkByteCount) { bytes in
                    page.render(into: UnsafeMutableRawBufferPointer(rebasing: bytes.prefix(chunkByteCount)))
                }
                try await writer.write(chunk)
                await Task.yield()
            }
            try await writer.finish(nil)
        }
    }
}

extension HTTPField.Name {
    /// Whether the page came from the cache (``Pages/CacheStatus``).
    static let cacheStatus = HTTPField.Name("x-cache")!
}
