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

    public init(
        port: Int = 8765, prices: PriceMode = .randomWalk(seed: 1, interval: .seconds(1)),
        faults: ExchangeFaults = ExchangeFaults(), newMarketAfter: Int? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.port = port
        self.prices = prices
        self.faults = faults
        self.newMarketAfter = newMarketAfter
        self.clock = clock
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

    public init(
        dropEvery: Duration? = nil, invalidEvery: Int = 0, silenceAfter: Duration? = nil,
        silenceFor: Duration? = nil, status429: Int = 0
    ) {
        self.dropEvery = dropEvery
        self.invalidEvery = invalidEvery
        self.silenceAfter = silenceAfter
        self.silenceFor = silenceFor
        self.status429 = status429
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
