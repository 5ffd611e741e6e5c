import AlertModel
import Foundation

/// The BTSE market list: the `GET …/api/inquire/initial/market` payload
/// (`{"code":1,"msg":"success","time":…,"data":[{…}],"success":true}`) or a bare array of its
/// entries, decoded into `Market`s for `match` scopes (Docs/rules.md#scope).
///
/// Read with `FeedJSON`, like every other payload of the feeds. Unknown fields and `null`s are
/// tolerated (the recorded payload has many); an entry without a string `symbol`
/// cannot be joined to ticks, so it is skipped and counted.
public enum BTSEMarketList {
    /// Entry fields, as BTSE names them.
    enum Field {
        static let symbol = "symbol", name = "marketName", base = "baseCurrency", quote = "quoteCurrency"
        static let future = "future", active = "active"
    }

    /// The markets in payload order. Throws `BTSEMarketListError` naming `source`.
    public static func decode(_ data: Data, source: String) throws -> [Market] {
        try decodeCounting(data, source: source).markets
    }

    public static func decode(_ bytes: [UInt8], source: String) throws -> [Market] {
        try decodeCounting(bytes, source: source).markets
    }

    /// The markets, and how many entries were skipped for lacking a string `symbol` (an
    /// entry that is not an object counts as skipped too).
    public static func decodeCounting(_ data: Data, source: String) throws -> (markets: [Market], skipped: Int) {
        try decodeCounting(Array(data), source: source)
    }

    public static func decodeCounting(_ bytes: [UInt8], source: String) throws -> (markets: [Market], skipped: Int) {
        guard case .success(let root) = FeedJSON.parse(bytes) else {
            throw BTSEMarketListError(source: source, reason: "not valid JSON")
        }
        let entries: [FeedJSON]
        if let array = root.array {
            entries = array
        } else if root.members != nil {
            guard let data = root["data"]?.array else {
                throw BTSEMarketListError(source: source, reason: "not a BTSE market list: no \"data\" array")
            }
            entries = data
        } else {
            throw BTSEMarketListError(source: source, reason: "not a BTSE market list: expected an object or an array")
        }
        var markets: [Market] = []
        markets.reserveCapacity(entries.count)
        var skipped = 0
        for entry in entries {
            guard let symbol = entry[Field.symbol]?.string else {
                skipped += 1
                continue
            }
            markets.append(
                Market(
                    symbol: symbol,
                    name: entry[Field.name]?.string ?? "",
                    base: entry[Field.base]?.string ?? "",
                    quote: entry[Field.quote]?.string ?? "",
                    future: entry[Field.future]?.bool ?? false,
                    active: entry[Field.active]?.bool ?? false))
        }
        return (markets, skipped)
    }

    /// Reads and decodes a saved payload (`-` reads standard input).
    public static func load(path: String) throws -> [Market] {
        let bytes: [UInt8]
        do {
            bytes = try InputFile(path: path).readAll()
        } catch {
            throw BTSEMarketListError(source: path, reason: error.reason, action: error.action)
        }
        return try decode(bytes, source: path)
    }
}

/// The market list could not be used. `description`: `markets.json: not a BTSE market list:
/// no "data" array`, or `cannot open markets.json: No such file or directory`.
public struct BTSEMarketListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path or URL the payload came from.
    public let source: String
    public let reason: String
    /// `open`/`read` when the file could not be read; nil when its content is wrong.
    public let action: String?

    public init(source: String, reason: String, action: String? = nil) {
        self.source = source
        self.reason = reason
        self.action = action
    }

    public var description: String {
        if let action { return "cannot \(action) \(source): \(reason)" }
        return "\(source): \(reason)"
    }
}
