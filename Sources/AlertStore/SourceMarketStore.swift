import AlertModel
import Foundation

/// The last market list of each rule-file source (rules v3 §2), kept in the state folder:
/// `markets-NAME.json` (0600, replaced whole: a crash leaves the old list or the new one). A
/// source whose REST API is down at start follows its last list meanwhile (`run`), and its
/// `match` rules keep applying; the `--source` list is kept in the database instead
/// (`EngineStateStore`), where `check --source` reuses it. Source names are `[a-z0-9-]{1,32}`:
/// safe in a file name.
///
/// The file is one JSON object: `{"source": NAME, "fetchedAt": EPOCH_MS, "markets": [{"symbol",
/// "name", "base", "quote", "future", "active"}, …]}`.
public struct SourceMarketStore: Sendable {
    public let folder: String

    public init(folder: StateFolder) {
        self.folder = folder.path
    }

    public func path(of source: String) -> String { folder + "/markets-\(source).json" }

    /// `source`'s saved list; nil when none was saved. A file that is not such a list throws
    /// an error naming it.
    public func load(_ source: String) throws -> MarketsSave? {
        let path = path(of: source)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        func bad(_ reason: String) -> SourceMarketStoreError { SourceMarketStoreError(path: path, reason: reason) }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw bad("not a JSON object")
        }
        guard let fetchedAt = (object["fetchedAt"] as? NSNumber)?.int64Value, let entries = object["markets"] as? [Any]
        else { throw bad("no 'fetchedAt' or 'markets'") }
        var markets: [Market] = []
        markets.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() {
            guard let entry = entry as? [String: Any], let symbol = entry["symbol"] as? String,
                let base = entry["base"] as? String, let quote = entry["quote"] as? String,
                let future = entry["future"] as? Bool, let active = entry["active"] as? Bool
            else { throw bad("market \(i + 1) is not {symbol, base, quote, future, active}") }
            markets.append(
                Market(
                    symbol: symbol, name: entry["name"] as? String ?? "", base: base, quote: quote, future: future,
                    active: active))
        }
        return MarketsSave(markets: markets, source: source, fetchedAt: fetchedAt)
    }

    /// Replaces `list.source`'s file with `list`.
    public func save(_ list: MarketsSave) throws {
        let markets: [[String: Any]] = list.markets.map {
            [
                "symbol": $0.symbol, "name": $0.name, "base": $0.base, "quote": $0.quote, "future": $0.future,
                "active": $0.active
            ]
        }
        let object: [String: Any] = ["source": list.source, "fetchedAt": list.fetchedAt, "markets": markets]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try PrivateFile.replace(path(of: list.source), with: Array(data) + [0x0A])
    }
}

/// A saved market list that cannot be read, naming its file.
public struct SourceMarketStoreError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): not a saved market list: \(reason)" }
}
