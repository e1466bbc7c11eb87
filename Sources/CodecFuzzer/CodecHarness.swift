import FluxBusProtocol

/// The codec's libFuzzer target: one input becomes 1 to 3 frames, which are decoded with the default and with tight
/// ``Limits``, through both of the codec's `decode` entry points. Whatever decodes must re-encode to the very same
/// frames, decode again to the same message, pass `validate`, and decode under the default limits too. Any
/// disagreement traps, which libFuzzer reports as a crash with the input that caused it.
///
/// Input layout: byte 0 chooses the frame count (`1 + byte % 3`); each frame but the last is a length byte and
/// that many bytes; the last frame is the rest. A valid message is `01 05 46 4c 58 42 01` and then its body.
enum CodecHarness {
    static let codecs = [
        Codec(),
        Codec(limits: Limits(maxFrameBytes: 160, maxStringBytes: 8, maxBytesField: 16, maxListCount: 2)),
    ]

    /// Splits an input into frames as described above.
    static func frames(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
        guard let first = input.first else { return [] }
        var rest = input.dropFirst()
        var frames: [[UInt8]] = []
        for _ in 0..<Int(first % 3) {
            let length = Int(rest.popFirst() ?? 0)
            frames.append(Array(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        frames.append(Array(rest))
        return frames
    }

    /// The input that ``frames(_:)`` splits into these two frames.
    static func input(signature: [UInt8], body: [UInt8]) -> [UInt8] {
        [1, UInt8(signature.count)] + signature + body
    }

    /// Runs one input; traps on any disagreement.
    static func run(_ input: UnsafeRawBufferPointer) {
        let frames = frames(input)
        var decodedByDefault: Message?
        for (index, codec) in codecs.enumerated() {
            let decoded = Result { () throws(DecodeError) in try codec.decode(frames) }
            let inPlace = frames.withRawBuffers { views in Result { () throws(DecodeError) in try codec.decode(views) } }
            check(decoded == inPlace, "the two decode entry points disagree: \(decoded) and \(inPlace)", frames)
            guard case .success(let message) = decoded else { continue }
            let again = codec.encode(message)
            check(again == frames, "\(message) re-encodes to other frames: \(again)", frames)
            check((try? codec.decode(again)) == message, "\(message) does not decode again to itself", frames)
            check((try? codec.validate(message)) != nil, "\(message) decoded but does not validate", frames)
            if index == 0 {
                decodedByDefault = message
            } else {
                check(decodedByDefault == message, "decodes under tight limits but not the same under the defaults", frames)
            }
            checkRun(message, frames, codec: codec)
        }
    }

    /// A run that decodeAll takes apart must be what joining its messages again gives: the receiver hands on exactly
    /// the messages the sender joined.
    private static func checkRun(_ message: Message, _ frames: [[UInt8]], codec: Codec) {
        guard case .success(let messages) = Result(catching: { () throws(DecodeError) in try codec.decodeAll(frames) }) else { return }
        switch message {
        case .actions, .acks, .completions:
            let joined = MessageRuns.join(messages, maxItems: .max, maxBytes: .max)
            check(joined == (messages.count == 1 ? messages : [message]), "\(message) takes apart into \(messages), which join into \(joined)", frames)
        default:
            break
        }
    }

    private static func check(_ condition: Bool, _ problem: @autoclosure () -> String, _ frames: [[UInt8]]) {
        guard !condition else { return }
        fatalError("CodecFuzzer: \(problem()); frames: \(frames)")
    }
}

extension Array where Element == [UInt8] {
    /// Calls `body` with a raw view of every frame, all valid for the duration of the call.
    fileprivate func withRawBuffers<R>(_ body: ([UnsafeRawBufferPointer]) -> R, _ done: [UnsafeRawBufferPointer] = []) -> R {
        guard done.count < count else { return body(done) }
        return self[done.count].withUnsafeBytes { view in withRawBuffers(body, done + [view]) }
    }
}

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func codecFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    CodecHarness.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
