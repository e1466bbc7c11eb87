import Foundation
import Testing

@testable import Flux
@testable import FluxStores

/// `docs/vectors/builtin-stores.json`: the built-in stores' behaviour as PROTOCOL.md (Appendix E) specifies it, for
/// implementations in other languages. Every case runs here through the stores exactly as a worker runs them: the
/// payload as JSON bytes off the wire, the state's canonical bytes and digest after each action.
@Suite struct BuiltinStoreVectorTests {
    struct Vectors: Decodable {
        struct Declaration: Decodable {
            let dependsOn: [String]
            let handles: [String]
            let handlesAll: Bool
            let initialState: String
            let initialDigest: String
        }
        struct Step: Decodable {
            let type: String
            let payload: String
            let error: String?
            let status: String
            let state: String
            let digest: String?
        }
        struct Case: Decodable {
            let store: String
            let name: String
            let actions: [Step]
        }
        let declarations: [String: Declaration]
        let cases: [Case]
    }

    static let vectors: Vectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/vectors/builtin-stores.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    static func makeStore(_ name: String) -> AnyStore {
        name == "kv" ? AnyStore(KVStore.self) : AnyStore(CounterStore.self)
    }

    static func hex(_ digest: UInt64?) -> String? {
        digest.map { String(repeating: "0", count: 16 - String($0, radix: 16).count) + String($0, radix: 16) }
    }

    @Test(arguments: ["counter", "kv"])
    func declarationsAndInitialStates(store name: String) throws {
        let declared = try #require(Self.vectors.declarations[name])
        let store = Self.makeStore(name)
        #expect(store.dependencies == declared.dependsOn)
        #expect(store.actionNames == declared.handles)
        #expect(store.handlesAllActions == declared.handlesAll)
        #expect(String(decoding: try store.encodedState(), as: UTF8.self) == declared.initialState)
        #expect(Self.hex(store.maintainedDigest()) == declared.initialDigest)
    }

    @Test(arguments: vectors.cases.map(\.name))
    func everyCaseHolds(named name: String) throws {
        let vector = try #require(Self.vectors.cases.first { $0.name == name })
        let store = Self.makeStore(vector.store)
        for (index, step) in vector.actions.enumerated() {
            let action = AnyAction(name: step.type, json: Array(step.payload.utf8), error: step.error.map { ActionError($0) })
            let context = DispatchContext(sequence: UInt64(index + 1), store: store.name, dependencies: [], outputs: [:], cascade: { _ in })
            var status = "ok"
            do { _ = try store.apply(action, context: context) } catch { status = "failed" }
            let where_ = "\(vector.name), action \(index + 1): \(step.payload)"
            #expect(status == step.status, "\(where_)")
            let bytes = try store.encodedState()
            #expect(String(decoding: bytes, as: UTF8.self) == step.state, "\(where_)")
            if let digest = step.digest { #expect(Self.hex(store.maintainedDigest()) == digest, "\(where_)") }
            // Whatever the store, its digest is the one its state gives from scratch, once restored from its bytes.
            let replica = Self.makeStore(vector.store)
            try replica.restore(fromJSON: bytes)
            #expect(replica.maintainedDigest() == store.maintainedDigest(), "\(where_)")
        }
    }
}
