import FluxBusProtocol

/// Encodes a message through the codec's own `WireWriter` while recording which bytes belong to
/// which field. It produces the annotated hex dumps of `docs/PROTOCOL.md` and tells the fuzzer
/// where the length prefixes are.
struct WireAnnotator: WireVisitor {
    typealias Failure = Never

    /// A run of bytes that encodes one field (or a length prefix, presence byte or count).
    struct Span {
        var range: Range<Int>
        /// What a reader of the dump sees, for example `stores[0].name: string "country"`.
        var label: String
        /// The bytes at the start of the span that hold a length or count (0, 2 or 4).
        var lengthPrefix = 0
    }

    private(set) var writer = WireWriter(capacity: 256)
    private(set) var spans: [Span] = []
    private var prefix = ""

    /// The body frame of `message` and its spans, the command byte included.
    static func annotate(_ message: Message) -> (body: [UInt8], spans: [Span]) {
        var annotator = WireAnnotator()
        annotator.record("", "command \(message.command)") { $0.integer(message.command.rawValue) }
        message.visitBody(&annotator)
        return (annotator.writer.bytes, annotator.spans)
    }

    /// The annotated hex dump of both frames, as `docs/PROTOCOL.md` shows it.
    static func dump(_ message: Message) -> String {
        let signature = Codec.signature
        let (body, spans) = annotate(message)
        var lines = ["frame 0: \(signature.count) bytes"]
        lines += hexLines(signature[...], label: #"signature "FLXB", version \#(Codec.version)"#)
        lines.append("frame 1: \(body.count) bytes")
        for span in spans {
            lines += hexLines(body[span.range], label: span.label)
        }
        return lines.joined(separator: "\n")
    }

    /// At most 16 bytes per line, the label on the first line after a fixed-width hex column.
    private static func hexLines(_ bytes: ArraySlice<UInt8>, label: String) -> [String] {
        let hex = bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        var lines: [String] = []
        var index = 0
        repeat {
            let chunk = hex[index..<min(index + 16, hex.count)].joined(separator: " ")
            lines.append(index == 0 ? chunk.padding(to: 48) + label : chunk)
            index += 16
        } while index < hex.count
        return lines
    }

    private func name(_ field: StaticString) -> String {
        let field = "\(field)"
        return prefix.isEmpty || field.isEmpty ? prefix + field : "\(prefix).\(field)"
    }

    private mutating func record(
        _ field: StaticString, _ description: String, lengthPrefix: Int = 0, _ write: (inout WireWriter) -> Void
    ) {
        let start = writer.count
        write(&writer)
        let label = name(field).isEmpty ? description : "\(name(field)): \(description)"
        spans.append(Span(range: start..<writer.count, label: label, lengthPrefix: lengthPrefix))
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) {
        record(field, "u16 \(value)") { $0.u16(&value, field) }
    }

    mutating func u32(_ value: inout UInt32, _ field: StaticString) {
        record(field, "u32 \(value)") { $0.u32(&value, field) }
    }

    mutating func u64(_ value: inout UInt64, _ field: StaticString) {
        record(field, "u64 \(value)") { $0.u64(&value, field) }
    }

    mutating func bool(_ value: inout Bool, _ field: StaticString) {
        record(field, "bool \(value)") { $0.bool(&value, field) }
    }

    mutating func string(_ value: inout String, _ field: StaticString) {
        record(field, "string \(value.debugDescription)", lengthPrefix: 2) { $0.string(&value, field) }
    }

    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) {
        let printable = value.allSatisfy { (0x20...0x7E).contains($0) }
        let text = printable && !value.isEmpty ? " " + String(decoding: value, as: UTF8.self) : ""
        record(field, "bytes (\(value.count))\(text)", lengthPrefix: 4) { $0.bytes(&value, field) }
    }

    mutating func optionalString(_ value: inout String?, _ field: StaticString) {
        var present = value != nil
        record(field, present ? "present" : "absent") { $0.bool(&present, field) }
        if var string = value { self.string(&string, field) }
    }

    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
        var present = value != nil
        record(field, present ? "present" : "absent") { $0.bool(&present, field) }
        if var bytes = value { self.bytes(&bytes, field) }
    }

    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        record(field, "\(WireSchema.typeName(of: T.self)) \(value.rawValue) (\(value))") { $0.enumeration(&value, field) }
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        record(field, "list of \(items.count)", lengthPrefix: 2) { $0.integer(UInt16(items.count)) }
        let outer = prefix
        let list = name(field)
        for index in items.indices {
            prefix = "\(list)[\(index)]"
            var item = items[index]
            item.visit(&self)
        }
        prefix = outer
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
