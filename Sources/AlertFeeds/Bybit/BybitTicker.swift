import JSONTokens

/// Bybit v5 public spot websocket (`wss://stream.bybit.com/v5/public/spot`), topic
/// `tickers.<SYMBOL>`. Docs: https://bybit-exchange.github.io/docs/v5/websocket/public/ticker,
/// https://bybit-exchange.github.io/docs/v5/ws/connect
///
/// Tick (rules v3 §2): symbol `data.symbol` (`BTCUSDT`, mapped to `BASE/QUOTE` by
/// `BybitMarkets`), time the message's `ts`, price `lastPrice`, change24h `price24hPcnt` × 100
/// (a fraction), volume24h `turnover24h` (quote). Spot sends only snapshots; a `delta` frame
/// (linear/inverse: missing field = unchanged) is dropped, as it cannot be read on its own.
/// Control: `{"op":"subscribe","success":…,"ret_msg":…}`, pongs (`{"op":"ping","ret_msg":"pong",…}`
/// on spot, `{"op":"pong",…}` elsewhere).
public enum BybitTicker {
    /// "For spot, you can input up to 10 args for each subscription request sent to one
    /// connection" (docs: ws/connect).
    public static let argsPerMessage = 10
    /// Sent every 20 s, as the docs recommend, to keep the connection alive.
    public static let pingMessage = #"{"op":"ping"}"#

    public static func subscribeMessages(symbols: [String]) -> [String] {
        symbols.batched(argsPerMessage).map { batch in
            #"{"op":"subscribe","args":[\#(batch.map { jsonString("tickers.\($0)") }.joined(separator: ","))]}"#
        }
    }

    /// The frame's meaning; `reading` as `FrameReading` says (both give the same result).
    public static func parse(_ frame: [UInt8], reading: FrameReading = .tokens) -> ExchangeFrame {
        reading == .tokens ? tokenParse(frame) ?? treeParse(frame) : treeParse(frame)
    }

    /// The frame read from its tokens, or nil when it is not the hot shape.
    static func tokenParse(_ frame: [UInt8]) -> ExchangeFrame? {
        ExchangeJSON.tokenRead(frame) { scanner throws(TickLineError) in try tokenTicker(&scanner) }
    }

    /// The hot shape: a `tickers.*` snapshot (no `op` member, `type` absent or `snapshot`)
    /// whose `data` is an object.
    static func tokenTicker(_ scanner: inout JSONTokenizer) throws(TickLineError) -> ExchangeFrame {
        var topic = TokenValue(), type = TokenValue(), ts = TokenValue()
        var data = InlineArray<8, TokenValue>(repeating: TokenValue())
        var sawData = false
        try scanner.tickerMembers { scanner, key throws(TickLineError) in
            if scanner.matches(key, "data") {
                guard try scanner.firstMember(&sawData, opening: 0x7B) else { return }
                data = try scanner.fields(dataKeys, depth: 2)
            } else if scanner.matches(key, "topic") {
                try scanner.take(&topic, depth: 1)
            } else if scanner.matches(key, "type") {
                try scanner.take(&type, depth: 1)
            } else if scanner.matches(key, "ts") {
                try scanner.take(&ts, depth: 1)
            } else if scanner.matches(key, "op") {
                throw notTheHotShape
            } else {
                try scanner.skipValue(depth: 1)
            }
        }
        try scanner.tickerEnd()
        // An ASCII topic: `String.hasPrefix` compares characters, and a combining mark after
        // the dot would make it differ from the bytes.
        guard sawData, topic.kind == .string, topic.range.count >= 8,
            !topic.range.contains(where: { scanner.bytes[$0] >= 0x80 }),
            scanner.matches(topic.range.lowerBound..<(topic.range.lowerBound + 8), "tickers."),
            try scanner.string(type, is: "snapshot") != false
        else { throw notTheHotShape }
        var collector = TickCollector("Bybit frame")
        collector.add(
            name: try scanner.symbolName(data[0]), time: try scanner.integer(ts), price: try scanner.figure(data[1]),
            change24h: try scanner.figure(data[2]).map { $0 * 100 }, volume24h: try scanner.figure(data[3]))
        return collector.frame
    }

    private static let dataKeys: [StaticString] = ["symbol", "lastPrice", "price24hPcnt", "turnover24h"]

    static func treeParse(_ frame: [UInt8]) -> ExchangeFrame {
        let context = "Bybit frame"
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return .dropped(failure.reason)
        case .success(let json):
            guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
            if let op = json["op"]?.string {
                let message = json["ret_msg"]?.string
                switch op {
                case "pong": return .control(.pong)
                case "ping" where message == "pong": return .control(.pong)
                default:
                    if json["success"]?.bool == false {
                        return .control(.error(ExchangeJSON.text(message ?? "\(op) failed")))
                    }
                    if op == "subscribe" {
                        return .control(.subscribed(ExchangeJSON.text(json["req_id"]?.string ?? op)))
                    }
                    return .dropped("\(context): op \"\(ExchangeJSON.text(op))\" not expected")
                }
            }
            guard let topic = json["topic"]?.string else { return .dropped(#"\#(context): no "topic" and no "op""#) }
            guard topic.hasPrefix("tickers.") else {
                return .dropped("\(context): topic \"\(ExchangeJSON.text(topic))\" is not tickers")
            }
            if let type = json["type"]?.string, type != "snapshot" {
                return .dropped("\(context): type \"\(ExchangeJSON.text(type))\" is not a spot snapshot")
            }
            guard let data = json["data"], data.members != nil else {
                return .dropped(#"\#(context): "data" is not an object"#)
            }
            var collector = TickCollector(context)
            collector.add(
                symbol: data["symbol"], time: json["ts"]?.integer, price: ExchangeJSON.figure(data["lastPrice"]),
                change24h: ExchangeJSON.figure(data["price24hPcnt"]).map { $0 * 100 },
                volume24h: ExchangeJSON.figure(data["turnover24h"]))
            return collector.frame
        }
    }
}
