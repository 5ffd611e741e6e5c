import AlertModel
import Synchronization

/// Everything the demo exchange can be told: where to listen, where prices come from, and
/// which faults to inject. A value, so tests and the CLI build one the same way.
public struct ExchangeConfiguration: Sendable {
    /// TCP port on 127.0.0.1; 0 lets the system pick a free one (read it from `start()`).
    public var port: Int
    /// Where the prices come from.
    public var prices: PriceMode
    /// Faults to inject, all off by default.
    public var faults: ExchangeFaults
    /// After the market list has been served this many times, it lists one more spot market,
    /// `NEWCOIN` (`NEWCOIN-USD`), which `market_summary` prices from then on: a new listing for
    /// `listed` rules (Docs/exchange.md). Nil: the list never changes.
    public var newMarketAfter: Int?
    /// The clock that paces prices and times faults (`silenceAfter`, `silenceFor`, `dropEvery`):
    /// `ContinuousClock()` when serving, a clock the test drives in tests.
    public var clock: any Clock<Duration>
    /// The look-alikes' keep-alive rules, timed on `clock`.
    public var keepAlive: KeepAliveSettings
    /// Serve `https://` and `wss://` with this certificate and key instead of plain HTTP.
    public var tls: ExchangeTLS?
    /// Each look-alike lists exactly this many spot markets (1 to `maxMarketsPerVenue`): the
    /// demo's first, then synthetic ones priced like them (Docs/exchange.md#more-markets). Nil:
    /// the demo's markets only. BTSE's routes keep the demo's markets either way.
    public var marketsPerVenue: Int?
    public static let maxMarketsPerVenue = 10_000

    public init(
        port: Int = 8765, prices: PriceMode = .randomWalk(seed: 1, interval: .seconds(1)),
        faults: ExchangeFaults = ExchangeFaults(), newMarketAfter: Int? = nil,
        clock: any Clock<Duration> = ContinuousClock(), keepAlive: KeepAliveSettings = KeepAliveSettings(),
        tls: ExchangeTLS? = nil, marketsPerVenue: Int? = nil
    ) {
        precondition(
            marketsPerVenue.map { (1...Self.maxMarketsPerVenue).contains($0) } ?? true,
            "marketsPerVenue must be between 1 and \(Self.maxMarketsPerVenue)")
        self.marketsPerVenue = marketsPerVenue
        self.tls = tls
        self.port = port
        self.prices = prices
        self.faults = faults
        self.newMarketAfter = newMarketAfter
        self.clock = clock
        self.keepAlive = keepAlive
    }
}

/// The source of prices. Both start when the first client subscribes to `coinIndex` or asks
/// for `market_summary`, so a fresh server with one client always sees the same sequence.
public enum PriceMode: Sendable {
    /// A seeded random walk over every spot market, one step per `interval`. The same seed
    /// gives the same prices at the same step.
    case randomWalk(seed: UInt64, interval: Duration)
    /// Recorded ticks, grouped into frames and paced by their recorded times divided by
    /// `speed` (0: as fast as possible). After the last tick nothing more is sent.
    case replay(ticks: [Tick], speed: Double)
}

/// The certificate the exchange serves TLS with: PEM files, the certificate file holding the
/// server's certificate first and any intermediates after it.
public struct ExchangeTLS: Sendable, Equatable {
    public var certificateFile: String
    public var keyFile: String

    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}

/// The keep-alive rules the look-alikes enforce (Docs/exchange.md#keep-alive), with each
/// exchange's documented figures as defaults. Every rule is checked once a `tick` of the
/// exchange's clock, so a rule's time is met to within one tick.
public struct KeepAliveSettings: Sendable, Equatable {
    /// How often each look-alike connection's keep-alive timer runs (and Coinbase and Kraken
    /// send their heartbeats).
    public var tick: Duration
    /// Binance sends a ping frame this often …
    public var binancePingEvery: Duration
    /// … and closes a connection that has not answered a ping with its payload this long after it.
    public var binancePongWithin: Duration
    /// Binance closes every connection at this age (24 hours).
    public var binanceLifetime: Duration
    /// Binance sends `{"e":"serverShutdown"}` this long before `binanceLifetime` (nil: never).
    public var binanceShutdownNotice: Duration?
    /// Coinbase closes a connection that has sent no subscribe this long after opening.
    public var coinbaseSubscribeWithin: Duration
    /// Bybit closes a connection that has sent no `{"op":"ping"}` for this long (Bybit asks for
    /// one every 20 s).
    public var bybitPingWithin: Duration
    /// OKX closes a connection that has sent nothing (not even `ping`) for this long.
    public var okxIdleLimit: Duration

    public init(
        tick: Duration = .seconds(1), binancePingEvery: Duration = .seconds(20),
        binancePongWithin: Duration = .seconds(60), binanceLifetime: Duration = .seconds(86_400),
        binanceShutdownNotice: Duration? = nil, coinbaseSubscribeWithin: Duration = .seconds(5),
        bybitPingWithin: Duration = .seconds(60), okxIdleLimit: Duration = .seconds(30)
    ) {
        self.tick = tick
        self.binancePingEvery = binancePingEvery
        self.binancePongWithin = binancePongWithin
        self.binanceLifetime = binanceLifetime
        self.binanceShutdownNotice = binanceShutdownNotice
        self.coinbaseSubscribeWithin = coinbaseSubscribeWithin
        self.bybitPingWithin = bybitPingWithin
        self.okxIdleLimit = okxIdleLimit
    }
}

/// How the exchange drops connections (`dropEvery`, `dropAllConnections`).
public enum DropMode: String, Sendable, Equatable, CaseIterable {
    /// A websocket close frame (going away), then the TCP close.
    case close
    /// A TCP reset: no close frame, `SO_LINGER` 0.
    case reset
}

/// A wick on one exchange: the look-alike `venue` shows `market` (the demo's key, `BTC`) at its
/// price times `factor` in its tickers, REST and websocket alike, from its next price step, and
/// stretches the day's high or low to it; every other exchange shows the true price. For
/// showing that a consensus over several exchanges ignores one exchange's wick.
public struct Wick: Sendable, Equatable {
    public var venue: Venue
    public var market: String
    public var factor: Double

    public init(venue: Venue, market: String, factor: Double) {
        self.venue = venue
        self.market = market
        self.factor = factor
    }
}

/// Faults that let tests and users watch a client recover. Zero or nil means off.
public struct ExchangeFaults: Sendable, Equatable {
    /// Close every websocket connection every this often (from server start).
    public var dropEvery: Duration?
    /// Replace every Nth price frame with an invalid one (alternately not JSON, and JSON
    /// of the wrong shape).
    public var invalidEvery: Int
    /// Send no prices from this long after the feed starts …
    public var silenceAfter: Duration?
    /// … for this long (the connection stays open, `ping` is still answered).
    public var silenceFor: Duration?
    /// Answer the first N REST requests with 429 Too Many Requests and `Retry-After: 1`.
    public var status429: Int
    /// How `dropEvery` and `dropAllConnections()` drop a connection.
    public var dropMode: DropMode
    /// Coinbase skips one `sequence_num` after every this many messages on a connection (a gap
    /// the client should notice); 0: no gaps.
    public var coinbaseSequenceGapEvery: Int
    /// One look-alike shows one market off its price while the others do not.
    public var wick: Wick?

    public init(
        dropEvery: Duration? = nil, invalidEvery: Int = 0, silenceAfter: Duration? = nil,
        silenceFor: Duration? = nil, status429: Int = 0, dropMode: DropMode = .close,
        coinbaseSequenceGapEvery: Int = 0, wick: Wick? = nil
    ) {
        self.wick = wick
        self.dropEvery = dropEvery
        self.invalidEvery = invalidEvery
        self.silenceAfter = silenceAfter
        self.silenceFor = silenceFor
        self.status429 = status429
        self.dropMode = dropMode
        self.coinbaseSequenceGapEvery = coinbaseSequenceGapEvery
    }

    /// Whether prices are held back at `elapsed` since the feed started.
    func isSilent(at elapsed: Duration) -> Bool {
        guard let after = silenceAfter, let length = silenceFor else { return false }
        return elapsed >= after && elapsed < after + length
    }
}

/// The faults in force, shared by the feed, the REST middleware and the drop timer, and
/// changeable while the server runs (`DemoExchangeServer.setFaults`).
final class FaultSettings: Sendable {
    private let value: Mutex<ExchangeFaults>

    init(_ faults: ExchangeFaults) {
        value = Mutex(faults)
    }

    var current: ExchangeFaults {
        get { value.withLock { $0 } }
    }

    func set(_ faults: ExchangeFaults) {
        value.withLock { $0 = faults }
    }
}

extension PriceMode {
    /// Reads a recorded tick file for `.replay` (JSON Lines, `-` for standard input); lines
    /// that are not ticks are skipped and counted. Throws when the file cannot be read.
    public static func loadTicks(path: String) throws -> (ticks: [Tick], skipped: Int) {
        try TickReplay.load(path: path)
    }
}
