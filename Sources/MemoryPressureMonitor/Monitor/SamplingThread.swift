#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage
import MemoryPressureRuntime

/// A dedicated thread, named `mempressure`, running a ``SamplingLoop``; ``stop()`` wakes it and
/// joins it.
final class SamplingThread: Sendable {
    /// The thread's name, as `top -H` and `/proc/<pid>/task/<tid>/comm` show it.
    package static let name = "mempressure"

    package let control: SamplingControl
    private let thread: LibraryLock<pthread_t?>

    /// Starts a thread running `loop`, which must use `control`.
    package init(running loop: SamplingLoop, control: SamplingControl) throws(Errno) {
        self.control = control
        thread = LibraryLock(try PosixThread.start(named: Self.name) {
            var loop = loop
            loop.run()
        })
    }

    /// Asks the loop to stop and waits for the thread to end. Called from the sampling thread itself
    /// (from an observer), it cannot wait for itself, so it lets the thread end on its own instead.
    package func stop() {
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
