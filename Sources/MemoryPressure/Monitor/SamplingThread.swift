#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage

/// A dedicated thread, named `mempressure`, running a ``SamplingLoop``; ``stop()`` wakes it and
/// joins it.
final class SamplingThread: Sendable {
    /// The thread's name, as `top -H` and `/proc/<pid>/task/<tid>/comm` show it.
    static let name = "mempressure"

    let control: SamplingControl
    private let thread: Mutex<pthread_t?>

    /// What the new thread receives: the loop to run.
    private final class Start: Sendable {
        let loop: SamplingLoop
        init(loop: SamplingLoop) { self.loop = loop }
    }

    /// Starts a thread running `loop`, which must use `control`.
    init(running loop: SamplingLoop, control: SamplingControl) throws(Errno) {
        self.control = control
        let start = Unmanaged.passRetained(Start(loop: loop)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            SamplingThread.nameCallingThread()
            var loop = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().loop
            loop.run()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw Errno(rawValue: status)
        }
        self.thread = Mutex(thread)
    }

    /// Names the calling thread ``name`` (`pthread_setname_np` is not visible to Swift without
    /// `_GNU_SOURCE`; writing its `comm` file does the same). A failure leaves the name as it was.
    private static func nameCallingThread() {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = name.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
    }

    /// Asks the loop to stop and waits for the thread to end. Called from the sampling thread itself
    /// (from an observer), it cannot wait for itself, so it lets the thread end on its own instead.
    func stop() {
        control.requestStop()
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    deinit {
        stop()
    }
}
