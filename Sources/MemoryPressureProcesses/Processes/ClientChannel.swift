#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemPackage
import MemoryPressureRuntime
import MemoryPressureWire

/// The system's end of the channel through which a child process managed as an app receives its
/// app's lifecycle callbacks. The child's end is the `MemoryPressureClient` library.
///
/// ## The protocol
/// - **The socket**: `socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC)`: one datagram is one
///   message, sent and received whole, and both ends see the other's close. The child's end
///   (``childDescriptor``) is inherited by the child (``ChildProcessOptions/inheritedDescriptors``,
///   which numbers it 3, 4, … in the child by its index there), and the number it has in the child
///   is given to it in the environment variable `MEMORY_PRESSURE_CLIENT_FD`
///   (``environmentName``, ``environmentValue(inheritedAt:)``).
/// - **The messages**: the system sends `<sequence> <callback>` (or `<sequence> <callback> <argument>`
///   for a memory warning's level and the launch options) and the child answers `<sequence> done`
///   once the callback has returned; the child may also send `saveState <base64>`, which any read
///   of the socket hands to ``init(stateSaved:)``'s closure: `ClientMessage`, in the
///   MemoryPressureWire module both ends share.
///
/// ## Waiting for the answer
/// ``call(_:timeout:)`` sends a message and blocks the calling thread in `poll` until its `done`
/// arrives (``ClientCallOutcome/answered``), the timeout passes (``ClientCallOutcome/timedOut``),
/// or the child's end is closed: the child ended and nothing else holds its end
/// (``ClientCallOutcome/closed``, from then on at once). It never blocks past the timeout (rounded
/// up to whole milliseconds): messages are sent with `MSG_DONTWAIT | MSG_NOSIGNAL`, and a message
/// the socket cannot take at once (the child does not read, and its queue is full) is
/// ``ClientCallOutcome/timedOut`` at once. Answers that are not the awaited one (the late answer of
/// a call that timed out, the answer of a ``post(_:)``) are read and discarded. ``post(_:)`` sends
/// without waiting, for the memory warnings the system does not wait on.
///
/// The child's end must be closed in this process once the child has it (``closeChildEnd()``, after
/// the spawn): while this process holds it, the child's death closes nothing, and a call to a dead
/// child times out instead of being ``ClientCallOutcome/closed``.
///
/// ## Concurrency
/// Calls may come from several threads at once (a memory warning during a lifecycle call). One
/// `Mutex` guards the sequence, the awaited sequences and the descriptors; sending and reading the
/// socket are done under it, without blocking (`MSG_DONTWAIT`), and the waits in `poll` outside
/// it. Nothing but system calls runs under it. A thread reads an answer only by first peeking at it
/// (`MSG_PEEK`): the answer of another waiting call is left in the socket for that call (which
/// `poll` has woken as well), so no call loses its answer to another.
package final class ClientChannel: Sendable {
    /// The environment variable that gives the child the number of its end: `MEMORY_PRESSURE_CLIENT_FD`.
    package static let environmentName = "MEMORY_PRESSURE_CLIENT_FD"

    /// The value of ``environmentName`` for a child that inherits ``childDescriptor`` at `index` of
    /// ``ChildProcessOptions/inheritedDescriptors``: `3 + index`.
    package static func environmentValue(inheritedAt index: Int) -> String {
        String(3 + index)
    }

    /// The longest answer read whole; a longer datagram is not an answer, and is discarded.
    private static let answerCapacity = 64

    /// The system's end.
    private let descriptor: Int32
    private let state: LibraryLock<State>
    /// Takes each state the child saves (`saveState`), in order, with no lock held.
    private let stateSaved: @Sendable ([UInt8]) -> Void

    private struct State {
        /// The child's end, until it is closed; -1 after.
        var childDescriptor: Int32
        /// The sequence of the last message sent (0: none yet).
        var lastSequence: UInt64 = 0
        /// The sequences whose calls are waiting for their answer.
        var awaited: Set<UInt64> = []
        /// Whether the child's end was found closed (or the socket failed): every call from then on
        /// is ``ClientCallOutcome/closed`` at once.
        var closed = false
        /// The states the child saved, read and not yet handed over.
        var savedStates: [[UInt8]] = []
    }

    /// Makes the socket pair, both ends close-on-exec.
    ///
    /// - Parameter stateSaved: Takes each state the child saves, from the thread that reads it,
    ///   with no lock held.
    /// - Throws: ``/MemoryPressureRuntime/MemoryPressureError/Code/invalidConfiguration`` with the errno when
    ///   `socketpair` fails (too many open descriptors).
    package init(stateSaved: @escaping @Sendable ([UInt8]) -> Void = { _ in }) throws(MemoryPressureError) {
        self.stateSaved = stateSaved
        var ends: (Int32, Int32) = (-1, -1)
        let status = withUnsafeMutableBytes(of: &ends) {
            socketpair(AF_UNIX, Self.sequencedPacketType | Self.closeOnExecFlag, 0, $0.baseAddress!.assumingMemoryBound(to: Int32.self))
        }
        guard status == 0 else { throw .clientChannelCouldNotBeMade(errno: Errno(rawValue: errno)) }
        descriptor = ends.0
        state = LibraryLock(State(childDescriptor: ends.1))
    }

    deinit {
        close(descriptor)
        closeChildEnd()
    }

    // MARK: The child's end

    /// The end to hand to the child, in ``ChildProcessOptions/inheritedDescriptors``; -1 once
    /// ``closeChildEnd()`` has closed it here. Close-on-exec in this process, so no other child
    /// inherits it.
    package var childDescriptor: Int32 {
        state.withLock { $0.childDescriptor }
    }

    /// Closes this process's copy of the child's end, once the child has it (after the spawn), so
    /// that the child's end closes when the child ends. Closing it twice does nothing.
    package func closeChildEnd() {
        let end = state.withLock { state in
            defer { state.childDescriptor = -1 }
            return state.childDescriptor
        }
        if end >= 0 { close(end) }
    }

    // MARK: Calls

    /// Sends `callback` and waits for the child to answer that it has returned.
    ///
    /// Blocks the calling thread in `poll`, at most `timeout` (rounded up to whole milliseconds).
    ///
    /// - Parameters:
    ///   - callback: The callback to run in the child.
    ///   - timeout: How long to wait for its answer.
    /// - Returns: ``ClientCallOutcome/answered`` when its `done` arrived;
    ///   ``ClientCallOutcome/timedOut`` when it did not within `timeout`, or the message could not
    ///   be sent at once (the child's queue is full); ``ClientCallOutcome/closed`` when the child's
    ///   end is closed (the child ended), before or during the wait.
    package func call(_ callback: ClientCallback, timeout: Duration) -> ClientCallOutcome {
        let deadline = ContinuousClock.now + timeout
        let sending = state.withLock { state -> (UInt64, SendOutcome) in
            guard !state.closed else { return (0, .closed) }
            state.lastSequence += 1
            let sequence = state.lastSequence
            let outcome = Self.sendMessage(ClientMessage(sequence: sequence, callback: callback).datagram, on: descriptor)
            switch outcome {
            case .sent: state.awaited.insert(sequence)
            case .full: break
            case .closed: state.closed = true
            }
            return (sequence, outcome)
        }
        let sequence: UInt64
        switch sending {
        case (let sent, .sent): sequence = sent
        case (_, .full): return .timedOut
        case (_, .closed): return .closed
        }

        while true {
            let (step, saved) = state.withLock { state -> (ReadStep, [[UInt8]]) in
                let step = state.closed ? .closed : Self.readAnswers(on: descriptor, awaiting: sequence, &state)
                defer { state.savedStates.removeAll() }
                // A call that ends (answered, closed, or out of time below) awaits no more.
                if step != .answered, step != .closed, ContinuousClock.now < deadline { return (step, state.savedStates) }
                state.awaited.remove(sequence)
                return (step == .answered || step == .closed ? step : .outOfTime, state.savedStates)
            }
            // Read before the answer that follows them: kept before the call returns.
            saved.forEach(stateSaved)
            switch step {
            case .answered: return .answered
            case .closed: return .closed
            case .outOfTime: return .timedOut
            case .nothing:
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, WakePipe.milliseconds(until: deadline))
            case .anotherCallsAnswerFirst:
                // Its call, woken by the same datagram, takes it shortly; the socket stays readable
                // until then, so wait a moment rather than poll it.
                var none = pollfd(fd: -1, events: 0, revents: 0)
                _ = poll(&none, 1, min(1, WakePipe.milliseconds(until: deadline)))
            }
        }
    }

    /// Sends `callback` without waiting for its answer (which is discarded when it comes): for the
    /// memory warnings the system does not wait on. Discards the answers already there first, so
    /// that unawaited answers do not pile up in the socket.
    ///
    /// - Parameter callback: The callback to run in the child.
    /// - Returns: Whether it was sent: false when the child's queue is full or its end is closed.
    @discardableResult
    package func post(_ callback: ClientCallback) -> Bool {
        let (posted, saved) = state.withLock { state -> (Bool, [[UInt8]]) in
            guard !state.closed else { return (false, []) }
            _ = Self.readAnswers(on: descriptor, awaiting: nil, &state)
            defer { state.savedStates.removeAll() }
            guard !state.closed else { return (false, state.savedStates) }
            state.lastSequence += 1
            switch Self.sendMessage(ClientMessage(sequence: state.lastSequence, callback: callback).datagram, on: descriptor) {
            case .sent: return (true, state.savedStates)
            case .full: return (false, state.savedStates)
            case .closed:
                state.closed = true
                return (false, state.savedStates)
            }
        }
        saved.forEach(stateSaved)
        return posted
    }

    /// Reads what the child sent and no call has read, without waiting, and hands over the states
    /// it saved: at the app's termination, so that a state saved between callbacks (or just before
    /// the child was frozen or killed) is kept.
    package func takeSavedStates() {
        let saved = state.withLock { state -> [[UInt8]] in
            // Read even once the child's end is closed: what it sent before stays queued.
            _ = Self.readAnswers(on: descriptor, awaiting: nil, &state)
            defer { state.savedStates.removeAll() }
            return state.savedStates
        }
        saved.forEach(stateSaved)
    }

    // MARK: The socket, under the lock

    private enum SendOutcome { case sent, full, closed }

    /// Sends `text` as one datagram, without blocking and without `SIGPIPE`.
    private static func sendMessage(_ text: String, on descriptor: Int32) -> SendOutcome {
        var text = text
        return text.withUTF8 { bytes in
            while true {
                if send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) >= 0 {
                    return .sent
                }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM: return .full
                default: return .closed  // EPIPE, ECONNRESET: the child's end is closed.
                }
            }
        }
    }

    private enum ReadStep: Equatable {
        /// The awaited answer was read.
        case answered
        /// The child's end is closed, or the socket failed.
        case closed
        /// Nothing more to read now.
        case nothing
        /// The next datagram is the answer of another waiting call, left for it.
        case anotherCallsAnswerFirst
        /// (Not from a read: the call's time is up.)
        case outOfTime
    }

    /// Reads the datagrams waiting in the socket, without blocking, until the answer of `sequence`
    /// (nil: none awaited) or the answer of another waiting call, which is left in the socket.
    /// The states the child saved are kept in `state`, for the caller to hand over once the lock
    /// is released; everything else (answers nobody waits for, datagrams that are neither) is
    /// discarded.
    private static func readAnswers(on descriptor: Int32, awaiting sequence: UInt64?, _ state: inout State) -> ReadStep {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: answerCapacity) { buffer in
            while true {
                // With MSG_TRUNC the count is the whole datagram's, however much of it fits.
                let count = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK) | Int32(MSG_TRUNC))
                if count < 0 {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK: return .nothing
                    default:  // ECONNRESET: the child ended with messages unread.
                        state.closed = true
                        return .closed
                    }
                }
                if count == 0, peerHasClosed(descriptor) {
                    state.closed = true
                    return .closed
                }
                if count >= buffer.count {
                    // Longer than any answer: a saved state, read whole, or nothing of the protocol.
                    if let saved = takeSavedState(from: descriptor, count: count) { state.savedStates.append(saved) }
                    continue
                }
                let datagram = UnsafeBufferPointer(rebasing: buffer[..<count])
                let answer = ClientMessage.answeredSequence(datagram)
                if let answer, answer != sequence, state.awaited.contains(answer) {
                    return .anotherCallsAnswerFirst
                }
                _ = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))  // Take it.
                if let saved = ClientMessage.savedState(datagram) { state.savedStates.append(saved) }
                if let answer, answer == sequence {
                    state.awaited.remove(answer)
                    return .answered
                }
            }
        }
    }

    /// Takes the next datagram, of `count` bytes, whole; the state it saves, or nil when it is no
    /// `saveState` of a state the channel accepts.
    private static func takeSavedState(from descriptor: Int32, count: Int) -> [UInt8]? {
        // The largest state in base64, and the field's name; a longer datagram is taken and dropped.
        let largest = (ClientProtocol.largestSavedState + 2) / 3 * 4 + 64
        var datagram = [UInt8](repeating: 0, count: min(count, largest) + 1)
        let read = datagram.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard read > 0, read < datagram.count else { return nil }
        return ClientMessage.savedState(datagram[..<read])
    }

    /// Whether the child's end is closed: `poll` reports `POLLHUP` (a zero-length read is also
    /// what an empty datagram gives).
    private static func peerHasClosed(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLHUP | POLLERR) != 0
    }

    #if canImport(Glibc)
    private static let sequencedPacketType = Int32(SOCK_SEQPACKET.rawValue)
    private static let closeOnExecFlag = Int32(SOCK_CLOEXEC.rawValue)
    #else
    private static let sequencedPacketType = Int32(SOCK_SEQPACKET)
    private static let closeOnExecFlag = Int32(SOCK_CLOEXEC)
    #endif
}

/// How a ``ClientChannel/call(_:timeout:)`` ended.
package enum ClientCallOutcome: Hashable, Sendable {
    /// The child answered that the callback returned.
    case answered
    /// No answer within the timeout, or the message could not be sent at once (the child does not
    /// read, and its queue is full).
    case timedOut
    /// The child's end is closed: the child has ended (or closed it).
    case closed
}
