/// Single records in the wire layout, without a command byte or signature: how the coordinator's log stores a
/// completed dispatch or a result, so that what it replays later is byte for byte what it recorded.
extension Codec {
    /// The record's fields in wire order.
    package func encodeRecord<T: WireItem>(_ record: T) -> [UInt8] {
        var item = record
        var sizer = WireSizer(limits: .representable)
        do { try item.visit(&sizer) } catch { preconditionFailure("FluxBus cannot encode this record: \(error)") }
        var writer = WireWriter(capacity: sizer.count)
        item.visit(&writer)
        return writer.bytes
    }

    /// A record decoded from exactly the bytes of `buffer` (which only the call reads), checked against ``limits``
    /// like any message.
    package func decodeRecord<T: WireItem>(_: T.Type, from buffer: UnsafeBufferPointer<UInt8>) throws(DecodeError) -> T {
        var reader = WireReader(buffer, limits: limits)
        var record = T()
        try record.visit(&reader)
        try reader.finish()
        return record
    }
}

extension Codec {
    // The log's hot records, specialized here: a generic call from another module is not.

    /// A completed dispatch's entry in wire layout.
    package func encodeEntry(_ entry: ReplayEntry) -> [UInt8] { encodeRecord(entry) }

    /// A completed dispatch's entry, from ``encodeEntry(_:)``'s bytes read in place (a log row's column).
    package func decodeEntry(_ buffer: UnsafeBufferPointer<UInt8>) throws(DecodeError) -> ReplayEntry {
        try decodeRecord(ReplayEntry.self, from: buffer)
    }
}
