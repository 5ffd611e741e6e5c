import AlertHTTP
import AlertModel

/// `--source binance`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// Binance spot: raw stream endpoint `/ws` with live SUBSCRIBE messages of `<symbol>@ticker`
    /// streams, at most 1024 streams a connection (more connections beyond), at most 5 incoming
    /// messages a second (subscribes paced 4 a second, leaving room for pongs). The server pings
    /// every 20 s and the websocket layer answers each ping with its pong; a connection lives
    /// 24 hours, so each is replaced after 23 h 30 min, and at once on `serverShutdown`.
    public static let binance = ExchangeProfile(
        name: "binance", rest: "https://api.binance.com", websocket: "wss://stream.binance.com:9443/ws",
        websocketPath: "/ws", marketsPath: BinanceMarkets.path, parseMarkets: BinanceMarkets.parse,
        tickersPath: BinanceTickers.path, parseTickers: { body, _ in BinanceTickers.parse(body) },
        restSymbols: .marketList, liveSymbols: .marketList,
        subscribe: { BinanceTicker.subscribeMessages(symbols: $0.map(\.exchangeSymbol)) },
        read: { (BinanceTicker.parse($0), nil) },
        keepAlive: KeepAlive(
            ping: nil, subscribePace: .milliseconds(250), lifetime: .seconds(23 * 3600 + 1800),
            endNotice: "serverShutdown"),
        candles: .windowed(
            perPage: BinanceCandles.maxCandles,
            request: { market, interval, start, end, endpoint in
                BinanceCandles.request(symbol: market, interval: interval, start: start, end: end, endpoint: endpoint)
            },
            parse: BinanceCandles.parse))
}
