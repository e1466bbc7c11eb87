import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ZMQSocket {
    /// Sends one multipart message. libzmq delivers all frames or none.
    ///
    /// - Parameters:
    ///   - frames: The frames, at least one. Each is copied once, into a libzmq message.
    ///   - nonBlocking: When `true`, returns `false` instead of waiting if the message cannot be queued now (the
    ///     high-water mark is reached, or a DEALER/PUSH has no peer yet). PUB and XPUB never block: at the
    ///     high-water mark they drop the message for that subscriber and still return `true`.
    /// - Returns: `true` once the message is queued; `false` only for a non-blocking send that would block.
    /// - Throws: ``ZMQError``: `EHOSTUNREACH` (ROUTER with ``SocketOption/routerMandatory`` and an unknown id),
    ///   `EAGAIN` when a blocking send's ``SocketOption/sendTimeout`` expires, `EFSM` for REQ/REP out of turn,
    ///   `ETERM` after the context shut down, `EINVAL` for an empty `frames`.
    @discardableResult
    public func send(_ frames: [[UInt8]], nonBlocking: Bool = false) throws(ZMQError) -> Bool {
        guard !frames.isEmpty else {
            throw ZMQError(errno: EINVAL, operation: "send an empty message (a message needs at least one frame)")
        }
        let baseFlags = nonBlocking ? ZMQ_DONTWAIT : 0
        for (index, frame) in frames.enumerated() {
            let flags = baseFlags | (index < frames.count - 1 ? ZMQ_SNDMORE : 0)
            do {
                try call("send frame \(index + 1)/\(frames.count) on \(type) socket") { handle in
                    frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                }
            } catch where error.isWouldBlock && nonBlocking && index == 0 {
                // Nothing was queued; once the first frame is in, libzmq accepts the rest of the message.
                return false
            }
        }
        return true
    }

    /// Sends a single-frame message. See the multipart `send(_:nonBlocking:)`.
    @discardableResult
    public func send(_ frame: [UInt8], nonBlocking: Bool = false) throws(ZMQError) -> Bool {
        try send([frame], nonBlocking: nonBlocking)
    }

    /// Waits for the next message and returns all its frames.
    ///
    /// - Throws: ``ZMQError``: `EAGAIN` (``ZMQError/isWouldBlock``) when ``SocketOption/receiveTimeout`` is set and
    ///   expires, `ETERM` after the context shut down, `ENOTSUP` for a socket type that cannot receive (PUB).
    public func receive() throws(ZMQError) -> [[UInt8]] {
        // Without a non-blocking flag, nil can only mean a receive timeout, which a blocking call reports as EAGAIN.
        guard let frames = try receiveMessage(flags: 0) else {
            throw ZMQError(errno: EAGAIN, operation: "receive on \(type) socket (receive timeout expired)")
        }
        return frames
    }

    /// Waits at most `timeout` for the next message.
    ///
    /// - Returns: The frames, or `nil` if no message arrived in time.
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down.
    public func receive(timeout: Duration) throws(ZMQError) -> [[UInt8]]? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var poller = ZMQPoller()
        poller.add(self, events: .readable)
        while true {
            if let frames = try tryReceive() { return frames }
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return nil }
            _ = try poller.poll(timeout: remaining)
        }
    }

    /// Returns the next message if one is ready, without waiting.
    ///
    /// - Returns: The frames, or `nil` if none is ready (`EAGAIN`).
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down.
    public func tryReceive() throws(ZMQError) -> [[UInt8]]? {
        try receiveMessage(flags: ZMQ_DONTWAIT)
    }

    /// Returns the next message if one is ready, with the user id that the ZAP handler gave its sender when it was
    /// admitted (libzmq's `User-Id` message property; nil when the connection was not authenticated by ZAP).
    ///
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down.
    public func tryReceiveWithUserID() throws(ZMQError) -> (frames: [[UInt8]], userID: String?)? {
        guard let received = try tryReceiveWithMetadata() else { return nil }
        return (received.frames, received.userID)
    }

    /// Returns the next message if one is ready, with its sender's ZAP user id (as ``tryReceiveWithUserID()``) and
    /// its peer address: libzmq's `Peer-Address` property, the remote IP address over tcp://, nil where the
    /// transport gives none (ipc://, inproc://).
    ///
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down.
    public func tryReceiveWithMetadata() throws(ZMQError) -> (frames: [[UInt8]], userID: String?, peerAddress: String?)? {
        var userID: String?
        var peerAddress: String?
        guard let frames = try receiveMessage(flags: ZMQ_DONTWAIT, userID: &userID, peerAddress: &peerAddress) else {
            return nil
        }
        return (frames, userID, peerAddress.flatMap { $0.isEmpty ? nil : $0 })
    }

    private func receiveMessage(flags: Int32) throws(ZMQError) -> [[UInt8]]? {
        var ignored: String?
        var ignoredAddress: String?
        return try receiveMessage(flags: flags, userID: &ignored, peerAddress: &ignoredAddress)
    }

    /// Receives all frames of one message into Swift arrays, copying each frame once, straight out of the
    /// `zmq_msg_t`. Returns `nil` if the first frame would block. Reads the `User-Id` and `Peer-Address` properties
    /// from the first frame that has them.
    private func receiveMessage(flags: Int32, userID: inout String?, peerAddress: inout String?) throws(ZMQError) -> [[UInt8]]? {
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var frames: [[UInt8]] = []
        repeat {
            // zmq_msg_recv releases the previous frame's content before filling the message again.
            let received = try callUnlessWouldBlock("receive frame \(frames.count + 1) on \(type) socket") {
                zmq_msg_recv(&message, $0, flags)
            }
            guard received != nil else {
                // libzmq hands over a message's frames together, so only the first can be missing.
                guard frames.isEmpty else {
                    throw ZMQError(errno: EAGAIN, operation: "receive frame \(frames.count + 1) on \(type) socket")
                }
                noteDrained()
                return nil
            }
            // A ROUTER makes up the routing-id frame itself, so it carries no peer metadata: take the properties
            // from the first frame that has them.
            if userID == nil, let property = zmq_msg_gets(&message, "User-Id") {
                userID = String(cString: property)
            }
            if peerAddress == nil, let property = zmq_msg_gets(&message, "Peer-Address") {
                peerAddress = String(cString: property)
            }
            let size = zmq_msg_size(&message)
            let data = zmq_msg_data(&message)
            // Copied by the array's initializer from a buffer, which is specialized here: `unsafeUninitializedCapacity`
            // allocates through a generic entry point of the standard library that looks up the storage's type
            // metadata at every call, some 400 instructions a frame more.
            frames.append([UInt8](UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)))
        } while zmq_msg_more(&message) != 0
        return frames
    }
}
