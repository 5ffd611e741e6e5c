import AlertHTTP
import AlertModel

/// `--source okx`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// OKX v5 public: `tickers` channel, subscribe requests under 64 KB, and the text `ping`
    /// once nothing arrived for 10 to 20 s (OKX closes a connection silent for 30 s).
    public static let okx = ExchangeProfile(
        name: "okx", rest: "https://www.okx.com", websocket: "wss://ws.okx.com:8443/ws/v5/public",
        websocketPath: "/ws/v5/public", marketsPath: OKXMarkets.path, parseMarkets: OKXMarkets.parse,
        tickersPath: OKXTickers.path, parseTickers: { body, _ in OKXTickers.parse(body) },
        restSymbols: .dash, liveSymbols: .dash,
        subscribe: { [OKXTicker.subscribeMessages(instIDs: $0.map(\.exchangeSymbol))] },
        read: { (OKXTicker.parse($0), nil) },
        keepAlive: KeepAlive(ping: OKXTicker.pingMessage, interval: .seconds(10), pingWhenSilent: true),
        candles: .okx)
}
