import Foundation

/// The keys a coordinator admits, one per line: `PUBLIC-KEY NAME ROLE`, with `#` comments and blank lines allowed.
///
/// ```
/// # key                                       name      role
/// rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7    w1        worker
/// Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID    ops       admin
/// ```
/// The name bound to a key is the identity its connection gets: a worker must declare that name as its id.
public struct AuthorizedKeys: Sendable, Hashable {
    /// What a key may do.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// Joins as the worker named by the key, hosts stores, dispatches from handlers, reads.
        case worker
        /// Dispatches and reads.
        case client
        /// Everything a worker and a client may do; operational commands are reserved to it.
        case admin
    }

    /// One admitted key.
    public struct Entry: Sendable, Hashable {
        public let publicKey: String
        public let name: String
        public let role: Role
    }

    public let entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// The entry for a public key, if it is admitted.
    public func entry(forKey publicKey: String) -> Entry? { entries.first { $0.publicKey == publicKey } }

    /// The entry for a name (the user id a connection carries), if any.
    public func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// Parses the file.
    /// - Throws: ``BusError`` (`usage`) naming the file, the line and what is wrong with it.
    public static func load(from path: String) throws -> AuthorizedKeys {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BusError(code: .usage, message: "cannot read the authorized keys file \(path); check the path")
        }
        return try parse(String(decoding: data, as: UTF8.self), source: path)
    }

    public static func parse(_ text: String, source: String = "authorized keys") throws -> AuthorizedKeys {
        var entries: [Entry] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            func fail(_ problem: String) -> BusError {
                BusError(code: .usage, message: "\(source) line \(index + 1): \(problem); each line is PUBLIC-KEY NAME ROLE (role: worker, client or admin)")
            }
            guard fields.count == 3 else { throw fail("expected 3 fields, found \(fields.count)") }
            guard CurveKeyFiles.isZ85Key(fields[0]) else { throw fail("'\(fields[0])' is not a 40-character Z85 public key") }
            guard BusName.isValid(fields[1]) else { throw fail("'\(fields[1])' is not a valid name") }
            guard let role = Role(rawValue: fields[2]) else { throw fail("unknown role '\(fields[2])'") }
            guard !entries.contains(where: { $0.publicKey == fields[0] }) else { throw fail("the key is listed twice") }
            guard !entries.contains(where: { $0.name == fields[1] }) else { throw fail("the name '\(fields[1])' is bound to two keys") }
            entries.append(Entry(publicKey: fields[0], name: fields[1], role: role))
        }
        return AuthorizedKeys(entries: entries)
    }
}
