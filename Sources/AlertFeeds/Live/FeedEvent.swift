import AlertModel
import Logging

/// What a running feed tells the rest of the program, in order.
public enum FeedEvent: Sendable {
    /// The market list was (re)loaded.
    case markets([Market])
    /// Prices from one frame or response.
    case ticks([Tick])
    /// A frame or response that was not understood: dropped and counted, never fatal.
    case dropped(reason: String)
    /// Connected and subscribed (websocket), or the first poll answered.
    case connected(url: String)
    /// The connection ended or a request failed; a retry follows after `retryIn`.
    case disconnected(reason: String, retryIn: Duration)
    /// No price for `silentFor` although the feed should be sending: alerts are blind.
    case stale(silentFor: Duration)
    /// Prices arrive again after `stale`.
    case recovered(silentFor: Duration)
}

extension FeedEvent {
    /// The one log line for an event about the connection (the runner emits, consumers log):
    /// dropped frames at debug, connects at info, disconnects at warning, silence at error.
    /// Reasons may quote what a server sent: their control characters are escaped.
    public func log(source: String, to logger: Logger) {
        switch self {
        case .markets, .ticks: break
        case .dropped(let reason): logger.debug("\(source): frame dropped: \(UserText.escapingControls(reason))")
        case .connected(let url): logger.info("\(source): connected to \(url)")
        case .disconnected(let reason, let retryIn):
            logger.warning("\(source): \(UserText.escapingControls(reason)); retrying in \(retryIn.milliseconds) ms")
        case .stale(let silence):
            logger.error("\(source): no prices for \(silence.milliseconds / 1000) s: alerts are blind")
        case .recovered(let silence): logger.notice("\(source): prices again after \(silence.milliseconds / 1000) s")
        }
    }
}

/// How a feed runs: when it counts as stale, how it backs off, how often it reloads markets.
public struct FeedOptions: Sendable {
    /// No price for this long while connected: the feed is stale; reconnect and say so.
    public var staleAfter: Duration
    public var backoffBase: Duration
    public var backoffMaximum: Duration
    /// How often the market list is reloaded, so new and delisted markets are seen.
    public var marketsEvery: Duration
    /// How long a websocket connection may take to connect and upgrade (see `handshakeLimit`).
    public var handshakeTimeout: Duration

    /// The deadline an attempt really gets: `handshakeTimeout`, but at most half of
    /// `staleAfter`, so an upgrade that never comes is reported as such before the silence
    /// watch ends the attempt as "no prices".
    public var handshakeLimit: Duration { min(handshakeTimeout, staleAfter / 2) }

    /// A tick timed further ahead of the local clock than this is refused (`--max-tick-skew`,
    /// Docs/rules.md#ticks-from-the-future).
    public var maxTickSkew: Duration = FeedOptions.defaultMaxTickSkew
    public static let defaultMaxTickSkew = Duration.seconds(300)
    /// What the waits between attempts sleep on: the backoff (and a `Retry-After`) before a
    /// reconnect or a retried request, the polling interval, the market-list reloads, and a
    /// websocket's keep-alive pings, subscribe pacing and connection lifetime.
    /// `ContinuousClock()` when running; tests pass a clock they drive. The silence watch times
    /// the network itself and runs on `watchClock`.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// What the silence watch (`staleAfter`) reads and sleeps on: `ContinuousClock()` when
    /// running; a test of the watch itself passes a clock it drives.
    public var watchClock: any Clock<Duration> = ContinuousClock()

    public init(
        staleAfter: Duration = .seconds(60), backoffBase: Duration = .milliseconds(500),
        backoffMaximum: Duration = .seconds(60), marketsEvery: Duration = .seconds(3600),
        handshakeTimeout: Duration = .seconds(10)
    ) {
        self.staleAfter = staleAfter
        self.backoffBase = backoffBase
        self.backoffMaximum = backoffMaximum
        self.marketsEvery = marketsEvery
        self.handshakeTimeout = handshakeTimeout
    }
}
