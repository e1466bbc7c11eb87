import CZMQ

extension ZMQSocket {
    /// Sets an option.
    ///
    /// ```swift
    /// try socket.set(.sendHighWaterMark, to: 100)
    /// try socket.set(.receiveTimeout, to: .seconds(2))
    /// ```
    ///
    /// - Throws: ``ZMQError``: `EINVAL` if the value is out of range or the option does not apply to this socket
    ///   type, `ETERM` after the context shut down.
    public func set<Value>(_ option: SocketOption<Value>, to value: Value) throws(ZMQError) {
        let raw = option.encode(value)
        try call("set \(option.name) on \(type) socket") { handle in
            switch raw {
            case .int32(var number):
                return zmq_setsockopt(handle, option.code, &number, MemoryLayout<Int32>.size)
            case .int64(var number):
                return zmq_setsockopt(handle, option.code, &number, MemoryLayout<Int64>.size)
            case .bytes(let bytes) where bytes.isEmpty:
                // An empty value (subscribe to everything) still needs a valid pointer.
                var nothing: UInt8 = 0
                return zmq_setsockopt(handle, option.code, &nothing, 0)
            case .bytes(let bytes):
                return bytes.withUnsafeBytes { zmq_setsockopt(handle, option.code, $0.baseAddress, $0.count) }
            }
        }
    }

    /// Reads an option.
    ///
    /// - Throws: ``ZMQError``: `EINVAL` for a write-only option, `ETERM` after the context shut down.
    public func get<Value>(_ option: SocketOption<Value>) throws(ZMQError) -> Value {
        let raw: SocketOption<Value>.RawValue
        switch option.representation {
        case .int32:
            var number: Int32 = 0
            var size = MemoryLayout<Int32>.size
            try call("get \(option.name) on \(type) socket") { zmq_getsockopt($0, option.code, &number, &size) }
            raw = .int32(number)
        case .int64:
            var number: Int64 = 0
            var size = MemoryLayout<Int64>.size
            try call("get \(option.name) on \(type) socket") { zmq_getsockopt($0, option.code, &number, &size) }
            raw = .int64(number)
        case .bytes(let capacity):
            var bytes = [UInt8](repeating: 0, count: capacity)
            var size = capacity
            try call("get \(option.name) on \(type) socket") { handle in
                bytes.withUnsafeMutableBytes { zmq_getsockopt(handle, option.code, $0.baseAddress, &size) }
            }
            raw = .bytes(Array(bytes.prefix(size)))
        }
        return option.decode(raw)
    }

    /// SUB: receive messages that start with `prefix` (all messages for an empty prefix). Subscriptions add up.
    ///
    /// - Throws: ``ZMQError``: `EINVAL` on a socket that is not SUB or XSUB.
    public func subscribe(_ prefix: [UInt8] = []) throws(ZMQError) {
        try setBytes(ZMQ_SUBSCRIBE, prefix, "subscribe")
    }

    /// SUB: receive messages that start with the UTF-8 bytes of `prefix`.
    public func subscribe(_ prefix: String) throws(ZMQError) {
        try subscribe(Array(prefix.utf8))
    }

    /// SUB: remove one earlier `subscribe(_:)` of the same prefix.
    public func unsubscribe(_ prefix: [UInt8] = []) throws(ZMQError) {
        try setBytes(ZMQ_UNSUBSCRIBE, prefix, "unsubscribe")
    }

    /// SUB: remove one earlier subscription to the UTF-8 bytes of `prefix`.
    public func unsubscribe(_ prefix: String) throws(ZMQError) {
        try unsubscribe(Array(prefix.utf8))
    }

    private func setBytes(_ code: Int32, _ bytes: [UInt8], _ name: String) throws(ZMQError) {
        try set(.bytes(name, code, capacity: 0, encode: { $0 }, decode: { $0 }), to: bytes)
    }
}
