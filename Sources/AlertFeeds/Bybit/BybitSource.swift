import AlertHTTP
import AlertModel

/// `--source bybit`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// Bybit v5 public spot: `tickers.<SYMBOL>` topics, at most 10 args a subscribe request,
    /// and `{"op":"ping"}` every 20 s.
    public static let bybit = ExchangeProfile(
        name: "bybit", rest: "https://api.bybit.com", websocket: "wss://stream.bybit.com/v5/public/spot",
        websocketPath: "/v5/public/spot", marketsPath: BybitMarkets.path, parseMarkets: BybitMarkets.parse,
        tickersPath: BybitTickers.path, parseTickers: { body, _ in BybitTickers.parse(body) },
        restSymbols: .marketList, liveSymbols: .marketList,
        subscribe: { [BybitTicker.subscribeMessages(symbols: $0.map(\.exchangeSymbol))] },
        read: { (BybitTicker.parse($0), nil) },
        keepAlive: KeepAlive(ping: BybitTicker.pingMessage, interval: .seconds(20)),
        candles: .windowed(
            perPage: BybitCandles.maxCandles,
            request: { market, interval, start, end, endpoint in
                BybitCandles.request(symbol: market, interval: interval, start: start, end: end, endpoint: endpoint)
            },
            parse: BybitCandles.parse))
}
