import AlertHTTP
import AlertModel

/// `--source coinbase`: an `ExchangeSource` with this profile (SourceRegistry). Every figure comes
/// from the exchange's own documentation, named at the constant it sets and in Docs/sources.md.
extension ExchangeProfile {
    /// Coinbase Advanced Trade public channels: `heartbeats` and `ticker`, subscribed as soon as
    /// the connection is up (the server closes one with no subscribe within 5 s), each next one
    /// 250 ms after the one before; every message
    /// carries `sequence_num`, and a gap ends the connection for a fresh subscription.
    public static let coinbase = ExchangeProfile(
        name: "coinbase", rest: "https://api.coinbase.com", websocket: "wss://advanced-trade-ws.coinbase.com",
        websocketPath: "/", marketsPath: CoinbaseMarkets.path, parseMarkets: CoinbaseMarkets.parse,
        tickersPath: CoinbaseMarkets.path, parseTickers: CoinbaseTickers.parse,
        restSymbols: .dash, liveSymbols: .dash,
        subscribe: { [CoinbaseTicker.subscribeMessages(productIDs: $0.map(\.exchangeSymbol))] },
        read: { CoinbaseTicker.read($0) },
        // Coinbase takes 8 messages a second from an IP address, counted as they arrive: 250 ms
        // apart is half of that, so messages held up on the way for up to a second and then
        // arriving together still keep under it. The subscribe of 3 000 markets (31 messages)
        // takes 7.5 s.
        keepAlive: KeepAlive(ping: nil, subscribePace: .milliseconds(250)),
        candles: .windowed(
            perPage: CoinbaseCandles.maxCandles,
            request: { market, interval, start, end, endpoint in
                CoinbaseCandles.request(
                    productID: market, interval: interval, start: start, end: end, endpoint: endpoint)
            },
            parse: CoinbaseCandles.parse))
}
