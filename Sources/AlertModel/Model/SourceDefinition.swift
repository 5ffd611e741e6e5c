/// A source a version 3 rule file defines under `sources` (rules v3 §2): `run` follows each
/// with its own connection, reconnects, staleness, market list and backfill, and its ticks
/// carry `name`.
public struct SourceDefinition: Sendable, Equatable {
    /// `[a-z0-9-]{1,32}`, unique across the files given.
    public var name: String
    /// The registry name of the protocol: `binance`, `coinbase`, `kraken`, `bybit`, `okx`,
    /// `btse`, `poloniex`, `poloniex-legacy`, `coingecko` or `coinranking`.
    public var type: String
    /// The REST base URL (http or https) when the file gives one; nil for the type's default.
    public var endpoint: String?

    /// Every `type` a rule file may give (rules v3 §2), in the spec's order.
    public static let types = [
        "binance", "coinbase", "kraken", "bybit", "okx", "btse", "poloniex", "poloniex-legacy", "coingecko",
        "coinranking"
    ]

    /// `[a-z0-9-]{1,32}`: a source name, in rule files and in tick lines.
    public static func isName(_ text: some StringProtocol) -> Bool {
        text.utf8.count <= 32 && !text.isEmpty
            && text.utf8.allSatisfy { byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D
            }
    }

    public init(name: String, type: String, endpoint: String? = nil) {
        self.name = name
        self.type = type
        self.endpoint = endpoint
    }
}

/// A series a version 3 rule file defines under `series` (rules v3 §4): one synthetic price
/// from the last valid prices of several keys.
public struct SeriesDefinition: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case median, mean, min, max, spread, ratio

        /// `spread` and `ratio` take exactly two members and no quorum.
        public var isPair: Bool { self == .spread || self == .ratio }
    }

    /// As written (`[A-Za-z0-9._-]{1,64}`).
    public var name: String
    public var kind: Kind
    /// Keys (rules v3 §3): `source:SYMBOL` or an upper-cased symbol without a source; for
    /// `spread` and `ratio`, `[A, B]` in that order.
    public var members: [String]
    /// Milliseconds: a member is fresh when its last valid tick is at most this old.
    public var maxAge: Int64
    /// How many members must be fresh; 2 for `spread` and `ratio`.
    public var quorum: Int

    public init(name: String, kind: Kind, members: [String], maxAge: Int64 = 60_000, quorum: Int? = nil) {
        self.name = name
        self.kind = kind
        self.members = members
        self.maxAge = maxAge
        self.quorum = quorum ?? (kind.isPair ? members.count : 1)
    }

    /// The symbol of the series' ticks: `@` + the name upper-cased.
    public var symbol: String { "@" + Symbol.normalize(name) }
}
