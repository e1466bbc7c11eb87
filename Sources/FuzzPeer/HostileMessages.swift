import FluxBusProtocol

/// Makes random and mutated multipart messages for a coordinator's ROUTER: noise, valid messages of every command,
/// mutations of them (bit flips, truncation, extension, length prefixes overwritten with huge values, byte
/// overwrites, splices, damaged signatures and wrong versions, frames dropped or added), and forgeries aimed at the
/// coordinator's state: HELLOs carrying an existing worker's id, ACKs for sequences that do not exist, READYs and
/// HEARTBEATs in the live epoch, FETCHes for another epoch.
///
/// Every frame stays far below `ZMQ_MAXMSGSIZE`, so that libzmq hands every message to the coordinator instead of
/// dropping the connection: length *prefixes* are huge, frames are not.
struct HostileMessages {
    /// What made a message; reported per kind in the summary.
    enum Kind: String, CaseIterable {
        case noise, valid, bitFlip, truncated, extended, hugeLength, byteOverwrite, splice
        case badSignature, wrongVersion, frameCount, forgedHello, forgedAck, forgedReady, forgedHeartbeat, foreignFetch
    }

    private struct Seed {
        var body: [UInt8]
        var prefixes: [Range<Int>]
    }

    private var rng: SplitMix64
    private var fields: RandomFiller<SplitMix64>
    private let corpus: [Seed]
    /// Ids of workers on the bus, to forge HELLOs with.
    private let workerIDs: [String]
    /// The coordinator's epoch, if known, to make forgeries look current.
    private let epoch: UInt64?

    init(seed: UInt64, workerIDs: [String], epoch: UInt64?) {
        rng = SplitMix64(seed: seed)
        var fields = RandomFiller(rng: SplitMix64(seed: seed ^ 0x5EED_C0DE))
        corpus = (0..<512).map { index in
            let command = Command.allCases[index % Command.allCases.count]
            let (body, prefixes) = LengthPrefixes.locate(in: fields.message(command))
            return Seed(body: body, prefixes: prefixes)
        }
        self.fields = fields
        self.workerIDs = workerIDs.isEmpty ? ["w1"] : workerIDs
        self.epoch = epoch
    }

    /// The next candidate message, and how it was made.
    mutating func next() -> (kind: Kind, frames: [[UInt8]]) {
        let kind = Kind.allCases[rng.below(Kind.allCases.count)]
        return (kind, make(kind))
    }

    private mutating func make(_ kind: Kind) -> [[UInt8]] {
        let seed = corpus[rng.below(corpus.count)]
        var body = seed.body
        var signature = Codec.signature
        switch kind {
        case .noise:
            return (0..<1 + rng.below(4)).map { _ in rng.bytes(rng.below(50) == 0 ? rng.below(4097) : rng.below(65)) }
        case .valid:
            body = Codec().encode(fields.message(Command.allCases[rng.below(Command.allCases.count)]))[1]
        case .bitFlip:
            for _ in 0..<1 + rng.below(4) { body[rng.below(body.count)] ^= 1 << (rng.next() % 8) }
        case .truncated:
            body.removeLast(1 + rng.below(body.count))
        case .extended:
            body += rng.bytes(1 + rng.below(8))
        case .hugeLength:
            if let range = seed.prefixes.randomElement(using: &rng) {
                let remaining = UInt64(body.count - range.upperBound)
                let value: UInt64 = [.max, .max >> 1, remaining + 1, remaining &* 1000 + 4097, 0][rng.below(5)]
                for (offset, index) in range.reversed().enumerated() { body[index] = UInt8(truncatingIfNeeded: value >> (8 * offset)) }
            }
        case .byteOverwrite:
            // Bools, statuses, presence bytes and command bytes live in a byte each.
            body[rng.below(body.count)] = UInt8(truncatingIfNeeded: rng.below(5) == 0 ? rng.next() : rng.next() % 4)
        case .splice:
            let other = corpus[rng.below(corpus.count)].body
            body = Array(body.prefix(rng.below(body.count + 1))) + other.suffix(rng.below(other.count + 1))
        case .badSignature:
            if rng.next() & 1 == 0 {
                signature[rng.below(4)] ^= UInt8(truncatingIfNeeded: 1 + rng.below(255))
            } else {
                signature = Array(signature.prefix(rng.below(5))) + rng.bytes(rng.below(3))
            }
        case .wrongVersion:
            signature[4] = UInt8(truncatingIfNeeded: 2 + rng.below(255))
            if rng.below(4) == 0 { signature += rng.bytes(1 + rng.below(3)) }
        case .frameCount:
            return rng.next() & 1 == 0 ? [signature] : [signature, body] + (0..<1 + rng.below(2)).map { _ in rng.bytes(rng.below(9)) }
        case .forgedHello:
            let declaration = StoreDeclaration(
                name: "counter", handlesAll: rng.below(4) == 0, handles: ["counter.add"], lastApplied: rng.next() % 1000)
            let id = workerIDs[rng.below(workerIDs.count)]
            return Codec().encode(.hello(.init(workerID: id, instance: rng.next(), stores: [declaration])))
        case .forgedAck:
            let sequence: UInt64 = [.max, 1 << 40 + rng.next() % 1000, 0, 1 << 32][rng.below(4)]
            let result = StoreResult(store: "counter", status: .ok, output: nil, digest: rng.next())
            return Codec().encode(.ack(.init(epoch: liveEpoch(), sequence: sequence, results: [result])))
        case .forgedReady:
            return Codec().encode(.ready(.init(epoch: liveEpoch(), lastApplied: rng.next() % 100)))
        case .forgedHeartbeat:
            return Codec().encode(.heartbeat(.init(epoch: liveEpoch(), sequence: rng.next() % 100)))
        case .foreignFetch:
            let from = rng.next() % 50
            let to = rng.next() & 1 == 0 ? from + rng.next() % 50 : from / 2
            return Codec().encode(.fetch(.init(epoch: liveEpoch() ^ (1 + rng.next() % 1000), from: from, to: to)))
        }
        return [signature, body]
    }

    /// The coordinator's epoch when known, else a random one.
    private mutating func liveEpoch() -> UInt64 {
        epoch ?? rng.next()
    }
}
