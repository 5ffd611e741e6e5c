import AlertHTTP
import AlertModel

/// Kraken spot REST: `GET /0/public/AssetPairs` and `GET /0/public/OHLC`. Docs:
/// https://docs.kraken.com/api/docs/rest-api/get-tradable-asset-pairs,
/// https://docs.kraken.com/api/docs/rest-api/get-ohlc-data
/// Both answer `{"error":[…],"result":{…}}`; a non-empty `error` is the failure.
public enum KrakenMarkets {
    public static let path = "/0/public/AssetPairs"

    /// `result` maps the pair name (`XXBTZUSD`, kept as `exchangeSymbol` for OHLC) to
    /// `{"altname":"XBTUSD","wsname":"XBT/USD","base":"XXBT","quote":"ZUSD","status":"online",…}`.
    /// Base and quote come from `wsname` (else `base`/`quote`), in common codes (`KrakenAssets`);
    /// active is `status` `online` (absent: online).
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeMarket], FeedPayloadError> {
        KrakenREST.result(body, context: "Kraken AssetPairs").map { result in
            (result.members ?? []).compactMap { pair in
                guard let name = ExchangeJSON.symbol(.string(pair.key)) else { return nil }
                let ws = pair.value["wsname"]?.string?.split(separator: "/").map(String.init)
                guard let base = (ws?.count == 2 ? ws?[0] : nil) ?? pair.value["base"]?.string,
                    let quote = (ws?.count == 2 ? ws?[1] : nil) ?? pair.value["quote"]?.string,
                    ExchangeJSON.symbol(.string(base)) != nil, ExchangeJSON.symbol(.string(quote)) != nil
                else { return nil }
                return ExchangeMarket(
                    exchangeSymbol: name, base: KrakenAssets.common(base), quote: KrakenAssets.common(quote),
                    active: (pair.value["status"]?.string ?? "online") == "online")
            }
        }
    }
}

public enum KrakenCandles {
    /// OHLC returns at most the last 720 candles of an interval, whatever `since` asks:
    /// deeper history is not available from this endpoint.
    public static let maxCandles = 720

    /// Kraken's `interval` is in minutes.
    public static func code(_ interval: ExchangeInterval) -> String { String(interval.millis / 60_000) }

    public static func request(
        pair: String, interval: ExchangeInterval, since: Int64,
        endpoint: String = "https://api.kraken.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/0/public/OHLC",
                [
                    ("pair", pair), ("interval", code(interval)), ("since", String(since / 1000))
                ]))
    }

    /// `result` holds the pair's rows `[time, "open", "high", "low", "close", "vwap", "volume",
    /// count]` (time in epoch seconds, oldest first) beside `last`; the candle is
    /// `[time, time + interval)`. The last row is the interval still running.
    public static func parse(_ body: [UInt8], interval: ExchangeInterval) -> Result<CandlePage, FeedPayloadError> {
        KrakenREST.result(body, context: "Kraken OHLC").flatMap { result in
            guard let rows = result.members?.first(where: { $0.key != "last" })?.value.array else {
                return .failure(FeedPayloadError("Kraken OHLC: no candle rows in \"result\""))
            }
            return .success(CandlePage.startRows(rows, interval: interval, unit: 1000))
        }
    }
}

enum KrakenREST {
    /// The `result` object, or the failure: not JSON, a non-empty `error` list, no `result`.
    static func result(_ body: [UInt8], context: String) -> Result<FeedJSON, FeedPayloadError> {
        FeedJSON.parse(body, context: context).flatMap { json in
            let errors = json["error"]?.array?.compactMap(\.string) ?? []
            if !errors.isEmpty {
                return .failure(
                    FeedPayloadError("\(context): error: \(ExchangeJSON.text(errors.joined(separator: "; ")))"))
            }
            guard let result = json["result"], result.members != nil else {
                return .failure(FeedPayloadError(#"\#(context): no "result" object"#))
            }
            return .success(result)
        }
    }
}

/// Kraken spot `GET /0/public/Ticker` (every pair when no `pair` is given). Docs:
/// https://docs.kraken.com/api/docs/rest-api/get-ticker-information
public enum KrakenTickers {
    public static let path = "/0/public/Ticker"

    /// `result` maps the pair name (`XXBTZUSD`, as in AssetPairs) to
    /// `{"c":["30303.20000","0.00067643"],"v":["4083.67001100","4412.73601799"],
    /// "p":["30706.77771","30689.13205"],"o":"30502.80000",…}`: price `c[0]`, volume24h
    /// `v[1]` × `p[1]` (the last 24 hours' base volume × their volume-weighted average, as the
    /// websocket's `volume` × `vwap`). `o` is today's opening price, not the price 24 hours ago,
    /// so REST ticks carry no change24h. No time either: ticks get `receivedAt`.
    public static func parse(_ body: [UInt8], receivedAt: Int64) -> Result<[ExchangeTick], FeedPayloadError> {
        KrakenREST.result(body, context: "Kraken Ticker").map { result in
            var collector = TickCollector("Kraken Ticker")
            for pair in result.members ?? [] {
                let volume = ExchangeJSON.product(
                    ExchangeJSON.figure(pair.value["v"]?.array?.dropFirst().first),
                    ExchangeJSON.figure(pair.value["p"]?.array?.dropFirst().first))
                collector.add(
                    symbol: .string(pair.key), time: receivedAt,
                    price: ExchangeJSON.figure(pair.value["c"]?.array?.first), change24h: nil,
                    volume24h: volume)
            }
            return collector.ticks
        }
    }
}
