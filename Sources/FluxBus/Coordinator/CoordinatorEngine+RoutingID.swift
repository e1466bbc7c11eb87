extension CoordinatorEngine {
    /// A routing id as text: itself when it is printable ASCII, else each byte in hex (without leading zeros). Spelled
    /// byte by byte: it names the origin of every dispatch in the log, and `String(_:radix:)` per byte cost 5,000
    /// instructions a dispatch.
    static func describe(_ routingID: [UInt8]) -> String {
        if routingID.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) { return String(decoding: routingID, as: UTF8.self) }
        var text: [UInt8] = []
        text.reserveCapacity(routingID.count * 2)
        for byte in routingID {
            if byte >= 0x10 { text.append(hexDigits[Int(byte >> 4)]) }
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
