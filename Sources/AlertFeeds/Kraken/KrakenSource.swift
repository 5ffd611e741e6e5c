import AlertHTTP
import AlertModel

/// `--source kraken`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// Kraken spot websocket v2: `ticker` (a snapshot, then updates), heartbeats about once a
    /// second, and an application `{"method":"ping"}` every 30 s.
    public static let kraken = ExchangeProfile(
        name: "kraken", rest: "https://api.kraken.com", websocket: "wss://ws.kraken.com/v2",
        websocketPath: "/v2", marketsPath: KrakenMarkets.path, parseMarkets: KrakenMarkets.parse,
        tickersPath: KrakenTickers.path, parseTickers: KrakenTickers.parse,
        restSymbols: .marketList, liveSymbols: .kraken,
        subscribe: { [KrakenTicker.subscribeMessages(symbols: $0.map(\.symbol))] },
        read: { (KrakenTicker.parse($0), nil) },
        keepAlive: KeepAlive(ping: KrakenTicker.pingMessage, interval: .seconds(30)),
        candles: .kraken)
}
