import AlertHTTP
import AlertModel

/// `--source okx`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// OKX v5 public: `tickers` channel, subscribe requests under 64 KB, and the text `ping`
    /// every 20 s: OKX drops a connection on which nothing passed for 30 s, and the docs ask
    /// for a ping within N < 30 s of silence; a ping every 20 s keeps both rules whichever
    /// side is silent.
    public static let okx = ExchangeProfile(
        name: "okx", rest: "https://www.okx.com", websocket: "wss://ws.okx.com:8443/ws/v5/public",
        websocketPath: "/ws/v5/public", marketsPath: OKXMarkets.path, parseMarkets: OKXMarkets.parse,
        tickersPath: OKXTickers.path, parseTickers: { body, _ in OKXTickers.parse(body) },
        restSymbols: .dash, liveSymbols: .dash,
        subscribe: { [OKXTicker.subscribeMessages(instIDs: $0.map(\.exchangeSymbol))] },
        read: { (OKXTicker.parse($0), nil) },
        keepAlive: KeepAlive(ping: OKXTicker.pingMessage, interval: .seconds(20)),
        candles: .okx)
}
