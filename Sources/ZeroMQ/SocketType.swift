import CZMQ

/// The kind of a ``ZMQSocket``, which fixes its messaging pattern.
public enum SocketType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Publishes to every subscriber whose subscription prefix matches; drops when a subscriber is slow.
    case pub
    /// Receives from publishers, filtered by the prefixes given to `ZMQSocket.subscribe(_:)`.
    case sub
    /// A PUB that also receives subscription messages (`0x01` + prefix, `0x00` + prefix when unsubscribing).
    case xpub
    /// A SUB that sends its subscriptions as messages.
    case xsub
    /// Routes by peer routing id: the first frame of every message is the peer's id.
    case router
    /// Load-balances outgoing messages over its peers and fair-queues incoming ones, with no envelope.
    case dealer
    /// Exactly one peer, both directions; used for `inproc://` pipes and monitors.
    case pair
    /// Strict request/reply client: send, receive, send, receive.
    case req
    /// Strict request/reply server: receive, send, receive, send.
    case rep
    /// Sends to a pipeline of pullers, load-balanced.
    case push
    /// Receives from pushers, fair-queued.
    case pull

    /// The `ZMQ_*` constant libzmq uses.
    var rawValue: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        }
    }

    public var description: String {
        switch self {
        case .pub: "PUB"
        case .sub: "SUB"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        case .router: "ROUTER"
        case .dealer: "DEALER"
        case .pair: "PAIR"
        case .req: "REQ"
        case .rep: "REP"
        case .push: "PUSH"
        case .pull: "PULL"
        }
    }
}
