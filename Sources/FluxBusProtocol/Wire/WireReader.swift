/// Reads fields from a body frame, checking every length against the bytes that remain and
/// against the limits before it allocates.
///
/// The buffer is only valid for the duration of the decode call that created the reader.
struct WireReader: WireVisitor {
    typealias Failure = DecodeError

    private let buffer: UnsafeBufferPointer<UInt8>
    private let limits: Limits
    private var offset = 0
    /// The last plan and outputs read through ``repeatingList(_:_:)``, with the bytes they were read from.
    private var lastPlan: (bytes: Range<Int>, items: [PlanStep])?
    private var lastOutputs: (bytes: Range<Int>, items: [StoreOutput])?

    init(_ buffer: UnsafeBufferPointer<UInt8>, limits: Limits) {
        self.buffer = buffer
        self.limits = limits
    }

    /// The bytes not yet read.
    var remaining: Int { buffer.count - offset }
    /// How many bytes have been read.
    var position: Int { offset }

    /// Consumes `count` bytes and returns where they start.
    private mutating func take(_ count: Int, _ field: StaticString) throws(DecodeError) -> Int {
        guard count <= remaining else { throw .truncated(field, needed: count, remaining: remaining) }
        defer { offset += count }
        return offset
    }

    /// Consumes `count` bytes and returns them as a view into the frame.
    private mutating func view(_ count: Int, _ field: StaticString) throws(DecodeError) -> UnsafeBufferPointer<UInt8> {
        let start = try take(count, field)
        return UnsafeBufferPointer(rebasing: buffer[start..<start + count])
    }

    mutating func integer<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _ field: StaticString
    ) throws(DecodeError) -> T {
        let start = try take(MemoryLayout<T>.size, field)
        return T(bigEndian: UnsafeRawBufferPointer(buffer).loadUnaligned(fromByteOffset: start, as: T.self))
    }

    /// Reads a length of type `T` and checks it against `limit` and the bytes remaining.
    private mutating func length<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, limit: Int, _ field: StaticString
    ) throws(DecodeError) -> Int {
        let length = Int(try integer(T.self, field))
        guard length <= limit else { throw .overLimit(field, length: length, limit: limit) }
        guard length <= remaining else { throw .truncated(field, needed: length, remaining: remaining) }
        return length
    }

    /// Checks that the whole frame was consumed.
    func finish() throws(DecodeError) {
        guard remaining == 0 else { throw DecodeError(code: .trailingBytes, value: remaining) }
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) throws(DecodeError) {
        value = try integer(UInt16.self, field)
    }

    mutating func u32(_ value: inout UInt32, _ field: StaticString) throws(DecodeError) {
        value = try integer(UInt32.self, field)
    }

    mutating func u64(_ value: inout UInt64, _ field: StaticString) throws(DecodeError) {
        value = try integer(UInt64.self, field)
    }

    mutating func bool(_ value: inout Bool, _ field: StaticString) throws(DecodeError) {
        switch try integer(UInt8.self, field) {
        case 0: value = false
        case 1: value = true
        case let byte: throw DecodeError(code: .invalidBool, field: "\(field)", value: Int(byte))
        }
    }

    mutating func string(_ value: inout String, _ field: StaticString) throws(DecodeError) {
        let length = try length(UInt16.self, limit: limits.maxStringBytes, field)
        // Empty strings are common (an untraced dispatch's `traceparent`, a result's message) and the value starts empty.
        guard length > 0 else { return value = "" }
        let utf8 = try view(length, field)
        // ASCII needs no validation (ids, store and action names nearly always are); the generic check costs more.
        if !utf8.contains(where: { $0 >= 0x80 }) {
            value = String(decoding: utf8, as: UTF8.self)
            return
        }
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw DecodeError(code: .invalidUTF8, field: "\(field)")
        }
        value = string
    }

    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) throws(DecodeError) {
        value = Array(try view(length(UInt32.self, limit: limits.maxBytesField, field), field))
    }

    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) throws(DecodeError) {
        let byte = try integer(UInt8.self, field)
        guard let decoded = T(rawValue: byte) else {
            throw DecodeError(code: .invalidStatus, field: "\(field)", value: Int(byte))
        }
        value = decoded
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) throws(DecodeError) {
        let count = Int(try integer(UInt16.self, field))
        // An empty list (an untraced ACK's `timings`) costs a branch, not the minimum-size check and a reservation.
        guard count > 0 else { return items.removeAll() }
        guard count <= limits.maxListCount else { throw .overLimit(field, length: count, limit: limits.maxListCount) }
        // Every item occupies at least the empty item's size: a count the frame cannot hold
        // fails here, before the array is allocated.
        let needed = count * T.minimumWireSize
        guard needed <= remaining else { throw .truncated(field, needed: needed, remaining: remaining) }
        items.removeAll(keepingCapacity: true)
        items.reserveCapacity(count)
        for index in 0..<count {
            // Read in place: an item built aside and appended was copied in, each of its fields retained, only for
            // the original to release them at once. (A list that fails to decode is thrown away whole.)
            items.append(T())
            do { try items[index].visit(&self) } catch { throw error.nested(in: field, index: index) }
        }
    }

    mutating func repeatingList(_ steps: inout [PlanStep], _ field: StaticString) throws(DecodeError) {
        // Taken out and put back, not copied: a copy would retain the list once more per entry.
        var last = lastPlan.take()
        try repeating(&steps, field, last: &last)
        lastPlan = last
    }

    mutating func repeatingList(_ outputs: inout [StoreOutput], _ field: StaticString) throws(DecodeError) {
        var last = lastOutputs.take()
        try repeating(&outputs, field, last: &last)
        lastOutputs = last
    }

    /// Shares the list read last when the next bytes repeat its bytes: decoding is a function of the bytes, so the
    /// value and the bytes consumed would be the same. A REPLAY's thousand entries then share one plan and one list
    /// of outputs, instead of allocating and freeing a thousand of each.
    private mutating func repeating<T: WireItem>(
        _ items: inout [T], _ field: StaticString, last: inout (bytes: Range<Int>, items: [T])?
    ) throws(DecodeError) {
        if let bytes = last?.bytes, repeats(bytes) {
            items = last!.items
            offset += bytes.count
            return
        }
        let start = offset
        try list(&items, field)
        last = (start..<offset, items)
    }

    /// Whether the bytes from the current offset start with those of `earlier`.
    private func repeats(_ earlier: Range<Int>) -> Bool {
        guard earlier.count <= remaining else { return false }
        return sameBytes(
            UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[earlier])),
            UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[offset..<offset + earlier.count])))
    }
}
