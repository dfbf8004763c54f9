#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxEvents

/// The sampling thread's wait on its descriptors (its wake pipe and the kernel's event files): an
/// epoll set made once, so that each pass is one `epoll_wait` on one descriptor. `poll` registered
/// every descriptor with the kernel again on every pass, a PSI trigger, the cgroup's notifications
/// and the pipe, a hundred times a second under pressure. Where no epoll set can be made, it waits
/// in `poll` as before.
///
/// Level-triggered, as `poll` is, and the event bits are `poll`'s (`EPOLLIN` is `POLLIN`, …), so
/// what the wait reports reads as `poll`'s `revents`. Not copyable: it owns the epoll set, closed
/// with it; and a value, so that the sampling thread's every wait does not pay for the dynamic
/// exclusivity checks of a class's stored properties.
struct DescriptorWait: ~Copyable {
    private var descriptors: [pollfd]
    /// The epoll set, or -1 to wait in `poll`.
    private let epoll: Int32
    /// Where `epoll_wait` writes the ready descriptors: one slot each.
    private var ready: [epoll_event]

    /// Waits on `descriptors`, each for its `events`.
    package init(_ descriptors: [pollfd]) {
        self.descriptors = descriptors
        ready = Array(repeating: epoll_event(), count: max(1, descriptors.count))
        var epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        for descriptor in descriptors where epoll >= 0 {
            var event = epoll_event()
            event.events = UInt32(UInt16(bitPattern: descriptor.events))
            event.data.fd = descriptor.fd
            if epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor.fd, &event) != 0 {
                close(epoll)
                epoll = -1
            }
        }
        self.epoll = epoll
    }

    /// Waits up to `milliseconds` (-1: no limit) for a descriptor to be ready, and returns the
    /// ready ones with what they reported in `revents`; none when the time passed first.
    package mutating func wait(milliseconds: Int32) -> [pollfd] {
        guard epoll >= 0 else {
            guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { return [] }
            return descriptors.filter { $0.revents != 0 }
        }
        let count = epoll_wait(epoll, &ready, Int32(ready.count), milliseconds)
        guard count > 0 else { return [] }
        return ready.prefix(Int(count)).map { event in
            pollfd(fd: event.data.fd, events: 0, revents: Int16(truncatingIfNeeded: event.events))
        }
    }

    deinit {
        if epoll >= 0 { close(epoll) }
    }
}
