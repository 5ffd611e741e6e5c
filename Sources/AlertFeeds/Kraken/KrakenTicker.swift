import JSONTokens

/// Kraken spot websocket v2 (`wss://ws.kraken.com/v2`) `ticker` channel. Docs:
/// https://docs.kraken.com/api/docs/websocket-v2/ticker,
/// https://docs.kraken.com/api/docs/websocket-v2/ping, https://docs.kraken.com/api/docs/websocket-v2/heartbeat
///
/// Tick (rules v3 §2), per `data[]` entry of a `snapshot` or `update`: symbol `symbol`
/// (`BTC/USD`; `commonSymbol` maps `XBT` → `BTC`, `XDG` → `DOGE`), time `timestamp` (RFC 3339),
/// price `last`, change24h `change_pct`, volume24h `volume` × `vwap` (base volume × the
/// 24 h volume-weighted average price).
/// Control: `{"channel":"heartbeat"}` (about once a second when idle), `{"method":"pong",…}`,
/// `{"method":"subscribe","success":true|false,…}`, `{"channel":"status",…}`.
public enum KrakenTicker {
    /// Symbols per subscribe request: the docs give `symbol` as a list with no stated
    /// maximum; 100 per request keeps each message small.
    public static let symbolsPerMessage = 100
    /// Heartbeats arrive about once a second while subscribed, so silence means a dead
    /// connection; this application ping (answered by `pong`) checks the round trip.
    public static let pingMessage = #"{"method":"ping"}"#

    public static func subscribeMessages(symbols: [String]) -> [String] {
        symbols.batched(symbolsPerMessage).map { batch in
            #"{"method":"subscribe","params":{"channel":"ticker","symbol":[\#(batch.map(jsonString).joined(separator: ","))]}}"#
        }
    }

    /// `XBT/USD` → `BTC/USD`, `XDG/EUR` → `DOGE/EUR`; other codes unchanged.
    public static func commonSymbol(_ symbol: String) -> String {
        symbol.split(separator: "/", omittingEmptySubsequences: false).map { KrakenAssets.common(String($0)) }
            .joined(separator: "/")
    }

    /// The frame's meaning; `reading` as `FrameReading` says (both give the same result).
    public static func parse(_ frame: [UInt8], reading: FrameReading = .tokens) -> ExchangeFrame {
        reading == .tokens ? tokenParse(frame) ?? treeParse(frame) : treeParse(frame)
    }

    /// The frame read from its tokens, or nil when it is not the hot shape.
    static func tokenParse(_ frame: [UInt8]) -> ExchangeFrame? {
        ExchangeJSON.tokenRead(frame) { scanner throws(TickLineError) in try tokenTicker(&scanner) }
    }

    /// The hot shape: a `ticker` message (snapshot or update) with a `data` array and no
    /// `method` member.
    static func tokenTicker(_ scanner: inout JSONTokenizer) throws(TickLineError) -> ExchangeFrame {
        var channel = TokenValue()
        var sawData = false
        var collector = TickCollector("Kraken frame")
        try scanner.tickerMembers { scanner, key throws(TickLineError) in
            if scanner.matches(key, "data") {
                guard try scanner.firstMember(&sawData, opening: 0x5B) else { return }
                try scanner.tickerElements { scanner throws(TickLineError) in
                    try tokenEntry(&scanner, into: &collector)
                }
            } else if scanner.matches(key, "channel") {
                try scanner.take(&channel, depth: 1)
            } else if scanner.matches(key, "method") {
                throw notTheHotShape
            } else {
                try scanner.skipValue(depth: 1)
            }
        }
        try scanner.tickerEnd()
        guard sawData, try scanner.string(channel, is: "ticker") == true else { throw notTheHotShape }
        return collector.frame
    }

    /// One element of `data` (depth 2).
    private static func tokenEntry(
        _ scanner: inout JSONTokenizer, into collector: inout TickCollector
    )
        throws(TickLineError)
    {
        let f = try scanner.fields(entryKeys, depth: 3)
        collector.add(
            name: try scanner.symbolName(f[0]), time: try scanner.millis(f[1]), price: try scanner.figure(f[2]),
            change24h: try scanner.figure(f[3]),
            volume24h: ExchangeJSON.product(try scanner.figure(f[4]), try scanner.figure(f[5])))
    }

    private static let entryKeys: [StaticString] = ["symbol", "timestamp", "last", "change_pct", "volume", "vwap"]

    static func treeParse(_ frame: [UInt8]) -> ExchangeFrame {
        let context = "Kraken frame"
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return .dropped(failure.reason)
        case .success(let json):
            guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
            if let method = json["method"]?.string {
                switch method {
                case "pong": return .control(.pong)
                case "subscribe", "unsubscribe":
                    if json["success"]?.bool == true {
                        let symbol = json["result"]?["symbol"]?.string.map(ExchangeJSON.text) ?? ""
                        return .control(.subscribed("\(method) \(symbol)"))
                    }
                    return .control(.error(ExchangeJSON.text(json["error"]?.string ?? "\(method) failed")))
                default: return .dropped("\(context): method \"\(ExchangeJSON.text(method))\" not expected")
                }
            }
            switch json["channel"]?.string {
            case "heartbeat"?: return .control(.heartbeat)
            case "status"?: return .control(.notice("status"))
            case "ticker"?: break
            case let other?: return .dropped("\(context): channel \"\(ExchangeJSON.text(other))\" is not ticker")
            case nil: return .dropped(#"\#(context): no "channel" and no "method""#)
            }
            guard let entries = json["data"]?.array else { return .dropped(#"\#(context): no "data" array"#) }
            var collector = TickCollector(context)
            for entry in entries {
                collector.add(
                    symbol: entry["symbol"], time: ExchangeJSON.millis(entry["timestamp"]),
                    price: ExchangeJSON.figure(entry["last"]), change24h: ExchangeJSON.figure(entry["change_pct"]),
                    volume24h: ExchangeJSON.product(
                        ExchangeJSON.figure(entry["volume"]), ExchangeJSON.figure(entry["vwap"])))
            }
            return collector.frame
        }
    }
}

/// Kraken's asset codes as the common ones.
public enum KrakenAssets {
    /// `XBT` → `BTC`, `XDG` → `DOGE`; REST's legacy four-letter codes lose their `X`/`Z`
    /// class prefix first (`XXBT` → `BTC`, `ZUSD` → `USD`, `XETH` → `ETH`). Upper-cased.
    /// The legacy codes are listed, so a new four-letter asset starting with X or Z stays whole.
    public static func common(_ code: String) -> String {
        var code = code.uppercased()
        if legacy.contains(code) { code.removeFirst() }
        switch code {
        case "XBT": return "BTC"
        case "XDG": return "DOGE"
        default: return code
        }
    }

    static let legacy: Set<String> = [
        "XXBT", "XETH", "XLTC", "XXRP", "XXLM", "XXMR", "XZEC", "XETC", "XREP", "XMLN", "XXDG", "XICN", "XNMC",
        "XXVN", "ZUSD", "ZEUR", "ZGBP", "ZCAD", "ZJPY", "ZAUD", "ZCHF"
    ]
}
