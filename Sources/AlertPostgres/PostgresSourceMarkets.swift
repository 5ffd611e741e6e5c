import AlertModel
import AlertStore
import Logging
import PostgresNIO

/// Each rule-file source's last market list in PostgreSQL (a state folder keeps it in
/// `markets-NAME.json`, `SourceMarketStore`): one row per source in `source_market_lists`, the
/// markets as arrays in their order, replaced whole in one transaction. A source whose REST API
/// cannot give a list follows this one meanwhile (`run`, `check`).
public final class PostgresSourceMarkets: SourceMarketKeeper {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    public var place: String { "store \(queue.url) (table source_market_lists)" }

    public func load(_ source: String) async throws -> MarketsSave? {
        try await all([source]).first
    }

    /// The saved lists of `sources` (every source's when nil), by source.
    public func all(_ sources: [String]? = nil) async throws -> [MarketsSave] {
        let logger = queue.logger
        return try await queue.perform { connection in
            let rows = try await connection.query(
                """
                SELECT source, fetched_at, symbols, names, bases, quotes, futures, actives FROM source_market_lists
                WHERE \(sources)::TEXT[] IS NULL OR source = ANY(\(sources)) ORDER BY source
                """, logger: logger)
            var lists: [MarketsSave] = []
            typealias Columns = (String, Int64, [String], [String], [String], [String], [Bool], [Bool])
            for try await row in rows.decode(Columns.self) {
                let count = [row.3.count, row.4.count, row.5.count, row.6.count, row.7.count].min() ?? 0
                let markets = (0..<min(row.2.count, count)).map { i in
                    Market(
                        symbol: row.2[i], name: row.3[i], base: row.4[i], quote: row.5[i], future: row.6[i],
                        active: row.7[i])
                }
                lists.append(MarketsSave(markets: markets, source: row.0, fetchedAt: row.1))
            }
            return lists
        }
    }

    public func save(_ list: MarketsSave) async throws {
        let logger = queue.logger
        try await queue.transaction { connection in try await Self.write(list, connection, logger) }
    }

    /// Replaces `list.source`'s saved list (in the caller's transaction).
    static func write(_ list: MarketsSave, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let m = list.markets
        try await connection.query(
            """
            INSERT INTO source_market_lists (source, fetched_at, symbols, names, bases, quotes, futures, actives)
            VALUES (\(list.source), \(list.fetchedAt), \(m.map(\.symbol)), \(m.map(\.name)), \(m.map(\.base)),
              \(m.map(\.quote)), \(m.map(\.future)), \(m.map(\.active)))
            ON CONFLICT (source) DO UPDATE SET fetched_at = excluded.fetched_at, symbols = excluded.symbols,
              names = excluded.names, bases = excluded.bases, quotes = excluded.quotes, futures = excluded.futures,
              actives = excluded.actives
            """, logger: logger)
    }
}
