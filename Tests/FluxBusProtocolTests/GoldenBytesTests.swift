import FluxBusProtocol
import Testing

/// Exact bytes written out by hand: these pin the layout `docs/PROTOCOL.md` promises.
@Suite("Golden bytes")
struct GoldenBytesTests {
    let codec = Codec()

    @Test("HELLO encodes to the bytes written out by hand")
    func hello() throws {
        let message = Message.hello(.init(
            workerID: "w1",
            instance: 0x5EED_0000_0000_0001,
            stores: [.init(name: "country", dependsOn: [], handlesAll: false, handles: ["country-update"], lastApplied: 0)],
            applied: 2, chain: 0x41C8_6250_9CB1_78EC, appliedEpoch: 0x0000_019A_B3C4_D5E6
        ))
        let body: [UInt8] = [
            0x01,                                                   // command HELLO
            0x00, 0x02, 0x77, 0x31,                                 // workerID "w1"
            0x5E, 0xED, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,         // instance
            0x00, 0x01,                                             // stores: 1 item
            0x00, 0x07, 0x63, 0x6F, 0x75, 0x6E, 0x74, 0x72, 0x79,   //   name "country"
            0x00, 0x00,                                             //   dependsOn: 0 items
            0x00,                                                   //   handlesAll false
            0x00, 0x01,                                             //   handles: 1 item
            0x00, 0x0E, 0x63, 0x6F, 0x75, 0x6E, 0x74, 0x72, 0x79,   //     "country-update"
            0x2D, 0x75, 0x70, 0x64, 0x61, 0x74, 0x65,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         //   lastApplied 0
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,         // applied 2
            0x41, 0xC8, 0x62, 0x50, 0x9C, 0xB1, 0x78, 0xEC,         // chain
            0x00, 0x00, 0x01, 0x9A, 0xB3, 0xC4, 0xD5, 0xE6,         // appliedEpoch
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         // crashSequence 0: no crash
            0x00, 0x00,                                             // crashStore ""
            0x00, 0x00,                                             // crashSignal ""
        ]
        #expect(codec.encode(message) == [[0x46, 0x4C, 0x58, 0x42, 0x08], body])
        #expect(try codec.decode([[0x46, 0x4C, 0x58, 0x42, 0x08], body]) == message)
    }

    @Test("ACTION encodes to the bytes written out by hand")
    func action() throws {
        let message = Message.action(.init(
            epoch: 1, sequence: 2, actionType: "city-update", payload: Array(#"{"city":"Zürich"}"#.utf8),
            error: "bad", plan: [.init(store: "city", waitsFor: []), .init(store: "price", waitsFor: ["city"])]
        ))
        let body: [UInt8] = [
            0x05,                                                   // command ACTION
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,         // epoch 1
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,         // sequence 2
            0x00, 0x0B, 0x63, 0x69, 0x74, 0x79, 0x2D, 0x75, 0x70,   // actionType "city-update"
            0x64, 0x61, 0x74, 0x65,
            0x00, 0x00, 0x00, 0x12,                                 // payload: 18 bytes
            0x7B, 0x22, 0x63, 0x69, 0x74, 0x79, 0x22, 0x3A, 0x22,   //   {"city":"
            0x5A, 0xC3, 0xBC, 0x72, 0x69, 0x63, 0x68, 0x22, 0x7D,   //   Zürich"}
            0x01, 0x00, 0x03, 0x62, 0x61, 0x64,                     // error: present, "bad"
            0x00, 0x02,                                             // plan: 2 items
            0x00, 0x04, 0x63, 0x69, 0x74, 0x79,                     //   store "city"
            0x00, 0x00,                                             //   waitsFor: 0 items
            0x00, 0x05, 0x70, 0x72, 0x69, 0x63, 0x65,               //   store "price"
            0x00, 0x01,                                             //   waitsFor: 1 item
            0x00, 0x04, 0x63, 0x69, 0x74, 0x79,                     //     "city"
            0x00, 0x00,                                             // traceparent "": untraced
        ]
        #expect(codec.encode(message) == [[0x46, 0x4C, 0x58, 0x42, 0x08], body])
        #expect(try codec.decode([[0x46, 0x4C, 0x58, 0x42, 0x08], body]) == message)
    }

    @Test("an untraced ACK costs 2 bytes for its timings; a traced one carries each store's five fields")
    func ackTimings() throws {
        let result = StoreResult(store: "city", status: .ok, digest: 1)
        let untraced = codec.encode(.ack(.init(epoch: 1, sequence: 2, results: [result])))[1]
        #expect(Array(untraced.suffix(2)) == [0x00, 0x00])
        let timing = StoreTiming(store: "city", readyMicros: 1, startedMicros: 2, finishedMicros: 3, sentMicros: 0x0102)
        let traced = codec.encode(.ack(.init(epoch: 1, sequence: 2, results: [result], timings: [timing])))[1]
        #expect(Array(traced.suffix(traced.count - untraced.count + 2)) == [
            0x00, 0x01,                                             // timings: 1 item
            0x00, 0x04, 0x63, 0x69, 0x74, 0x79,                     //   store "city"
            0, 0, 0, 0, 0, 0, 0, 1,                                 //   ready 1
            0, 0, 0, 0, 0, 0, 0, 2,                                 //   started 2
            0, 0, 0, 0, 0, 0, 0, 3,                                 //   finished 3
            0, 0, 0, 0, 0, 0, 0x01, 0x02,                           //   sent 258
        ])
    }

    @Test("a result ends with what its store read of its dependencies, after its state digest (version 6)")
    func resultReadDigest() throws {
        let result = StoreResult(store: "price", status: .ok, digest: 0x0102, readDigest: 0xA9ED_595D_242B_E52E)
        let body = codec.encode(.ack(.init(epoch: 1, sequence: 2, results: [result])))[1]
        #expect(Array(body.suffix(18)) == [
            0, 0, 0, 0, 0, 0, 0x01, 0x02,                           //   digest 258
            0xA9, 0xED, 0x59, 0x5D, 0x24, 0x2B, 0xE5, 0x2E,         //   readDigest
            0x00, 0x00,                                             // timings: 0 items
        ])
        #expect(try codec.decode([Codec.signature, body]) == .ack(.init(epoch: 1, sequence: 2, results: [result])))
    }

    @Test("an absent optional is one zero byte; a status is one byte")
    func optionalAndStatus() {
        let message = Message.release(.init(epoch: 0, sequence: 0, outputs: [.init(store: "", status: .unknown)]))
        let body: [UInt8] = [0x06] + [UInt8](repeating: 0, count: 16) + [0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00]
        #expect(codec.encode(message)[1] == body)
    }
    @Test("STATUS ends with its dispatch figures, appended after retain")
    func statusFigures() throws {
        let figures = DispatchFigures(
            dispatchesTotal: 3, actionsTotal: 4, dispatchRateMilli: 1500, actionRateMilli: 2000, latencySamples: 4,
            latencyP50Micros: 100, latencyP90Micros: 200, latencyP99Micros: 300, latencyMaxMicros: 400)
        let message = Message.status(.init(
            requestID: "s", epoch: 0, sequence: 0, queueLength: 0, publishEndpoint: "", workers: [], stores: [],
            figures: figures))
        let body: [UInt8] = [
            0x14,                                                   // command STATUS
            0x00, 0x01, 0x73,                                       // requestID "s"
        ] + [UInt8](repeating: 0, count: 8 + 8 + 4)                 // epoch, sequence, queueLength
          + [UInt8](repeating: 0, count: 2 + 2 + 2 + 2 + 2)         // publishEndpoint, workers, stores, logPath, logSync
          + [UInt8](repeating: 0, count: 8 + 8 + 8) + [             // logOldest, logLast, retain
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,         // dispatchesTotal 3
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,         // actionsTotal 4
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0xDC,         // dispatchRateMilli 1500
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xD0,         // actionRateMilli 2000
            0x00, 0x00, 0x00, 0x04,                                 // latencySamples 4
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64,         // latencyP50Micros 100
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8,         // latencyP90Micros 200
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x2C,         // latencyP99Micros 300
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x90,         // latencyMaxMicros 400
        ]
        #expect(codec.encode(message)[1] == body)
        #expect(try codec.decode([[0x46, 0x4C, 0x58, 0x42, 0x08], body]) == message)
    }
}
