import AlertCore
import Foundation

/// The BTSE market list: the `GET …/api/inquire/initial/market` payload
/// (`{"code":1,"msg":"success","time":…,"data":[{…}],"success":true}`) or a bare array of its
/// entries, decoded into `Market`s for `match` scopes (Docs/rules.md#scope).
///
/// Loaded once at start-up, so Foundation's `JSONSerialization` is used. Unknown fields and
/// `null`s are tolerated (the recorded payload has many); an entry without a string `symbol`
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
        try decode(Data(bytes), source: source)
    }

    /// The markets, and how many entries were skipped for lacking a string `symbol` (an
    /// entry that is not an object counts as skipped too).
    public static func decodeCounting(_ data: Data, source: String) throws -> (markets: [Market], skipped: Int) {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw BTSEMarketListError(source: source, reason: "not valid JSON")
        }
        let entries: [Any]
        if let array = root as? [Any] {
            entries = array
        } else if let object = root as? [String: Any] {
            guard let data = object["data"] as? [Any] else {
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
            guard let entry = entry as? [String: Any], let symbol = entry[Field.symbol] as? String else {
                skipped += 1
                continue
            }
            markets.append(Market(symbol: symbol,
                                  name: entry[Field.name] as? String ?? "",
                                  base: entry[Field.base] as? String ?? "",
                                  quote: entry[Field.quote] as? String ?? "",
                                  future: entry[Field.future] as? Bool ?? false,
                                  active: entry[Field.active] as? Bool ?? false))
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
