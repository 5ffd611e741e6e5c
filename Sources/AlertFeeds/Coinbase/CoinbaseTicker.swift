import JSONTokens

/// Coinbase Advanced Trade market data websocket (`wss://advanced-trade-ws.coinbase.com`):
/// the public `ticker` channel and `heartbeats`. Docs:
/// https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/websocket/websocket-channels
///
/// Tick (rules v3 §2), per `events[].tickers[]` entry: symbol `product_id` (`BTC-USD`, `-` as
/// `/` via `commonSymbol`), time the message's `timestamp` (RFC 3339), price `price`,
/// change24h `price_percent_chg_24_h` (percent), volume24h `volume_24_h` × `price` (the
/// channel gives base volume). `ticker_batch` has the same shape and is read the same way.
/// Control: `subscriptions` (ack), `heartbeats`, `{"type":"error","message":…}`.
public enum CoinbaseTicker {
    /// Coinbase closes a connection that sends no subscribe within 5 s of connecting, and
    /// "most channels close within 60-90 seconds if no updates are sent" unless `heartbeats`
    /// is subscribed (docs above): a runner sends every message of `subscribeMessages` right
    /// after connecting, heartbeats first.
    public static let subscribeDeadlineSeconds = 5
    /// Product ids per subscribe message: the docs set no limit per message; 100 keeps each
    /// message small.
    public static let productsPerMessage = 100
    public static let heartbeatsMessage = #"{"type":"subscribe","channel":"heartbeats"}"#

    /// The heartbeats subscription, then the ticker subscriptions in batches.
    public static func subscribeMessages(productIDs: [String]) -> [String] {
        [heartbeatsMessage]
            + productIDs.batched(productsPerMessage).map { ids in
                #"{"type":"subscribe","product_ids":[\#(ids.map(jsonString).joined(separator: ","))],"channel":"ticker"}"#
            }
    }

    /// `BTC-USD` → `BTC/USD`.
    public static func commonSymbol(_ productID: String) -> String {
        String(productID.map { $0 == "-" ? "/" : $0 })
    }

    public static func parse(_ frame: [UInt8], reading: FrameReading = .tokens) -> ExchangeFrame {
        read(frame, reading: reading).frame
    }

    /// The frame and its `sequence_num`: every message of a connection (heartbeats and
    /// subscription acks too) carries the next number; a jump means messages were lost, and
    /// the docs' remedy is a fresh subscription. `reading` as `FrameReading` says.
    public static func read(
        _ frame: [UInt8], reading: FrameReading = .tokens
    ) -> (
        frame: ExchangeFrame, sequence: Int64?
    ) {
        if reading == .tokens, let read = tokenRead(frame) { return read }
        return treeRead(frame)
    }

    /// The frame read from its tokens, or nil when it is not the hot shape.
    static func tokenRead(_ frame: [UInt8]) -> (frame: ExchangeFrame, sequence: Int64?)? {
        ExchangeJSON.tokenRead(frame) { scanner throws(TickLineError) in try tokenMessage(&scanner) }
    }

    /// One `tickers` entry as read, before the message's time is known (it may come later).
    private struct Entry {
        var name: String?
        var price: Double?
        var change: Double?
        var volume: Double?
    }

    /// The hot shape: a `ticker` or `ticker_batch` message with an `events` array (no
    /// `"type":"error"`).
    static func tokenMessage(_ scanner: inout JSONTokenizer) throws(TickLineError) -> (ExchangeFrame, Int64?) {
        var channel = TokenValue(), type = TokenValue(), timestamp = TokenValue(), sequence = TokenValue()
        var sawEvents = false
        var entries: [Entry] = []
        try scanner.tickerMembers { scanner, key throws(TickLineError) in
            if scanner.matches(key, "events") {
                guard try scanner.firstMember(&sawEvents, opening: 0x5B) else { return }
                try scanner.tickerElements { scanner throws(TickLineError) in
                    guard scanner.peek == 0x7B else { return try scanner.skipValue(depth: 2) }
                    var sawTickers = false
                    try scanner.tickerMembers { scanner, key throws(TickLineError) in
                        guard !sawTickers, scanner.matches(key, "tickers") else {
                            return try scanner.skipValue(depth: 3)
                        }
                        sawTickers = true
                        guard scanner.peek == 0x5B else { return try scanner.skipValue(depth: 3) }
                        try scanner.tickerElements { scanner throws(TickLineError) in
                            entries.append(try tokenEntry(&scanner))
                        }
                    }
                }
            } else if scanner.matches(key, "channel") {
                try scanner.take(&channel, depth: 1)
            } else if scanner.matches(key, "timestamp") {
                try scanner.take(&timestamp, depth: 1)
            } else if scanner.matches(key, "sequence_num") {
                try scanner.take(&sequence, depth: 1)
            } else if scanner.matches(key, "type") {
                try scanner.take(&type, depth: 1)
            } else {
                try scanner.skipValue(depth: 1)
            }
        }
        try scanner.tickerEnd()
        let ticker = try scanner.string(channel, is: "ticker") == true
        let batch = try scanner.string(channel, is: "ticker_batch") == true
        guard sawEvents, try scanner.string(type, is: "error") != true, ticker || batch else { throw notTheHotShape }
        let time = try scanner.millis(timestamp)
        var collector = TickCollector("Coinbase frame")
        for entry in entries {
            collector.add(
                name: entry.name, time: time, price: entry.price, change24h: entry.change, volume24h: entry.volume)
        }
        return (collector.frame, try scanner.integer(sequence))
    }

    /// One element of `tickers` (depth 4 in the message).
    private static func tokenEntry(_ scanner: inout JSONTokenizer) throws(TickLineError) -> Entry {
        let f = try scanner.fields(entryKeys, depth: 5)
        let last = try scanner.figure(f[1])
        return Entry(
            name: try scanner.symbolName(f[0]), price: last, change: try scanner.figure(f[2]),
            volume: ExchangeJSON.product(try scanner.figure(f[3]), last))
    }

    private static let entryKeys: [StaticString] = ["product_id", "price", "price_percent_chg_24_h", "volume_24_h"]

    static func treeRead(_ frame: [UInt8]) -> (frame: ExchangeFrame, sequence: Int64?) {
        let context = "Coinbase frame"
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return (.dropped(failure.reason), nil)
        case .success(let json): return (message(json, context: context), json["sequence_num"]?.integer)
        }
    }

    private static func message(_ json: FeedJSON, context: String) -> ExchangeFrame {
        guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
        if json["type"]?.string == "error" {
            return .control(.error(ExchangeJSON.text(json["message"]?.string ?? json["reason"]?.string ?? "error")))
        }
        switch json["channel"]?.string {
        case "heartbeats"?: return .control(.heartbeat)
        case "subscriptions"?:
            let names = json["events"]?.array?.first?["subscriptions"]?.members?.map(\.key) ?? []
            return .control(.subscribed(ExchangeJSON.text(names.joined(separator: ","))))
        case "ticker"?, "ticker_batch"?: break
        case let other?: return .dropped("\(context): channel \"\(ExchangeJSON.text(other))\" is not ticker")
        case nil: return .dropped(#"\#(context): no "channel""#)
        }
        guard let events = json["events"]?.array else { return .dropped(#"\#(context): no "events" array"#) }
        let time = ExchangeJSON.millis(json["timestamp"])
        var collector = TickCollector(context)
        for event in events {
            for entry in event["tickers"]?.array ?? [] {
                add(entry, time: time, change: "price_percent_chg_24_h", volume: "volume_24_h", to: &collector)
            }
        }
        return collector.frame
    }

    /// One product's tick: `price`, the 24 h change under `change`, and the base volume under
    /// `volume` × `price` (the websocket and the REST product list name them differently).
    static func add(
        _ entry: FeedJSON, time: Int64?, change: String, volume: String, to collector: inout TickCollector
    ) {
        let price = ExchangeJSON.figure(entry["price"])
        collector.add(
            symbol: entry["product_id"], time: time, price: price, change24h: ExchangeJSON.figure(entry[change]),
            volume24h: ExchangeJSON.product(ExchangeJSON.figure(entry[volume]), price))
    }
}
