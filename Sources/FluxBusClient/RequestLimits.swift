import FluxBusProtocol

/// The protocol's size limits, checked by a client before it sends: a request over them would be refused by the
/// coordinator's decoder, or cut off by its socket, and the client would learn only from its timeout.
///
/// The coordinator's own `--max-payload-bytes` (1 MiB by default) may be lower; the coordinator answers a payload
/// over it with ERROR code 2, naming the limit.
package enum RequestLimits {
    /// Throws a ``BusError`` `usage` naming the field, its size and the limit when `message` is over what a
    /// receiver with `limits` accepts.
    package static func check(_ message: Message, limits: Limits = .default) throws(BusError) {
        do {
            try Codec(limits: limits).validate(message)
        } catch {
            throw BusError(code: .usage, message: describe(error, of: message.command, limits: limits))
        }
    }

    /// What is over which limit, and what to do, in words.
    package static func describe(_ error: DecodeError, of command: Command, limits: Limits) -> String {
        let size = error.value ?? 0
        let limit = error.limit ?? 0
        let field = error.field ?? ""
        if error.code == .frameTooLarge {
            return "the \(command) is \(size) bytes, over FluxBus's limit of \(bytes(limits.maxFrameBytes)) for one message; "
                + (command == .dispatchBatch ? "send fewer actions per batch (--batch-size) or smaller payloads" : "send a smaller payload")
        }
        if field == "requestID" {
            return "the request id is \(size) bytes, over FluxBus's limit of \(bytes(limit)); use a shorter one (a UUID is 36 bytes)"
        }
        if field.hasSuffix("payload") {
            let which = actionIndex(in: field).map { " of action \($0 + 1) of the batch" } ?? ""
            return "the payload\(which) is \(size) bytes, over FluxBus's limit of \(bytes(limit)) for one payload "
                + "(the coordinator itself takes at most its --max-payload-bytes, 1 MiB by default); send a smaller payload"
        }
        return "field `\(field)` of the \(command) is \(size) long, over FluxBus's limit of \(limit); shorten it"
    }

    /// The item index in a path such as `actions[3].payload`.
    private static func actionIndex(in field: String) -> Int? {
        guard field.hasPrefix("actions["), let close = field.firstIndex(of: "]") else { return nil }
        return Int(field[field.index(field.startIndex, offsetBy: "actions[".count)..<close])
    }

    /// A byte count as people read it: `8 MiB (8388608 bytes)`, or `4096 bytes`.
    static func bytes(_ count: Int) -> String {
        count >= 1 << 20 && count % (1 << 20) == 0 ? "\(count >> 20) MiB (\(count) bytes)" : "\(count) bytes"
    }
}
