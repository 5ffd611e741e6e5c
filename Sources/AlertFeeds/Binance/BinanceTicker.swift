import JSONTokens

/// Binance spot `<symbol>@ticker` (24hr ticker) frames, raw (`/ws/…`) or from a combined
/// stream (`/stream?streams=…`, wrapped as `{"stream":"bnbbtc@ticker","data":{…}}`), and the
/// live SUBSCRIBE messages. Docs:
/// https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
///
/// Tick (rules v3 §2): symbol `s` (mapped to `BASE/QUOTE` by `BinanceMarkets`), time `E`,
/// price `c`, change24h `P` (already percent), volume24h `q` (quote asset volume).
/// Control: `{"result":null,"id":N}` (subscribe ack), `{"code":…,"msg":…}` and
/// `{"error":{"code":…,"msg":…}}` (errors), `{"e":"serverShutdown"}` (notice).
/// Keep-alive: the server sends a websocket ping frame every 20 s and disconnects after a
/// minute without the pong; there is no application-level ping message.
public enum BinanceTicker {
    /// "A single connection can listen to a maximum of 1024 streams" (docs above).
    public static let maxStreamsPerConnection = 1024
    /// "WebSocket connections have a limit of 5 incoming messages per second" (docs above):
    /// a runner sends the messages of `subscribeMessages` at most this many per second.
    public static let maxMessagesPerSecond = 5
    /// Streams per SUBSCRIBE message: the docs set no limit per message; 200 keeps each
    /// message under ~5 KB, so a full connection takes 6 messages (under 2 s at 5/s).
    public static let streamsPerMessage = 200

    /// The stream names (`btcusdt@ticker`: Binance wants them lower-case) split into
    /// connections of at most `maxStreamsPerConnection`, each a list of SUBSCRIBE messages
    /// of at most `streamsPerMessage` streams, ids counting from 1 per connection.
    public static func subscribeMessages(symbols: [String]) -> [[String]] {
        symbols.map { "\($0.lowercased())@ticker" }.batched(maxStreamsPerConnection).map { connection in
            connection.batched(streamsPerMessage).enumerated().map { index, streams in
                #"{"method":"SUBSCRIBE","params":[\#(streams.map(jsonString).joined(separator: ","))],"id":\#(index + 1)}"#
            }
        }
    }

    /// The frame's meaning; `reading` as `FrameReading` says (both give the same result).
    public static func parse(_ frame: [UInt8], reading: FrameReading = .tokens) -> ExchangeFrame {
        reading == .tokens ? tokenParse(frame) ?? treeParse(frame) : treeParse(frame)
    }

    /// The frame read from its tokens, or nil when it is not the hot shape.
    static func tokenParse(_ frame: [UInt8]) -> ExchangeFrame? {
        ExchangeJSON.tokenRead(frame) { scanner throws(TickLineError) in try tokenEvent(&scanner) }
    }

    /// The hot shape: one raw `24hrTicker` event object (no `stream`, `error`, `code` or
    /// `result` member, which the tree reads as other frames).
    static func tokenEvent(_ scanner: inout JSONTokenizer) throws(TickLineError) -> ExchangeFrame {
        let f = try scanner.fields(eventKeys, depth: 1, refusing: ["stream", "error", "code", "result"])
        try scanner.tickerEnd()
        guard try scanner.string(f[0], is: "24hrTicker") == true else { throw notTheHotShape }
        var collector = TickCollector("Binance frame")
        collector.add(
            name: try scanner.symbolName(f[2]), time: try scanner.integer(f[1]), price: try scanner.number(f[3]),
            change24h: try scanner.figure(f[4]), volume24h: try scanner.figure(f[5]))
        return collector.frame
    }

    /// Event type, time, symbol, price, change24h, volume24h (rules v3 §2).
    private static let eventKeys: [StaticString] = ["e", "E", "s", "c", "P", "q"]

    static func treeParse(_ frame: [UInt8]) -> ExchangeFrame {
        let context = "Binance frame"
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return .dropped(failure.reason)
        case .success(let json):
            var collector = TickCollector(context)
            if let events = json.array {
                for event in events { tick(event, into: &collector) }
                return collector.frame
            }
            guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
            if let data = json["data"], json["stream"] != nil {
                guard data.members != nil else { return .dropped(#"\#(context): "data" is \#(data.typeName)"#) }
                return event(data, collector: collector)
            }
            if let error = json["error"] ?? (json["code"] != nil ? json : nil), let message = error["msg"]?.string {
                return .control(.error(ExchangeJSON.text(message)))
            }
            if json["result"] != nil, let id = json["id"] {
                return .control(
                    .subscribed("id \(id.integer.map(String.init) ?? id.string.map(ExchangeJSON.text) ?? "?")"))
            }
            return event(json, collector: collector)
        }
    }

    private static func event(_ json: FeedJSON, collector: TickCollector) -> ExchangeFrame {
        var collector = collector
        switch json["e"]?.string {
        case "24hrTicker"?:
            tick(json, into: &collector)
            return collector.frame
        case "serverShutdown"?: return .control(.notice("serverShutdown"))
        case let other?:
            return .dropped("\(collector.context): event \"\(ExchangeJSON.text(other))\" is not 24hrTicker")
        case nil: return .dropped(#"\#(collector.context): no "e" (event type)"#)
        }
    }

    private static func tick(_ json: FeedJSON, into collector: inout TickCollector) {
        guard json["e"]?.string == "24hrTicker" else { return collector.skip("an entry is not a 24hrTicker event") }
        collector.add(
            symbol: json["s"], time: json["E"]?.integer, price: json["c"]?.number,
            change24h: ExchangeJSON.figure(json["P"]), volume24h: ExchangeJSON.figure(json["q"]))
    }
}
