import AlertEngine
import AlertHTTP
import AlertModel

/// Filling symbols' history from a source's candles before their first live tick
/// (Docs/candles.md): which symbols need how much, the fetch, and the seeding. `run` and
/// `check --source` decide which symbols are still to fill (their state folder's ledger) and
/// when the fill counts as kept (after the state holding it is saved).
public struct Backfill: Sendable {
    /// One symbol to fill: how far back, how far back at minute detail (the longest of its
    /// windows up to 24 hours; 0: none), and the time its candles must end by (its first live tick).
    public struct Need: Sendable, Equatable {
        public var symbol: String
        public var reach: Int64
        public var detail: Int64
        public var until: Int64

        public init(symbol: String, reach: Int64, detail: Int64 = 0, until: Int64) {
            self.symbol = symbol
            self.reach = reach
            self.detail = detail
            self.until = until
        }
    }

    /// The history a symbol's rules need: `reach` back in all, `detail` of it at minute detail.
    public struct Reach: Sendable, Equatable {
        public var reach: Int64
        public var detail: Int64

        public init(reach: Int64, detail: Int64 = 0) {
            self.reach = reach
            self.detail = detail
        }
    }

    public enum Outcome: Sendable {
        /// The candles, oldest first (at least one).
        case candles([Candle])
        /// The source has no candles for the symbol (or none that far back and closed yet).
        case none
        /// A request failed: the error names its URL (without query, so without secrets).
        case failed(String)
    }

    public let history: any CandleHistory
    public let http: any HTTPClient

    public init(history: any CandleHistory, http: any HTTPClient) {
        self.history = history
        self.http = http
    }

    /// Per engine key (rules v3 §1: the upper-cased symbol of ticks without a source,
    /// `source:SYMBOL` of a rule-file source's), the history the enabled rules that apply to it
    /// need (`Engine.historyReach` of each rule); keys that need none are left out. A
    /// qualified entry names its source's key; an unqualified `symbol`/`symbols` entry the key
    /// without a source and, as it applies to every source's ticks (rules v3 §3), the key of
    /// each source in `sourceMarkets` whose list has the symbol. `match` rules apply to the
    /// entries of `markets` they match (unless their `match.source` leaves out ticks without a
    /// source) and to those of each source's list in `sourceMarkets` that they do not leave
    /// out; portfolio rules to the keys the portfolio holds (its synthetic series is made of
    /// theirs).
    public static func reaches(
        rules: [Rule], markets: MarketList?, portfolios: [Portfolio] = [], sourceMarkets: [String: MarketList] = [:]
    ) -> [String: Reach] {
        var reaches: [String: Reach] = [:]
        for rule in rules where rule.enabled {
            let reach = Engine.historyReach(of: [rule])
            guard reach > 0 else { continue }
            var keys: [String] = []
            switch rule.scope {
            case .symbols(let list):
                for entry in list {
                    keys.append(key(of: entry))
                    guard !isQualified(entry) else { continue }
                    for (source, listed) in sourceMarkets where !listed.entries(for: entry).isEmpty {
                        keys.append(Tick.key(source: source, symbol: entry))
                    }
                }
            case .match(let filter):
                if filter.sources == nil {
                    keys = markets?.markets.filter(filter.matches).map { Symbol.normalize($0.symbol) } ?? []
                }
                for (source, listed) in sourceMarkets where filter.sources?.contains(source) ?? true {
                    keys += listed.markets.filter(filter.matches).map { Tick.key(source: source, symbol: $0.symbol) }
                }
            case .portfolio(let name):
                keys =
                    portfolios.first { Symbol.normalize($0.name) == Symbol.normalize(name) }?.holdings.map {
                        key(of: $0.symbol)
                    } ?? []
            case .series:
                // A series' history is made of its own synthetic ticks: no candles to load.
                keys = []
            }
            for key in keys {
                var known = reaches[key, default: Reach(reach: 0)]
                known.reach = max(known.reach, reach)
                if reach <= Self.minuteDetail { known.detail = max(known.detail, reach) }
                reaches[key] = known
            }
        }
        return reaches
    }

    /// `source:SYMBOL` (rules v3 §3) rather than a symbol.
    static func isQualified(_ entry: String) -> Bool {
        entry.firstIndex(of: ":").map { SourceDefinition.isName(String(entry[..<$0])) } ?? false
    }

    /// The engine key of a rule's symbol entry: `source:SYMBOL` for a qualified one (the source
    /// as written), the upper-cased symbol otherwise.
    static func key(of entry: String) -> String {
        guard isQualified(entry), let colon = entry.firstIndex(of: ":") else { return Symbol.normalize(entry) }
        return Tick.key(source: entry[..<colon], symbol: entry[entry.index(after: colon)...])
    }

    /// Windows up to this long use minute buckets: their history is fetched at minute detail.
    public static let minuteDetail: Int64 = 86_400_000

    /// Fetches one need's candles from `until − reach` to `until`; when the reach is longer
    /// than its minute detail, the older part in a request of its own (hour candles,
    /// Docs/candles.md). A failure is that symbol's outcome only. Callers fetch one symbol
    /// after the other (kind to the source's rate limits) and seed each symbol's candles before
    /// fetching the next, so one symbol's candles are held at a time however many symbols
    /// are filled.
    public func fetch(_ need: Need) async -> Outcome {
        do {
            var candles: [Candle] = []
            let split = need.until - need.detail
            if need.detail > 0, need.detail < need.reach {
                let coarse = try await history.candles(
                    of: need.symbol, since: need.until - need.reach, until: split, now: need.until, http: http)
                let fine = try await history.candles(
                    of: need.symbol, since: split, until: need.until, now: need.until, http: http)
                candles = Self.joined(coarse, fine)
            } else {
                candles = try await history.candles(
                    of: need.symbol, since: need.until - need.reach, until: need.until, now: need.until, http: http)
            }
            return candles.isEmpty ? .none : .candles(candles)
        } catch {
            return .failed("\(error)")
        }
    }

    /// `older` candles that end by the start of the first of `newer`, then `newer` (both oldest
    /// first): one run of candles whose seeded ticks are in time order.
    static func joined(_ older: [Candle], _ newer: [Candle]) -> [Candle] {
        guard let start = newer.first?.start else { return older }
        return older.filter { $0.end <= start } + newer
    }

    /// Seeds `candles` (oldest first) into `engine` as `symbol`'s history (`Candle.seededTicks`).
    public static func seed(_ candles: [Candle], symbol: String, into engine: Engine) {
        for candle in candles {
            for tick in candle.seededTicks(symbol: symbol) { engine.seed(tick) }
        }
    }
}
