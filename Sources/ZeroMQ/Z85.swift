import CZMQ

/// ZeroMQ's Z85 text encoding of binary keys (RFC 32), through libzmq's own codec.
enum Z85 {
    /// Encodes bytes whose count is a multiple of 4; `nil` otherwise.
    static func encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var text = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else { return nil }
        return String(zeroTerminated: text)
    }

    /// Decodes text whose length is a multiple of 5; `nil` for anything else or for characters outside Z85.
    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 5 == 0, utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        var bytes = [UInt8](repeating: 0, count: utf8.count * 4 / 5)
        let decoded = text.withCString { zmq_z85_decode(&bytes, $0) }
        return decoded == nil ? nil : bytes
    }
}
