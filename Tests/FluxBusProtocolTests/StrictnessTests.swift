import FluxBusProtocol
import Testing

/// Every way a message can be malformed, each with the exact error the decoder must report.
@Suite("Strict decoding")
struct StrictnessTests {
    let codec = Codec()
    static let signature: [UInt8] = [0x46, 0x4C, 0x58, 0x42, 0x08]

    /// Decodes and returns the error, failing the test if decoding succeeded.
    func failure(_ frames: [[UInt8]], codec: Codec? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> DecodeError? {
        do {
            let message = try (codec ?? self.codec).decode(frames)
            Issue.record("decoded \(message) from malformed frames", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    func body(_ message: Message) -> [UInt8] { codec.encode(message)[1] }

    // MARK: Frames and signature

    @Test("a message without exactly two frames is wrongFrameCount", arguments: [0, 1, 3, 4])
    func wrongFrameCount(_ count: Int) {
        let frames = Array([Self.signature, body(.goodbye(.init(reason: "x"))), [], []].prefix(count))
        let error = failure(frames)
        #expect(error == DecodeError(code: .wrongFrameCount, value: count))
    }

    @Test("frame 0 that is not FLXB plus one version byte is badSignature", arguments: [
        [], [0x46, 0x4C, 0x58, 0x42], [0x46, 0x4C, 0x58, 0x41, 0x02], [0x66, 0x6C, 0x78, 0x62, 0x02],
        [0x46, 0x4C, 0x58, 0x42, 0x08, 0x00],
    ] as [[UInt8]])
    func badSignature(_ frame: [UInt8]) {
        let error = failure([frame, body(.goodbye(.init(reason: "x")))])
        #expect(error?.code == .badSignature)
        #expect(error?.foundVersion == nil)
    }

    @Test("another version byte is unsupportedVersion and exposes the version", arguments: [
        [0x46, 0x4C, 0x58, 0x42, 0x05], [0x46, 0x4C, 0x58, 0x42, 0x02], [0x46, 0x4C, 0x58, 0x42, 0x00],
        [0x46, 0x4C, 0x58, 0x42, 0xFF, 0x01, 0x02],
    ] as [[UInt8]])
    func unsupportedVersion(_ frame: [UInt8]) {
        let error = failure([frame, body(.hello(.init(workerID: "w1", instance: 1, stores: [])))])
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.foundVersion == frame[4])
        #expect(error?.description.contains("version \(frame[4])") == true)
    }

    @Test("an empty body frame is truncated at the command byte")
    func emptyBody() {
        #expect(failure([Self.signature, []]) == DecodeError(code: .truncated, field: "command", value: 1, limit: 0))
    }

    @Test("an undefined command byte is unknownCommand", arguments: [0x00, 0x0D, 0x0F, 0x22, 0x80, 0xFF] as [UInt8])
    func unknownCommand(_ byte: UInt8) {
        #expect(failure([Self.signature, [byte, 0, 0]]) == DecodeError(code: .unknownCommand, value: Int(byte)))
    }

    // MARK: Lengths

    @Test("every proper prefix of every example's body is truncated", arguments: Command.allCases)
    func everyPrefixIsTruncated(_ command: Command) {
        let full = body(RoundTripTests.example(command))
        for length in 1..<full.count {
            let error = failure([Self.signature, Array(full.prefix(length))])
            #expect(error?.code == .truncated, "prefix of \(length) bytes")
            #expect(error?.command == command)
        }
    }

    @Test("truncation names the field, with its path inside lists")
    func truncatedField() {
        let hello = body(.hello(.init(workerID: "w1", instance: 9, stores: [.init(name: "abcd", handlesAll: true, lastApplied: 3)])))
        // Cut inside `instance` (bytes 5...12 after the command and workerID).
        #expect(failure([Self.signature, Array(hello.prefix(8))])
            == DecodeError(code: .truncated, command: .hello, field: "instance", value: 8, limit: 3))
        // Cut inside the chain (appliedEpoch's 8 bytes and the 12 of the crash report follow it).
        #expect(failure([Self.signature, Array(hello.dropLast(22))])
            == DecodeError(code: .truncated, command: .hello, field: "chain", value: 8, limit: 6))
        // Cut inside the first store's lastApplied (the 36 bytes of applied, chain, appliedEpoch and the crash report
        // follow it).
        #expect(failure([Self.signature, Array(hello.dropLast(38))])
            == DecodeError(code: .truncated, command: .hello, field: "stores[0].lastApplied", value: 8, limit: 6))
        // Cut so short that the list count alone cannot fit: a declaration takes at least 15 bytes.
        #expect(failure([Self.signature, Array(hello.dropLast(42))])
            == DecodeError(code: .truncated, command: .hello, field: "stores", value: 15, limit: 13))
    }

    @Test("a string length beyond the frame is truncated, not an allocation")
    func stringLengthBeyondFrame() {
        // GOODBYE reason announces 0x0100 bytes, three follow.
        let error = failure([Self.signature, [0x0B, 0x01, 0x00, 0x61, 0x62, 0x63]])
        #expect(error == DecodeError(code: .truncated, command: .goodbye, field: "reason", value: 256, limit: 3))
    }

    @Test("a bytes length beyond the frame is truncated")
    func bytesLengthBeyondFrame() {
        // SNAPSHOT: epoch, store "s", sequence, digest, size, checksum, chain, transfer "", then state announcing 100
        // bytes with 2 present.
        var frame: [UInt8] = [0x0C] + [UInt8](repeating: 0, count: 8) + [0x00, 0x01, 0x73] + [UInt8](repeating: 0, count: 40)
        frame += [0x00, 0x00]
        frame += [0x00, 0x00, 0x00, 0x64, 0xAA, 0xBB]
        #expect(failure([Self.signature, frame])
            == DecodeError(code: .truncated, command: .snapshot, field: "state", value: 100, limit: 2))
    }

    @Test("a huge list count is refused from the bytes remaining, before allocating")
    func hugeListCount() {
        // HELLO with stores count 0xFFFF and nothing after: each declaration needs at least 15 bytes.
        let frame: [UInt8] = [0x01, 0x00, 0x01, 0x77] + [UInt8](repeating: 0, count: 8) + [0xFF, 0xFF]
        #expect(failure([Self.signature, frame])
            == DecodeError(code: .truncated, command: .hello, field: "stores", value: 65535 * 15, limit: 0))
    }

    @Test("a huge bytes length is refused by the default limit")
    func hugeBytesLength() {
        var frame = body(.dispatch(.init(requestID: "r", actionType: "t", payload: [1, 2])))
        frame.replaceSubrange(7..<11, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(failure([Self.signature, frame]) == DecodeError(
            code: .lengthOverLimit, command: .dispatch, field: "payload", value: Int(UInt32.max), limit: 8 << 20))
    }

    @Test("lengths beyond configured limits are lengthOverLimit")
    func configuredLimits() {
        let tight = Codec(limits: Limits(maxFrameBytes: 64, maxStringBytes: 4, maxBytesField: 2, maxListCount: 1))
        let goodbye = body(.goodbye(.init(reason: "12345")))
        #expect(failure([Self.signature, goodbye], codec: tight)
            == DecodeError(code: .lengthOverLimit, command: .goodbye, field: "reason", value: 5, limit: 4))

        let dispatch = body(.dispatch(.init(requestID: "r", actionType: "t", payload: [1, 2, 3])))
        #expect(failure([Self.signature, dispatch], codec: tight)
            == DecodeError(code: .lengthOverLimit, command: .dispatch, field: "payload", value: 3, limit: 2))

        let plan = body(.action(.init(epoch: 1, sequence: 1, actionType: "t", payload: [], plan: [.init(store: "a", waitsFor: ["b", "c"])])))
        #expect(failure([Self.signature, plan], codec: tight)
            == DecodeError(code: .lengthOverLimit, command: .action, field: "plan[0].waitsFor", value: 2, limit: 1))

        #expect(failure([Self.signature, [0x0B, 0x00, 0x00] + [UInt8](repeating: 0, count: 62)], codec: tight)
            == DecodeError(code: .frameTooLarge, command: .goodbye, value: 65, limit: 64))
    }

    @Test("the default string limit is 4096 bytes")
    func defaultStringLimit() throws {
        let fits = Message.goodbye(.init(reason: String(repeating: "é", count: 2048)))
        #expect(try codec.decode(codec.encode(fits)) == fits)
        let long = Message.goodbye(.init(reason: String(repeating: "a", count: 4097)))
        #expect(failure(codec.encode(long))
            == DecodeError(code: .lengthOverLimit, command: .goodbye, field: "reason", value: 4097, limit: 4096))
    }

    @Test("validate reports exactly what the receiver's decoder would")
    func validatePredictsDecode() throws {
        let long = Message.hello(.init(workerID: "w", instance: 0, stores: [
            .init(name: "ok", handlesAll: true), .init(name: "s", handlesAll: false, handles: [String(repeating: "x", count: 5000)]),
        ]))
        let predicted = #expect(throws: DecodeError.self) { try codec.validate(long) }
        #expect(predicted == DecodeError(code: .lengthOverLimit, command: .hello, field: "stores[1].handles[0]", value: 5000, limit: 4096))
        #expect(failure(codec.encode(long)) == predicted)

        let tight = Codec(limits: Limits(maxFrameBytes: 10))
        let goodbye = Message.goodbye(.init(reason: "123456789"))
        #expect(throws: DecodeError(code: .frameTooLarge, command: .goodbye, value: 12, limit: 10)) {
            try tight.validate(goodbye)
        }
        #expect(failure(tight.encode(goodbye), codec: tight) == DecodeError(code: .frameTooLarge, command: .goodbye, value: 12, limit: 10))
    }

    @Test("encoding what the wire cannot express (a string over 65535 bytes) traps instead of truncating")
    func unrepresentableTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = Codec().encode(.goodbye(.init(reason: String(repeating: "a", count: 65_536))))
        }
        // The largest expressible string encodes (a receiver with default limits would refuse it).
        let largest = Message.goodbye(.init(reason: String(repeating: "a", count: 65_535)))
        #expect(Codec().encode(largest)[1].count == 1 + 2 + 65_535)
    }

    @Test("bytes left after the last field are trailingBytes", arguments: [1, 3])
    func trailingBytes(_ extra: Int) {
        let frame = body(.heartbeat(.init(epoch: 1, sequence: 2))) + [UInt8](repeating: 0, count: extra)
        #expect(failure([Self.signature, frame]) == DecodeError(code: .trailingBytes, command: .heartbeat, value: extra))
    }

    // MARK: Values

    @Test("malformed UTF-8 is invalidUTF8", arguments: [
        [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0xFF],
    ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        let frame: [UInt8] = [0x0B, 0x00, UInt8(bytes.count)] + bytes
        #expect(failure([Self.signature, frame]) == DecodeError(code: .invalidUTF8, command: .goodbye, field: "reason"))
    }

    @Test("malformed UTF-8 inside a list names the item")
    func invalidUTF8InList() {
        var frame = body(.hello(.init(workerID: "w", instance: 0, stores: [.init(name: "a", handlesAll: false, handles: ["ok", "xy"])])))
        frame[frame.count - 45] = 0xFF  // "y" of the second handled type (lastApplied, applied, chain, appliedEpoch, crash follow)
        #expect(failure([Self.signature, frame])
            == DecodeError(code: .invalidUTF8, command: .hello, field: "stores[0].handles[1]"))
    }

    @Test("a bool other than 0 or 1 is invalidBool, presence bytes included")
    func invalidBool() {
        var hello = body(.hello(.init(workerID: "w", instance: 0, stores: [.init(name: "a", handlesAll: true)])))
        hello[hello.count - 47] = 0x02  // handlesAll (handles, lastApplied, applied, chain, appliedEpoch, crash report follow)
        #expect(failure([Self.signature, hello])
            == DecodeError(code: .invalidBool, command: .hello, field: "stores[0].handlesAll", value: 2))

        var dispatch = body(.dispatch(.init(requestID: "r", actionType: "t", payload: [])))
        dispatch[dispatch.count - 3] = 0x80  // error presence (an empty traceparent follows)
        #expect(failure([Self.signature, dispatch])
            == DecodeError(code: .invalidBool, command: .dispatch, field: "error", value: 0x80))
    }

    @Test("a status or worker state outside its table is invalidStatus")
    func invalidStatus() {
        var ack = body(.ack(.init(epoch: 1, sequence: 1, results: [.init(store: "s", status: .ok, digest: 0)])))
        ack[22] = 0x05  // results[0].status, after command, epoch, sequence, count and "s"
        #expect(failure([Self.signature, ack])
            == DecodeError(code: .invalidStatus, command: .ack, field: "results[0].status", value: 5))

        var status = body(.status(.init(requestID: "", epoch: 0, sequence: 0, queueLength: 0, publishEndpoint: "",
                                        workers: [.init(id: "", state: .gone, stores: [], lastApplied: 0, heartbeatAgeMillis: 0)],
                                        stores: [])))
        status[29] = 0x09  // workers[0].state
        #expect(failure([Self.signature, status])
            == DecodeError(code: .invalidStatus, command: .status, field: "workers[0].state", value: 9))
    }

    @Test("unknown REJECT and ERROR codes are valid: the code tables are open")
    func openCodeTables() throws {
        let reject = Message.reject(.init(code: .init(rawValue: 999), reason: "future"))
        #expect(try codec.decode(codec.encode(reject)) == reject)
        #expect(Message.Reject.Code(rawValue: 999).description == "code 999")
        #expect(Message.Error.Code.noLiveReplica.description == "no live replica")
    }

    @Test("the error's description names the code, the message and the field")
    func description() {
        let error = DecodeError(code: .invalidBool, command: .hello, field: "stores[0].handlesAll", value: 2)
        #expect(error.description == "FluxBus decode error (invalidBool) at HELLO.stores[0].handlesAll: bool byte 0x02 is neither 0x00 nor 0x01")
    }
}

@Suite("BUNDLE: all or nothing")
struct BundleStrictnessTests {
    let codec = Codec()

    @Test("a bundle's messages come out in order, and one message alone comes out as itself")
    func order() throws {
        let messages: [Message] = [.heartbeat(.init(epoch: 1, sequence: 2)), .goodbye(.init(reason: "bye")), .ready(.init(epoch: 1, lastApplied: 2))]
        #expect(try codec.decodeAll(codec.encode(codec.bundle(messages))) == messages)
        #expect(try codec.decodeAll(codec.encode(messages[0])) == [messages[0]])
    }

    @Test("an empty bundle, a bundle in a bundle, or one bad message refuses the whole bundle")
    func refusals() throws {
        let empty = codec.encode(.bundle(.init(messages: [])))
        #expect(throws: DecodeError.self) { try codec.decodeAll(empty) }
        let nested = codec.encode(.bundle(.init(messages: [BundledMessage(body: codec.encode(codec.bundle([.goodbye(.init(reason: "x"))]))[1])])))
        #expect(throws: DecodeError.self) { try codec.decodeAll(nested) }
        let good = BundledMessage(body: codec.encode(.goodbye(.init(reason: "fine")))[1])
        let bad = BundledMessage(body: [Command.heartbeat.rawValue, 0, 1])  // truncated
        let error = #expect(throws: DecodeError.self) { try codec.decodeAll(codec.encode(.bundle(.init(messages: [good, bad])))) }
        #expect(error?.code == .truncated)
        #expect(error?.command == .bundle)
        #expect(error?.field?.hasPrefix("messages[1]") == true, "\(String(describing: error))")
    }
}
