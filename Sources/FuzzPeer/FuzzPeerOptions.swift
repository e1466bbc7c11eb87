/// The fuzz peer's command line; see ``FuzzPeerOptions/usage``.
struct FuzzPeerOptions {
    var endpoint = ""
    var count = 100_000
    var seed = UInt64.random(in: 0...UInt64.max)
    var workerIDs: [String] = []
    var epoch: UInt64?
    var barrierTimeoutSeconds = 60
    var window = 1_000

    static let usage = """
        usage: fluxbus-fuzz-peer --endpoint EP [--count N] [--seed S] [--worker-id ID ...] [--epoch E]
                                 [--window N] [--barrier-timeout S]

        Sends N random and mutated messages (default 100000) to a coordinator's control endpoint from one DEALER.
        After every window of messages, and at the end, it sends a barrier: a HELLO that the coordinator refuses
        with a REJECT naming it. It never runs more than two windows ahead of the coordinator, and it ends once the
        last barrier is answered: by then the coordinator has handled every message. Prints the seed first, and a
        JSON summary on standard output at the end: how many messages it sent that the coordinator counts as
        malformed, refused (barriers included) and strangers.

          --endpoint EP        the coordinator's control endpoint (ROUTER), e.g. ipc:///tmp/control
          --count N            messages to send before the barrier
          --seed S             the seed to replay a run (default: random, printed)
          --worker-id ID       a worker on the bus, to forge HELLOs with its id (repeatable)
          --epoch E            the coordinator's epoch, so that forged ACKs, READYs and HEARTBEATs look current
          --window N           messages between barriers (default 1000); 0 for one barrier at the end only
          --barrier-timeout S  seconds to wait for a barrier's answer (default 60)

        Exit codes: 0 every barrier was answered, 1 one was not, 2 usage.
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses `arguments` (without the program name).
    init(_ arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        func value(_ option: String) throws(UsageError) -> String {
            guard let value = rest.popFirst() else { throw UsageError(description: "\(option) needs a value") }
            return value
        }
        func number<T: FixedWidthInteger>(_ option: String, as: T.Type) throws(UsageError) -> T {
            let text = try value(option)
            guard let number = T(text), number >= 0 else { throw UsageError(description: "\(option) needs a number, not '\(text)'") }
            return number
        }
        while let option = rest.popFirst() {
            switch option {
            case "--endpoint": endpoint = try value(option)
            case "--count": count = try number(option, as: Int.self)
            case "--seed": seed = try number(option, as: UInt64.self)
            case "--worker-id": workerIDs.append(try value(option))
            case "--epoch": epoch = try number(option, as: UInt64.self)
            case "--barrier-timeout": barrierTimeoutSeconds = try number(option, as: Int.self)
            case "--window": window = try number(option, as: Int.self)
            default: throw UsageError(description: "unknown argument '\(option)'")
            }
        }
        guard !endpoint.isEmpty else { throw UsageError(description: "--endpoint is required") }
    }
}
