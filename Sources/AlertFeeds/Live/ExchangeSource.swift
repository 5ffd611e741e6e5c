import AlertHTTP
import AlertModel
import Logging
import Platform

/// One of the five spot exchanges of rules v3 (Binance, Coinbase, Kraken, Bybit, OKX): what
/// sets it apart is its `ExchangeProfile` (URLs, parsers, subscribe batching, keep-alive,
/// candles); the market list, the symbol mapping, the snapshot and the live plan are shared.
///
/// Symbols are `BASE/QUOTE` in the common asset codes (rules v3 §2). The market list is
/// loaded before the live plan is made (`FeedRunner`), and every active market of it is
/// subscribed, or only the markets of `symbols` when it is set (`run` sets it to the symbols
/// the rules need: `FeedSymbols` in AlertPipeline).
public struct ExchangeSource: PriceSource {
    public let profile: ExchangeProfile
    public let endpoint: String
    let websocket: String
    /// When set, the upper-cased `BASE/QUOTE` symbols to subscribe (others are not followed).
    public var symbols: Set<String>?
    let markets = SharedBox(ExchangeMarkets([]))
    /// The candle steps whose depth limit was already logged: said once per source and step,
    /// not once per market (a start filling 600 Kraken markets logs one line, not 600).
    let depthLimitSaid = SharedBox(Set<Int64>())
    let logger: Logger

    public init(
        _ profile: ExchangeProfile, endpoint: String? = nil, logger: Logger = Logger(label: "pricealert.feed")
    ) {
        self.profile = profile
        self.endpoint = endpoint ?? profile.rest
        websocket =
            endpoint.map { Endpoint.join(Endpoint.websocket(for: $0), profile.websocketPath) } ?? profile.websocket
        self.logger = logger
    }

    public var name: String { profile.name }

    var marketsURL: String { Endpoint.join(endpoint, profile.marketsPath) }
    var tickersURL: String { Endpoint.join(endpoint, profile.tickersPath) }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        let list = ExchangeMarkets(try await http.fetch(marketsURL, decode: profile.parseMarkets))
        markets.set(list)
        if !list.all.isEmpty, !list.all.contains(where: \.active) {
            logger.warning("\(name): the market list has no active market: no live prices to follow")
        }
        return list.all.map {
            Market(
                symbol: $0.symbol, name: $0.exchangeSymbol, base: $0.base, quote: $0.quote, future: false,
                active: $0.active)
        }
    }

    /// Follows `markets`, a list saved earlier, when the REST API cannot give one: each entry's
    /// `name` is the exchange's own symbol (`loadMarkets` keeps it there).
    public func adopt(savedMarkets saved: [Market]) -> Bool {
        markets.set(
            ExchangeMarkets(
                saved.map {
                    ExchangeMarket(exchangeSymbol: $0.name, base: $0.base, quote: $0.quote, active: $0.active)
                }))
        return true
    }

    /// The market list, loaded when it has not been yet (a one-shot `check` or `markets`).
    func knownMarkets(http: any HTTPClient) async throws -> ExchangeMarkets {
        let known = markets.get()
        if !known.all.isEmpty { return known }
        _ = try await loadMarkets(http: http)
        return markets.get()
    }

    /// The 24-hour ticker of every market, as ticks (rules v3 §2's figures).
    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        let list = profile.restSymbols == .marketList ? try await knownMarkets(http: http) : markets.get()
        let now = Wallclock.millis()
        let ticks = try await http.fetch(tickersURL) { profile.parseTickers($0, now) }
        return ticks.compactMap { tick in
            list.common(tick.symbol, mapping: profile.restSymbols).map {
                Tick(
                    time: tick.time, symbol: $0, price: tick.price, change24h: tick.change24h, volume24h: tick.volume24h
                )
            }
        }
    }

    public func livePlan() -> LivePlan {
        let list = markets.get()
        let followed = list.all.filter { $0.active && (symbols?.contains(Symbol.normalize($0.symbol)) ?? true) }
        let profile = self.profile
        let name = profile.name
        var plan = WebSocketPlan(
            url: websocket, connections: profile.subscribe(followed), ping: profile.keepAlive.ping,
            pingInterval: profile.keepAlive.interval
        ) { bytes, _ in
            let (frame, sequence) = profile.read(bytes)
            switch frame {
            case .ticks(let ticks, _):
                let mapped = ticks.compactMap { tick in
                    list.common(tick.symbol, mapping: profile.liveSymbols).map {
                        Tick(
                            time: tick.time, symbol: $0, price: tick.price, change24h: tick.change24h,
                            volume24h: tick.volume24h)
                    }
                }
                if mapped.isEmpty {
                    return LiveFrame(.invalid("\(name): no ticker entry of a listed market"), sequence: sequence)
                }
                return LiveFrame(.ticks(mapped), sequence: sequence)
            case .control(.notice(let notice)) where notice == profile.keepAlive.endNotice:
                return LiveFrame(.control, sequence: sequence, replaceConnection: true)
            case .control(.error(let message)):
                return LiveFrame(.invalid("\(name) says: \(message)"), sequence: sequence)
            case .control:
                return LiveFrame(.control, sequence: sequence)
            case .dropped(let reason):
                return LiveFrame(.invalid(reason), sequence: sequence)
            }
        }
        plan.subscribePace = profile.keepAlive.subscribePace
        plan.lifetime = profile.keepAlive.lifetime
        plan.dropsRepeats = true
        plan.markets = followed.count
        return LivePlan(transport: .websocket(plan))
    }
}

/// How an exchange's symbols become `BASE/QUOTE`.
public enum SymbolMapping: Sendable, Equatable {
    /// Looked up in the market list (`BTCUSDT` → `BTC/USDT`): Binance, Bybit, Kraken REST pairs.
    case marketList
    /// `-` as `/` (`BTC-USD` → `BTC/USD`): Coinbase, OKX.
    case dash
    /// Kraken v2's `BASE/QUOTE` with `XBT` → `BTC`, `XDG` → `DOGE`.
    case kraken
}

/// A market list keyed both ways.
struct ExchangeMarkets: Sendable {
    let all: [ExchangeMarket]
    /// `BASE/QUOTE` by the exchange's symbol, made once per list rather than once per tick.
    private let commonByExchangeSymbol: [String: String]
    private let byCommonSymbol: [String: ExchangeMarket]

    init(_ markets: [ExchangeMarket]) {
        all = markets
        commonByExchangeSymbol = Dictionary(
            markets.map { ($0.exchangeSymbol, $0.symbol) }, uniquingKeysWith: { first, _ in first })
        byCommonSymbol = Dictionary(
            markets.map { (Symbol.normalize($0.symbol), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `BASE/QUOTE` for an exchange's symbol; nil when the market list must say and does not.
    func common(_ symbol: String, mapping: SymbolMapping) -> String? {
        switch mapping {
        case .marketList: commonByExchangeSymbol[symbol]
        case .dash: Self.dashAsSlash(symbol)
        case .kraken: KrakenTicker.commonSymbol(symbol)
        }
    }

    /// `BTC-USD` → `BTC/USD`, character by character; an ASCII symbol (every live tick of
    /// Coinbase and OKX) byte by byte, which is the same for ASCII and skips grapheme breaking.
    static func dashAsSlash(_ symbol: String) -> String {
        let utf8 = symbol.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return String(symbol.map { $0 == "-" ? "/" : $0 }) }
        guard utf8.contains(0x2D) else { return symbol }
        return String(unsafeUninitializedCapacity: utf8.count) { out in
            for (i, c) in utf8.enumerated() { out[i] = c == 0x2D ? 0x2F : c }
            return utf8.count
        }
    }

    /// The market of a `BASE/QUOTE` symbol (case-insensitive).
    func market(_ symbol: String) -> ExchangeMarket? { byCommonSymbol[Symbol.normalize(symbol)] }
}

/// What sets one exchange apart (Docs/sources.md has each exchange's figures and sources).
public struct ExchangeProfile: Sendable {
    public struct KeepAlive: Sendable {
        /// A text frame the server wants as a keep-alive, and how often.
        var ping: String?
        var interval: Duration = .seconds(20)
        /// Least time between two subscribe messages on a connection.
        var subscribePace: Duration = .zero
        /// Replace each connection after this long (before the server's own limit).
        var lifetime: Duration?
        /// The `ExchangeControl.notice` announcing the connection's end (Binance `serverShutdown`).
        var endNotice: String?
    }

    public let name: String
    /// Default REST base and websocket URL; with `--endpoint`, the websocket URL is the
    /// endpoint's `ws(s)` form joined to `websocketPath`.
    let rest: String
    let websocket: String
    let websocketPath: String
    let marketsPath: String
    let parseMarkets: @Sendable ([UInt8]) -> Result<[ExchangeMarket], FeedPayloadError>
    let tickersPath: String
    let parseTickers: @Sendable (_ body: [UInt8], _ receivedAt: Int64) -> Result<[ExchangeTick], FeedPayloadError>
    let restSymbols: SymbolMapping
    let liveSymbols: SymbolMapping
    /// The subscribe messages of each connection for these markets.
    let subscribe: @Sendable ([ExchangeMarket]) -> [[String]]
    /// One frame, and its sequence number where the exchange numbers them.
    let read: @Sendable ([UInt8]) -> (ExchangeFrame, Int64?)
    let keepAlive: KeepAlive
    let candles: CandleRules
}

/// How an exchange serves candles (Docs/candles.md, Docs/sources.md).
enum CandleRules: Sendable {
    /// Pages of at most `perPage` candles for `[start, end]` (Binance, Coinbase, Bybit).
    case windowed(
        perPage: Int,
        request:
            @Sendable (_ market: String, _ interval: ExchangeInterval, _ start: Int64, _ end: Int64, _ endpoint: String)
            -> HTTPRequest,
        parse: @Sendable ([UInt8], ExchangeInterval) -> Result<CandlePage, FeedPayloadError>)
    /// Kraken OHLC: one request from `since`, answered with at most the last 720 candles.
    case kraken
    /// OKX: pages backwards from `after`, `candles` for the recent 1 440, `history-candles` beyond.
    case okx
}

extension ExchangeSource: CandleHistory {
    public func candles(
        of symbol: String, since: Int64, until: Int64, now: Int64, http: any HTTPClient
    ) async throws -> [Candle] {
        guard let market = try await knownMarkets(http: http).market(symbol) else { return [] }
        let step = CandlePaging.step(covering: now - since)
        let interval: ExchangeInterval = step == 60_000 ? .minute : .hour
        switch profile.candles {
        case .windowed(let perPage, let request, let parse):
            return try await CandlePaging.fetch(since: since, until: until, step: step, perPage: perPage) {
                start, end in
                try await http.fetch(request(market.exchangeSymbol, interval, start, end - 1, endpoint)) {
                    parse($0, interval)
                }.candles
            }
        case .kraken:
            let depth = Int64(KrakenCandles.maxCandles) * step
            if since < now - depth, depthLimitSaid.update({ $0.insert(step).inserted }) {
                logger.notice(
                    "\(name): \(symbol): Kraken keeps only the last \(KrakenCandles.maxCandles) candles of an interval (\(DurationText.format(depth)) of \(step == 60_000 ? "minute" : "hour") candles); history before that is not filled (said once for all of this source's markets)"
                )
            }
            let request = KrakenCandles.request(
                pair: market.exchangeSymbol, interval: interval, since: since - step, endpoint: endpoint)
            let page = try await http.fetch(request) { KrakenCandles.parse($0, interval: interval) }
            return CandlePaging.clipped(page.candles, since: since, until: until)
        case .okx:
            var byStart: [Int64: Candle] = [:]
            var after = until
            let recentFrom = now - Int64(OKXCandles.recentDepth) * step
            while after > since {
                let history = after <= recentFrom
                let request = OKXCandles.request(
                    instID: market.exchangeSymbol, interval: interval, olderThan: after, history: history,
                    endpoint: endpoint)
                let page = try await http.fetch(request) { OKXCandles.parse($0, interval: interval) }
                guard let oldest = page.candles.first?.start, oldest < after else { break }
                for candle in page.candles where byStart[candle.start] == nil { byStart[candle.start] = candle }
                after = oldest
            }
            return CandlePaging.clipped(byStart.values.sorted { $0.start < $1.start }, since: since, until: until)
        }
    }
}

extension FeedRunner {
    /// Whether `following` narrows this feed: its source subscribes market by market.
    public var subscribesBySymbol: Bool { source is ExchangeSource }

    /// The same feed following only `symbols` (upper-cased `BASE/QUOTE`) when its source is an
    /// `ExchangeSource`; nil follows every active market. Other sources are unchanged.
    public func following(_ symbols: Set<String>?) -> FeedRunner {
        guard var exchange = source as? ExchangeSource else { return self }
        exchange.symbols = symbols
        var runner = FeedRunner(source: exchange, http: http, options: options, logger: logger)
        runner.saved = saved
        return runner
    }
}
