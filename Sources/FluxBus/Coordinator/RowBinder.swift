import FluxBusProtocol
import GRDB
import GRDBSQLite

/// Binds one row's values in order and runs the statement: no `StatementArguments`, whose boxing of every value cost
/// more than SQLite's own work on the log's hot path.
struct RowBinder {
    private let statement: SQLiteStatement
    private var index: Int32 = 0

    init(_ statement: Statement) {
        self.statement = statement.sqliteStatement
        sqlite3_reset(self.statement)
    }

    mutating func integer(_ value: UInt64) {
        index += 1
        sqlite3_bind_int64(statement, index, Int64(bitPattern: value))
    }

    mutating func real(_ value: Double) {
        index += 1
        sqlite3_bind_double(statement, index, value)
    }

    mutating func null() {
        index += 1
        sqlite3_bind_null(statement, index)
    }

    mutating func text(_ value: String?) {
        index += 1
        guard let value else { return _ = sqlite3_bind_null(statement, index) }
        var copy = value
        copy.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(bytes.count), Self.transient)
        }
    }

    /// Binds `value` unless `bound` says the statement holds it bound already from its last row (SQLite keeps a
    /// statement's bindings across resets), and remembers what it bound.
    mutating func text(_ value: String, boundBefore bound: inout String?) {
        // Byte for byte: `==` takes canonically equivalent spellings for one, and the row must hold this one's bytes.
        if let bound, bound.hasSameBytes(as: value) { return index += 1 }
        index += 1
        var copy = value
        let code = copy.withUTF8 { bytes in
            sqlite3_bind_text(statement, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                              Int32(bytes.count), Self.transient)
        }
        bound = code == SQLITE_OK ? value : nil
    }

    /// Binds `value`, or NULL for nil.
    mutating func blob(_ value: [UInt8]?) {
        index += 1
        guard let value else { return _ = sqlite3_bind_null(statement, index) }
        value.withUnsafeBytes { bytes in
            // A zero-length blob is still a blob, not NULL.
            _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    /// Steps the statement once; it must finish (an INSERT or UPDATE).
    func run(in db: Database) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// SQLITE_TRANSIENT: SQLite copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

