#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
@_exported import MemoryPressureWire

/// The child's end of the channel through which a process started as an app by a
/// memory-pressure system (the `MemoryPressure` library) receives its app's lifecycle callbacks,
/// as an iOS app's `UIApplicationDelegate` does. Depends on nothing but the C library.
///
/// ## A complete child
///
/// ```swift
/// import MemoryPressureClient
///
/// final class AppDelegate: MemoryPressureClientDelegate {
///     private var thumbnails: [String: [UInt8]] = [:]
///
///     func didFinishLaunching(options: ClientLaunchOptions) {
///         if let saved = options.restoredState { restore(saved) }  // where the last instance was
///     }
///
///     func didEnterBackground() {
///         saveState()
///         thumbnails.removeAll()
///     }
///
///     func didReceiveMemoryWarning(level: MemoryWarningLevel) {
///         thumbnails.removeAll()
///     }
///
///     func willTerminate() {
///         saveState()
///     }
///
///     private func saveState() { try? client.saveState(Array(position.utf8)) }
///     private func restore(_ saved: [UInt8]) { position = String(decoding: saved, as: UTF8.self) }
///     private var position = ""
/// }
///
/// do {
///     guard let client = try MemoryPressureClient.fromEnvironment() else {
///         fatalError("not started as an app: \(MemoryPressureClient.environmentName) is not set")
///     }
///     try client.start(delegate: AppDelegate())
///     // … the child's own work, on this thread or others …
///     switch client.wait() {
///     case .terminated?: exit(0)     // willTerminate was answered
///     default: exit(1)               // the system went away (or stop() was called)
///     }
/// } catch {
///     fatalError("\(error)")
/// }
/// ```
///
/// The delegate's methods run one at a time on the client's thread, and the system hears that a
/// callback is done when its method returns. After `willTerminate` has returned the client reads
/// no more, and the process is expected to exit (as an iOS app's process ends once
/// `applicationWillTerminate` returns); a process that does not is sent `SIGTERM`, then `SIGKILL`.
///
/// ## The protocol
/// - **The socket**: the system makes `socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC)` and
///   starts the child with one end inherited as a descriptor, whose number it gives in the
///   environment variable `MEMORY_PRESSURE_CLIENT_FD` (``environmentName``). One datagram is one
///   message. The client marks the descriptor close-on-exec, so that the child's own children do
///   not hold the channel open after the child ends (the variable is left as it is: remove it from
///   the environment of a child of your own).
/// - **System → child**: one datagram of UTF-8 text, `<sequence> <callback>` or
///   `<sequence> <callback> <argument>`, fields separated by one space, no line ending; the
///   sequence is a decimal `UInt64` that increases with each message. The callbacks:
///   `willFinishLaunching`, `didFinishLaunching`, `didBecomeActive`, `willResignActive`,
///   `didEnterBackground`, `willEnterForeground`, `willTerminate`, and `didReceiveMemoryWarning`,
///   whose argument is the level, `warning` or `critical`.
///   From protocol 2 (``ClientProtocol``, whose version the system gives in
///   `MEMORY_PRESSURE_CLIENT_PROTOCOL`), `launchOptions` comes before `willFinishLaunching`, its
///   argument ``ClientLaunchOptions``' fields as `key=value` (percent-encoded, the state in base64);
///   the client keeps them (``launchOptions``) and hands them to the launch callbacks.
/// - **Child → system**: one datagram `<sequence> done` once the callback has returned. Every
///   message with a sequence is answered: one whose callback (or argument) this client does not
///   know is answered without calling the delegate. A datagram without a sequence is dropped.
///   From protocol 2, `saveState <base64>` (``saveState(_:)``) at any time.
/// - The system waits for each lifecycle callback's answer within its deadline, and reads a late
///   answer as none; a child that does not answer in time is ended, as an iOS app that overruns
///   one. It may send a memory warning without waiting for its answer.
///
/// ## Concurrency
/// The client is `Sendable`: ``stop()`` and ``wait()`` may be called from any thread, ``stop()``
/// also from a callback.
public final class MemoryPressureClient: Sendable {
    /// The environment variable that gives the descriptor's number: `MEMORY_PRESSURE_CLIENT_FD`.
    public static let environmentName = "MEMORY_PRESSURE_CLIENT_FD"

    /// Why the client's thread ended.
    public enum Ending: Hashable, Sendable {
        /// `willTerminate` was answered: the process is expected to exit.
        case terminated
        /// The system closed its end (it ended, or gave up on this process), or the socket failed.
        case channelClosed
        /// ``MemoryPressureClient/stop()`` was called.
        case stopped
    }

    /// The channel's descriptor, owned by the client: closed when it goes away.
    public let descriptor: Int32

    /// The client protocol the system speaks (``ClientProtocol``): from protocol 2 it sends the
    /// launch options and keeps the state the child saves.
    public let systemProtocolVersion: Int

    /// The last ``start(delegate:)``'s run.
    private let current = Mutex<Run?>(nil)
    /// The options of this launch, once the system has sent them.
    private let receivedLaunchOptions = Mutex<ClientLaunchOptions?>(nil)

    /// The longest message read whole (launch options with the largest saved state, in base64); a
    /// longer one is no message of the protocol.
    private static let messageCapacity = (ClientProtocol.largestSavedState + 2) / 3 * 4 + 4_096

    /// A client on `descriptor`, which it owns from now on (and closes when it goes away), marked
    /// close-on-exec. Use it where the descriptor comes from elsewhere than the environment; a
    /// descriptor has one client.
    ///
    /// - Parameters:
    ///   - descriptor: A Unix `SOCK_SEQPACKET` socket whose other end is the system's.
    ///   - systemProtocolVersion: The protocol the system speaks; this library's by default.
    /// - Throws: ``MemoryPressureClientError/Code/unusableDescriptor`` when it is not open, or is
    ///   not such a socket.
    public init(descriptor: Int32, systemProtocolVersion: Int = ClientProtocol.version) throws(MemoryPressureClientError) {
        try Self.check(descriptor)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
        self.systemProtocolVersion = systemProtocolVersion
    }

    deinit {
        close(descriptor)
    }

    // MARK: From the environment

    private static let fromEnvironmentClient = Mutex<MemoryPressureClient?>(nil)

    /// The client on the descriptor that `MEMORY_PRESSURE_CLIENT_FD` names, made at the first call
    /// and the same one at every later call; nil when the variable is not set (the process was not
    /// started as an app with a client channel).
    ///
    /// - Throws: ``MemoryPressureClientError/Code/malformedDescriptorNumber`` for a value that is
    ///   not a descriptor number; ``MemoryPressureClientError/Code/unusableDescriptor`` for a
    ///   descriptor that is not open, or is not a Unix `SOCK_SEQPACKET` socket.
    public static func fromEnvironment() throws(MemoryPressureClientError) -> MemoryPressureClient? {
        try fromEnvironmentClient.withLock { client throws(MemoryPressureClientError) -> MemoryPressureClient? in
            if let client { return client }
            guard let value = getenv(environmentName) else { return nil }
            let made = try MemoryPressureClient(
                descriptor: descriptor(fromEnvironmentValue: String(cString: value)), systemProtocolVersion: systemProtocolFromEnvironment()
            )
            client = made
            return made
        }
    }

    /// The system's protocol, from `MEMORY_PRESSURE_CLIENT_PROTOCOL`: 1 when it is not set (a
    /// system older than the variable) or not a number.
    private static func systemProtocolFromEnvironment() -> Int {
        guard let value = getenv(ClientProtocol.environmentName),
              let version = ClientMessage.decimal(String(cString: value).utf8), version >= 1, version <= 1_000
        else { return 1 }
        return Int(version)
    }

    /// The descriptor number `value` gives.
    ///
    /// - Throws: ``MemoryPressureClientError/Code/malformedDescriptorNumber`` unless `value` is
    ///   decimal digits, at most `Int32.max`.
    package static func descriptor(fromEnvironmentValue value: String) throws(MemoryPressureClientError) -> Int32 {
        guard let number = ClientMessage.decimal(value.utf8), number <= UInt64(Int32.max) else {
            throw .malformedDescriptorNumber(value)
        }
        return Int32(number)
    }

    /// Throws unless `descriptor` is an open Unix `SOCK_SEQPACKET` socket.
    private static func check(_ descriptor: Int32) throws(MemoryPressureClientError) {
        guard descriptor >= 0, fcntl(descriptor, F_GETFD) >= 0 else {
            throw .unusableDescriptor(descriptor, "is not open", errno: descriptor >= 0 ? errno : nil)
        }
        func option(_ name: Int32) -> (value: Int32, errno: Int32) {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 ? (value, 0) : (-1, errno)
        }
        let type = option(SO_TYPE)
        guard type.errno == 0 else {
            throw .unusableDescriptor(descriptor, type.errno == ENOTSOCK ? "is not a socket" : "cannot be read as a socket", errno: type.errno)
        }
        let domain = option(SO_DOMAIN)
        guard domain.errno == 0, domain.value == AF_UNIX else {
            throw .unusableDescriptor(descriptor, "is not a Unix socket (address family \(domain.value))", errno: domain.errno == 0 ? nil : domain.errno)
        }
        guard type.value == sequencedPacketType else {
            let name =
                switch type.value {
                case streamType: "SOCK_STREAM"
                case datagramType: "SOCK_DGRAM"
                default: "\(type.value)"
                }
            throw .unusableDescriptor(descriptor, "is a Unix socket of type \(name), not SOCK_SEQPACKET")
        }
    }

    // MARK: Running

    /// Starts the client's thread: it reads each message, calls `delegate`'s method for it, and
    /// answers `done` once the method has returned, until ``stop()``, until `willTerminate` has
    /// been answered, or until the system closes its end. Messages that came before the start
    /// wait in the socket, and are read in order.
    ///
    /// The client holds `delegate` until its thread ends, and is the only one to call it (it is
    /// `sending`: the caller hands it over).
    ///
    /// Starting a client that runs is a programming error (stop it first); one whose thread ended
    /// may be started again.
    ///
    /// - Parameter delegate: The code the callbacks call.
    /// - Throws: ``MemoryPressureClientError/Code/threadCouldNotStart`` when the thread, or the
    ///   socket that wakes it to stop, cannot be made.
    public func start(delegate: sending any MemoryPressureClientDelegate) throws(MemoryPressureClientError) {
        let run = try Run()
        current.withLock { current in
            precondition(current?.hasEnded ?? true, "MemoryPressureClient.start(delegate:) while the client runs; stop() it first")
            current = run
        }
        let context = Unmanaged.passRetained(ThreadStart(client: self, run: run, delegate: delegate)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue().main()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            run.end(.stopped)
            throw .threadCouldNotStart("pthread_create", errno: status)
        }
        pthread_detach(thread)
    }

    /// Stops the client's thread: no callback starts after this returns. Called from another
    /// thread, it waits for the callback that runs, if any, to return and be answered; called from
    /// a callback, the thread ends once that callback has returned and been answered. Messages
    /// not yet read stay in the socket. Does nothing when the client does not run.
    public func stop() {
        guard let run = current.withLock({ $0 }) else { return }
        run.requestStop()
        if !run.isOnItsThread { run.waitUntilEnded() }
    }

    /// Waits until the client's thread ends, and tells why; nil when the client was never started.
    /// Calling it from a callback is a programming error (it would wait for itself).
    ///
    /// - Returns: Why the thread of the last ``start(delegate:)`` ended.
    @discardableResult
    public func wait() -> Ending? {
        guard let run = current.withLock({ $0 }) else { return nil }
        precondition(!run.isOnItsThread, "MemoryPressureClient.wait() from a delegate callback would wait for itself")
        run.waitUntilEnded()
        return run.ending
    }

    // MARK: Launch options and saved state

    /// The options of this launch: why the app launched, how its previous instance ended, and the
    /// state it saved; nil until the system has sent them (before `willFinishLaunching`), and from
    /// a system of protocol 1.
    public var launchOptions: ClientLaunchOptions? {
        receivedLaunchOptions.withLock { $0 }
    }

    /// Saves `state` for the app's next launch, which finds it, byte for byte, in
    /// ``ClientLaunchOptions/restoredState``: the system writes it atomically into the app's state
    /// archive, as `App.saveState(_:)` does for an app in its process, and the last state saved is
    /// the one restored. Call it from `didEnterBackground` (the process may be frozen, and then
    /// terminated, once that returns) and from `willTerminate`.
    ///
    /// The system reads the state before it takes the answer of the callback that saves it, so a
    /// state saved in a callback is kept before the callback is over. One saved between callbacks is
    /// read at the next callback, or at the app's termination.
    ///
    /// - Parameter state: The state, at most ``ClientProtocol/largestSavedState`` bytes.
    /// - Throws: ``MemoryPressureClientError/Code/stateNotAccepted`` for a larger state or a system
    ///   of protocol 1; ``MemoryPressureClientError/Code/stateNotSent`` when the system's end is
    ///   closed, or its queue stays full for a second (it has not read the states saved before).
    public func saveState(_ state: [UInt8]) throws(MemoryPressureClientError) {
        guard systemProtocolVersion >= 2 else { throw .stateNotKept(systemProtocol: systemProtocolVersion) }
        guard state.count <= ClientProtocol.largestSavedState else { throw .stateTooLarge(state.count) }
        var text = ClientMessage.saveStateDatagram(state)
        let deadline = ContinuousClock.now + .seconds(1)
        while true {
            let failure = text.withUTF8 { bytes in
                send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) >= 0 ? 0 : errno
            }
            switch failure {
            case 0:
                return
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM:
                guard ContinuousClock.now < deadline else {
                    throw .stateNotSent("the system's queue stayed full for 1 s; it reads saved states at each callback", errno: failure)
                }
                var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 10)
            default:
                throw .stateNotSent("the system's end is closed", errno: failure)
            }
        }
    }

    // MARK: The client's thread

    /// What the thread is started with. The delegate was handed over (`sending`) to this thread.
    private final class ThreadStart {
        let client: MemoryPressureClient
        let run: Run
        let delegate: any MemoryPressureClientDelegate

        init(client: MemoryPressureClient, run: Run, delegate: any MemoryPressureClientDelegate) {
            self.client = client
            self.run = run
            self.delegate = delegate
        }

        func main() {
            nameCallingThread("pressure-client")
            run.markItsThread()
            run.end(client.read(run, delegate))
        }
    }

    /// Reads, delivers and answers messages until the run ends.
    private func read(_ run: Run, _ delegate: any MemoryPressureClientDelegate) -> Ending {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.messageCapacity) { buffer in
            while true {
                switch wait(for: Int16(POLLIN), run) {
                case .stopped: return .stopped
                case .failed: return .channelClosed
                case .ready(let events):
                    let count = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                    if count < 0 {
                        if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                        return .channelClosed
                    }
                    if count == 0 {
                        // The system's end is closed, or an empty datagram (which carries nothing to answer).
                        if events & Int16(POLLHUP | POLLERR) != 0 { return .channelClosed }
                        continue
                    }
                    // A message that fills the buffer may have been cut: not one of the protocol.
                    guard count < buffer.count, let message = ClientMessage(UnsafeBufferPointer(rebasing: buffer[..<count])) else { continue }
                    if case .launchOptions(let options)? = message.callback {
                        receivedLaunchOptions.withLock { $0 = options }
                    }
                    message.callback?.deliver(to: delegate, launchOptions: launchOptions ?? ClientLaunchOptions())
                    switch answer(message, run) {
                    case .sent: if message.callback == .willTerminate { return .terminated }
                    case .stopped: return .stopped
                    case .failed: return .channelClosed
                    }
                }
            }
        }
    }

    private enum WaitOutcome {
        /// The socket is ready, with these `revents`.
        case ready(Int16)
        /// ``stop()`` was called.
        case stopped
        /// `poll` failed.
        case failed
    }

    /// Waits in `poll` until the socket reports `events` (or is closed, or fails), or ``stop()`` is
    /// called.
    private func wait(for events: Int16, _ run: Run) -> WaitOutcome {
        var entries = (
            pollfd(fd: descriptor, events: events, revents: 0),
            pollfd(fd: run.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        )
        while true {
            let ready = withUnsafeMutableBytes(of: &entries) { poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed
            }
            if entries.1.revents != 0 { return .stopped }
            if entries.0.revents != 0 { return .ready(entries.0.revents) }
        }
    }

    private enum AnswerOutcome { case sent, stopped, failed }

    /// Sends `message`'s `done`; when the system's queue is full, waits until it has room.
    private func answer(_ message: ClientMessage, _ run: Run) -> AnswerOutcome {
        var text = message.answer
        return text.withUTF8 { bytes in
            while true {
                if send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) >= 0 { return .sent }
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM:
                    switch wait(for: Int16(POLLOUT), run) {
                    case .ready: continue
                    case .stopped: return .stopped
                    case .failed: return .failed
                    }
                default:
                    return .failed  // EPIPE, ECONNRESET: the system's end is closed.
                }
            }
        }
    }

    // MARK: A run

    /// One ``start(delegate:)``'s thread: the socket pair that wakes it to stop, and the one that
    /// tells waiters it ended (its write end is closed then, and every waiter's `poll` sees it).
    private final class Run: Sendable {
        /// Readable once ``requestStop()`` was called.
        let wakeDescriptor: Int32
        private let wakeWriteDescriptor: Int32
        /// Readable (at its end of file) once the thread ended.
        private let endedDescriptor: Int32
        private let endedWriteDescriptor: Atomic<Int32>
        private let state = Mutex<(ending: Ending?, thread: UInt?)>((nil, nil))

        init() throws(MemoryPressureClientError) {
            let wake = try Self.socketPair()
            let ended: (Int32, Int32)
            do {
                ended = try Self.socketPair()
            } catch {
                close(wake.0)
                close(wake.1)
                throw error
            }
            (wakeDescriptor, wakeWriteDescriptor) = wake
            endedDescriptor = ended.0
            endedWriteDescriptor = Atomic(ended.1)
        }

        deinit {
            close(wakeDescriptor)
            close(wakeWriteDescriptor)
            close(endedDescriptor)
            let write = endedWriteDescriptor.exchange(-1, ordering: .relaxed)
            if write >= 0 { close(write) }
        }

        private static func socketPair() throws(MemoryPressureClientError) -> (Int32, Int32) {
            var ends: (Int32, Int32) = (-1, -1)
            let status = withUnsafeMutableBytes(of: &ends) {
                socketpair(AF_UNIX, streamType | closeOnExecFlag | nonBlockingFlag, 0, $0.baseAddress!.assumingMemoryBound(to: Int32.self))
            }
            guard status == 0 else { throw .threadCouldNotStart("socketpair", errno: errno) }
            return ends
        }

        /// Why the thread ended; nil while it runs.
        var ending: Ending? { state.withLock { $0.ending } }
        var hasEnded: Bool { ending != nil }

        /// Whether the calling thread is the run's thread.
        var isOnItsThread: Bool { state.withLock { $0.thread } == UInt(pthread_self()) }

        /// Called by the run's thread as it begins.
        func markItsThread() {
            state.withLock { $0.thread = UInt(pthread_self()) }
        }

        func requestStop() {
            var byte: UInt8 = 1
            _ = write(wakeWriteDescriptor, &byte, 1)  // When the socket is full, a stop is pending already.
        }

        /// Records why the thread ended, and wakes the waiters.
        func end(_ ending: Ending) {
            state.withLock { $0.ending = ending }
            let write = endedWriteDescriptor.exchange(-1, ordering: .acquiringAndReleasing)
            if write >= 0 { close(write) }
        }

        func waitUntilEnded() {
            var entry = pollfd(fd: endedDescriptor, events: Int16(POLLIN), revents: 0)
            while !hasEnded {
                _ = poll(&entry, 1, -1)
            }
        }
    }

    #if canImport(Glibc)
    private static let sequencedPacketType = Int32(SOCK_SEQPACKET.rawValue)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let datagramType = Int32(SOCK_DGRAM.rawValue)
    private static let closeOnExecFlag = Int32(SOCK_CLOEXEC.rawValue)
    private static let nonBlockingFlag = Int32(SOCK_NONBLOCK.rawValue)
    #else
    private static let sequencedPacketType = Int32(SOCK_SEQPACKET)
    private static let streamType = Int32(SOCK_STREAM)
    private static let datagramType = Int32(SOCK_DGRAM)
    private static let closeOnExecFlag = Int32(SOCK_CLOEXEC)
    private static let nonBlockingFlag = Int32(SOCK_NONBLOCK)
    #endif
}

/// Names the calling thread `name` (at most 15 bytes), as `top -H` shows it, by writing its `comm`
/// file (`pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`).
private func nameCallingThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    var name = name
    _ = name.withUTF8 { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
