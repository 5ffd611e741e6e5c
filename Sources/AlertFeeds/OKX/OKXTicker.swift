import JSONTokens

/// OKX v5 public websocket (`wss://ws.okx.com:8443/ws/v5/public`), `tickers` channel. Docs:
/// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-tickers-channel,
/// https://www.okx.com/docs-v5/en/#overview-websocket-connect
///
/// Tick (rules v3 §2), per `data[]` entry of instType `SPOT` (others skipped): symbol `instId`
/// (`BTC-USDT`, `-` as `/` via `commonSymbol`), time `ts`, price `last`, change24h
/// (`last` − `open24h`) / `open24h` × 100 (none when `open24h` is missing or 0), volume24h
/// `volCcy24h` (quote currency for spot).
/// Control: the text frame `pong`, `{"event":"subscribe",…}`, `{"event":"error","code":…,"msg":…}`,
/// `{"event":"notice",…}` and `{"event":"channel-conn-count",…}`.
public enum OKXTicker {
    /// "The total length of multiple channels cannot exceed 64 KB" per subscribe request
    /// (docs: websocket subscribe): each message stays under this many bytes.
    public static let maxMessageBytes = 65_536
    /// Sent every 20 s (`ExchangeProfile.okx`): OKX closes a connection on which nothing
    /// passed for 30 s; the answer is the text `pong`.
    public static let pingMessage = "ping"

    public static func subscribeMessages(instIDs: [String]) -> [String] {
        let head = #"{"op":"subscribe","args":["#, tail = "]}"
        var messages: [String] = []
        var args: [String] = []
        var size = head.utf8.count + tail.utf8.count
        for id in instIDs {
            let arg = #"{"channel":"tickers","instId":\#(jsonString(id))}"#
            if !args.isEmpty, size + arg.utf8.count + 1 > maxMessageBytes {
                messages.append(head + args.joined(separator: ",") + tail)
                args = []
                size = head.utf8.count + tail.utf8.count
            }
            args.append(arg)
            size += arg.utf8.count + 1
        }
        if !args.isEmpty { messages.append(head + args.joined(separator: ",") + tail) }
        return messages
    }

    /// `BTC-USDT` → `BTC/USDT`.
    public static func commonSymbol(_ instID: String) -> String {
        String(instID.map { $0 == "-" ? "/" : $0 })
    }

    /// The frame's meaning; `reading` as `FrameReading` says (both give the same result).
    public static func parse(_ frame: [UInt8], reading: FrameReading = .tokens) -> ExchangeFrame {
        reading == .tokens ? tokenParse(frame) ?? treeParse(frame) : treeParse(frame)
    }

    /// The frame read from its tokens, or nil when it is not the hot shape.
    static func tokenParse(_ frame: [UInt8]) -> ExchangeFrame? {
        ExchangeJSON.tokenRead(frame) { scanner throws(TickLineError) in try tokenPush(&scanner) }
    }

    /// The hot shape: a `tickers` push (no `event` member, `arg` an object whose `channel` is
    /// `tickers`) with a `data` array of entries that are SPOT or give no `instType` string.
    static func tokenPush(_ scanner: inout JSONTokenizer) throws(TickLineError) -> ExchangeFrame {
        var channel = TokenValue()
        var sawArg = false, sawData = false
        var collector = TickCollector("OKX frame")
        try scanner.tickerMembers { scanner, key throws(TickLineError) in
            if scanner.matches(key, "data") {
                guard try scanner.firstMember(&sawData, opening: 0x5B) else { return }
                try scanner.tickerElements { scanner throws(TickLineError) in
                    try tokenEntry(&scanner, into: &collector)
                }
            } else if scanner.matches(key, "arg") {
                guard try scanner.firstMember(&sawArg, opening: 0x7B) else { return }
                channel = try scanner.fields(["channel"], depth: 2)[0]
            } else if scanner.matches(key, "event") {
                throw notTheHotShape
            } else {
                try scanner.skipValue(depth: 1)
            }
        }
        try scanner.tickerEnd()
        guard sawData, try scanner.string(channel, is: "tickers") == true else { throw notTheHotShape }
        return collector.frame
    }

    /// One element of `data` (depth 2).
    private static func tokenEntry(
        _ scanner: inout JSONTokenizer, into collector: inout TickCollector
    )
        throws(TickLineError)
    {
        let f = try scanner.fields(entryKeys, depth: 3)
        guard try scanner.string(f[0], is: "SPOT") != false else { throw notTheHotShape }
        let price = try scanner.figure(f[3])
        let change = try price.flatMap { last throws(TickLineError) in
            try scanner.figure(f[4]).flatMap { open in open != 0 ? (last - open) / open * 100 : nil }
        }
        collector.add(
            name: try scanner.symbolName(f[1]), time: try scanner.integer(f[2]), price: price,
            change24h: change.flatMap { $0.isFinite ? $0 : nil }, volume24h: try scanner.figure(f[5]))
    }

    private static let entryKeys: [StaticString] = ["instType", "instId", "ts", "last", "open24h", "volCcy24h"]

    static func treeParse(_ frame: [UInt8]) -> ExchangeFrame {
        let context = "OKX frame"
        if frame.withUnsafeBufferPointer({ ControlFrame.isPlainText($0, oneOf: ["pong"]) }) { return .control(.pong) }
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return .dropped(failure.reason)
        case .success(let json):
            guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
            if let event = json["event"]?.string {
                switch event {
                case "subscribe":
                    let arg = json["arg"]
                    let name = [arg?["channel"]?.string, arg?["instId"]?.string].compactMap { $0 }.joined(
                        separator: " ")
                    return .control(.subscribed(ExchangeJSON.text(name)))
                case "error":
                    let code = json["code"]?.string ?? json["code"]?.integer.map(String.init) ?? "?"
                    return .control(.error(ExchangeJSON.text("\(code): \(json["msg"]?.string ?? "")")))
                default: return .control(.notice(ExchangeJSON.text(event)))
                }
            }
            guard let channel = json["arg"]?["channel"]?.string else {
                return .dropped(#"\#(context): no "arg.channel" and no "event""#)
            }
            guard channel == "tickers" else {
                return .dropped("\(context): channel \"\(ExchangeJSON.text(channel))\" is not tickers")
            }
            guard let entries = json["data"]?.array else { return .dropped(#"\#(context): no "data" array"#) }
            var collector = TickCollector(context)
            for entry in entries { add(entry, to: &collector) }
            return collector.frame
        }
    }

    /// One `tickers` entry as a tick (rules v3 §2); entries of other instrument types skipped.
    static func add(_ entry: FeedJSON, to collector: inout TickCollector) {
        if let type = entry["instType"]?.string, type != "SPOT" {
            return collector.skip("instType \(ExchangeJSON.text(type)) is not SPOT")
        }
        let last = ExchangeJSON.figure(entry["last"])
        let change = last.flatMap { last in
            ExchangeJSON.figure(entry["open24h"]).flatMap { open in open != 0 ? (last - open) / open * 100 : nil }
        }
        collector.add(
            symbol: entry["instId"], time: entry["ts"]?.integer, price: last,
            change24h: change.flatMap { $0.isFinite ? $0 : nil }, volume24h: ExchangeJSON.figure(entry["volCcy24h"]))
    }
}
