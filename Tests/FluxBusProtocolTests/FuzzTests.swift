import FluxBusProtocol
import Foundation
import Testing

/// Throws random and mutated frame sequences at the decoder.
///
/// Replay a run with `FLUXBUS_FUZZ_SEED=<seed>` (printed at the start); change its length with
/// `FLUXBUS_FUZZ_ITERATIONS=<n>` (default 1,000,000).
@Suite("Fuzzing the decoder")
struct FuzzTests {
    /// A valid body and where its length prefixes sit, to mutate with purpose.
    struct Seed {
        var body: [UInt8]
        var lengths: [Range<Int>]
    }

    /// Half the runs decode with limits small enough that every limit is crossed now and then.
    static let codecs = [
        Codec(),
        Codec(limits: Limits(maxFrameBytes: 160, maxStringBytes: 8, maxBytesField: 16, maxListCount: 2)),
    ]

    static func environment(_ name: String) -> UInt64? {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) }
    }

    static func corpus(seed: UInt64) -> [Seed] {
        var filler = RandomFiller(rng: SplitMix64(seed: seed ^ 0x5EED_C0DE))
        let messages = Examples.all + (0..<1024).map { _ in filler.message() }
        return messages.map { message in
            let (body, spans) = WireAnnotator.annotate(message)
            let lengths = spans.filter { $0.lengthPrefix > 0 }.map { $0.range.lowerBound..<$0.range.lowerBound + $0.lengthPrefix }
            return Seed(body: body, lengths: lengths)
        }
    }

    /// One random or mutated frame sequence.
    static func frames(_ rng: inout SplitMix64, corpus: [Seed]) -> [[UInt8]] {
        func random(_ count: ClosedRange<Int>) -> [UInt8] {
            (0..<Int.random(in: count, using: &rng)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
        let seed = corpus[Int(rng.next() % UInt64(corpus.count))]
        var body = seed.body
        var signature = Codec.signature
        switch rng.next() % 10 {
        case 0:  // noise, any number of frames
            return (0..<Int.random(in: 0...4, using: &rng)).map { _ in random(0...24) }
        case 1:  // a real command byte, then noise
            body = [Command.allCases.randomElement(using: &rng)!.rawValue] + random(0...48)
        case 2:  // bit flips
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                body[Int.random(in: 0..<body.count, using: &rng)] ^= 1 << (rng.next() % 8)
            }
        case 3:  // truncation
            body.removeLast(Int.random(in: 1...body.count, using: &rng))
        case 4:  // extension
            body += random(1...8)
        case 5:  // a length prefix overwritten: huge, just too big, zero or random
            if let range = seed.lengths.randomElement(using: &rng) {
                let huge: UInt64 = [.max, UInt64(body.count - range.upperBound + 1), 0, rng.next()].randomElement(using: &rng)!
                for (offset, index) in range.reversed().enumerated() { body[index] = UInt8(truncatingIfNeeded: huge >> (8 * offset)) }
            }
        case 6:  // one byte overwritten: bools, statuses, presence bytes, commands
            body[Int.random(in: 0..<body.count, using: &rng)] = UInt8(truncatingIfNeeded: rng.next() % 5 == 0 ? rng.next() : rng.next() % 4)
        case 7:  // splice of two bodies
            let other = corpus[Int(rng.next() % UInt64(corpus.count))].body
            body = Array(body.prefix(Int.random(in: 0...body.count, using: &rng))) + other.suffix(Int.random(in: 0...other.count, using: &rng))
        case 8:  // signature frame damaged, or frames dropped or added
            switch rng.next() % 3 {
            case 0: signature[Int.random(in: 0..<5, using: &rng)] = UInt8(truncatingIfNeeded: rng.next())
            case 1: signature = Array(signature.prefix(Int.random(in: 0...4, using: &rng))) + random(0...2)
            default: return Bool.random(using: &rng) ? [signature] : [signature, body, random(0...4)]
            }
        default:  // untouched
            break
        }
        return [signature, body]
    }

    @Test("random and mutated frames decode to a message or fail with a DecodeError, never trap")
    func fuzz() {
        let seed = Self.environment("FLUXBUS_FUZZ_SEED") ?? UInt64.random(in: 0...UInt64.max)
        let iterations = Int(Self.environment("FLUXBUS_FUZZ_ITERATIONS") ?? 1_000_000)
        print("FluxBus fuzz: FLUXBUS_FUZZ_SEED=\(seed) FLUXBUS_FUZZ_ITERATIONS=\(iterations)")
        let corpus = Self.corpus(seed: seed)
        var rng = SplitMix64(seed: seed)
        var decoded = 0
        var failures: [DecodeError.Code: Int] = [:]
        var mismatches = 0

        for iteration in 0..<iterations {
            let frames = Self.frames(&rng, corpus: corpus)
            let codec = Self.codecs[iteration & 1]
            do {
                let message = try codec.decode(frames)
                decoded += 1
                // Decoding is exact: the message re-encodes to the very same frames and decodes again.
                let again = codec.encode(message)
                if again != frames || (try? codec.decode(again)) != message {
                    mismatches += 1
                    if mismatches <= 3 { Issue.record("iteration \(iteration): \(frames) decoded to \(message), re-encoded to \(again)") }
                }
            } catch {
                failures[error.code, default: 0] += 1
            }
        }

        print("FluxBus fuzz: \(decoded) decoded, \(iterations - decoded) refused: \(failures.sorted { $0.value > $1.value })")
        #expect(mismatches == 0)
        #expect(decoded + failures.values.reduce(0, +) == iterations)
        guard iterations >= 100_000 else { return }
        // The run reached deep into the decoder: many messages decoded, and every kind of failure was met.
        #expect(decoded > iterations / 10)
        let everyCode: [DecodeError.Code] = [
            .wrongFrameCount, .badSignature, .unsupportedVersion, .frameTooLarge, .unknownCommand, .truncated,
            .trailingBytes, .invalidUTF8, .lengthOverLimit, .invalidBool, .invalidStatus,
        ]
        #expect(everyCode.filter { failures[$0] == nil } == [])
    }
}
