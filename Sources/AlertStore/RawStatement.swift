import GRDB
import GRDBSQLite

/// A statement run through SQLite's C API, for the queries `EngineStateStore` makes once per
/// symbol and hour (thousands in a `check` of every symbol): through GRDB, its rows, arguments
/// and their dynamic casts would be most of the cost of reading and saving state (see
/// Docs/performance.md).
/// Use it only inside the database access (`read`/`write` closure) whose `db` made it.
final class RawStatement {
    enum Argument {
        case text(String)
        case integer(Int64)
        case blob([UInt8])
    }

    /// One result row; its blobs are valid until the next row.
    struct Row {
        fileprivate let handle: OpaquePointer

        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
        func text(_ column: Int32) -> String {
            guard let text = sqlite3_column_text(handle, column) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
        }
        func blob(_ column: Int32) -> UnsafeRawBufferPointer {
            let bytes = sqlite3_column_blob(handle, column)
            return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))
        }
    }

    private let connection: OpaquePointer
    private let handle: OpaquePointer
    private let sql: String

    init(_ db: Database, _ sql: String) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, sql: sql) }
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        self.connection = connection
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Runs the statement with `arguments` (bound in order), calling `row` for each result row.
    func run(_ arguments: [Argument], row: (Row) throws -> Void = { _ in }) throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        // SQLITE_TRANSIENT: SQLite copies the value (a few bytes of text, a blob of a few KB).
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            let code: Int32
            switch argument {
            case .text(let text): code = sqlite3_bind_text(handle, index, text, -1, transient)
            case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), transient) }
            }
            guard code == SQLITE_OK else { throw failure(code) }
        }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(code) }
            try row(Row(handle: handle))
        }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}
