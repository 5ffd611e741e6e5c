import Platform
import Synchronization

/// The Kraken spot look-alike, written from Kraken's documentation (docs.kraken.com: REST
/// "Get Tradable Asset Pairs", "Get Ticker Information", "Get OHLC Data"; "Spot WebSocket v2":
/// ticker, heartbeat, ping, status): REST pairs in Kraken's own asset names (`XXBTZUSD`,
/// altname `XBTUSD`, wsname `XBT/USD`), tickers, and OHLC of only the last 720 candles; the
/// v2 websocket at `/v2` (symbols `BTC/USD`), with a status message on connect, one
/// acknowledgement per symbol, a snapshot then updates, a heartbeat each second without
/// other messages, and `ping` answered with `pong`.
enum Kraken {
    static let ohlcDepth = 720
    static let intervals: Set<Int64> = [1, 5, 15, 30, 60, 240, 1440, 10080, 21600]
    /// Assets Kraken names with four letters (`X` + its code, `XBT` for BTC, `XDG` for DOGE).
    static let legacy: [String: String] = [
        "BTC": "XBT", "ETH": "ETH", "LTC": "LTC", "XRP": "XRP", "XMR": "XMR", "DOGE": "XDG", "XLM": "XLM",
        "ETC": "ETC", "ZEC": "ZEC", "MLN": "MLN", "REP": "REP"
    ]

    /// A market's REST names: pair key, altname, wsname, base and quote asset names.
    struct Names: Sendable {
        let key, altname, wsname, base, quote: String
    }

    static func names(_ m: VenueMarket) -> Names {
        let alt = legacy[m.base] ?? m.base
        let base = legacy[m.base].map { "X" + $0 } ?? m.base
        let quote = "Z" + m.quote
        let key = legacy[m.base] != nil ? base + quote : m.base + m.quote
        return Names(key: key, altname: alt + m.quote, wsname: alt + "/" + m.quote, base: base, quote: quote)
    }

    static func failure(_ message: String) -> VenueResponse {
        VenueResponse(status: 200, body: #"{"error":[\#(VenueText.quote(message))]}"#)
    }

    /// The markets `pair=` names (comma-separated; key, altname, wsname or `BTC/USD`): all
    /// without it, nil when one is unknown.
    static func pairs(_ query: [String: String], _ markets: [VenueMarket]) -> [VenueMarket]? {
        guard let list = query["pair"] else { return markets }
        var lookup: [String: VenueMarket] = [:]
        for m in markets {
            let n = names(m)
            for name in [n.key, n.altname, n.wsname, m.symbol] { lookup[name] = m }
        }
        var found: [VenueMarket] = []
        for name in list.split(separator: ",") {
            guard let m = lookup[String(name)] else { return nil }
            found.append(m)
        }
        return found
    }

    static func routes(_ context: VenueContext) -> [VenueRoute] {
        let markets = context.markets.all(.kraken)
        return [
            VenueRoute(path: "/0/public/AssetPairs") { query, _ in
                guard let chosen = pairs(query, markets) else { return failure("EQuery:Unknown asset pair") }
                let rows = chosen.map { m in
                    let n = names(m), q = VenueText.quote
                    return """
                        \(q(n.key)):{"altname":\(q(n.altname)),"wsname":\(q(n.wsname)),"aclass_base":"currency",\
                        "base":\(q(n.base)),"aclass_quote":"currency","quote":\(q(n.quote)),"lot":"unit",\
                        "cost_decimals":5,"pair_decimals":5,"lot_decimals":8,"lot_multiplier":1,"ordermin":"0.0001",\
                        "costmin":"0.5","tick_size":"0.00001","status":"online"}
                        """
                }
                return .ok(#"{"error":[],"result":{\#(rows.joined(separator: ","))}}"#)
            },
            VenueRoute(path: "/0/public/Ticker") { query, _ in
                guard let chosen = pairs(query, markets) else { return failure("EQuery:Unknown asset pair") }
                let board = context.board(.kraken)
                let rows = chosen.compactMap { m -> String? in
                    guard let e = board.entries[m.board] else { return nil }
                    let s = VenueText.string
                    return """
                        \(VenueText.quote(names(m).key)):{"a":[\(s(e.last)),"1","1.000"],"b":[\(s(e.last)),"1","1.000"],\
                        "c":[\(s(e.last)),"1"],"v":[\(s(e.volume)),\(s(e.volume))],"p":[\(s(VenueText.vwap(e))),\
                        \(s(VenueText.vwap(e)))],"t":[1,1],"l":[\(s(e.low)),\(s(e.low))],"h":[\(s(e.high)),\(s(e.high))],\
                        "o":\(s(e.open))}
                        """
                }
                return .ok(#"{"error":[],"result":{\#(rows.joined(separator: ","))}}"#)
            },
            VenueRoute(path: "/0/public/OHLC") { query, _ in
                guard query["pair"] != nil, let chosen = pairs(query, markets), chosen.count == 1 else {
                    return failure("EQuery:Unknown asset pair")
                }
                let minutes = query["interval"].flatMap { Int64($0) } ?? 1
                guard intervals.contains(minutes) else { return failure("EGeneral:Invalid arguments:interval") }
                // Only the last 720 candles exist; `since` chooses among them.
                var candles = context.candles(
                    board: chosen[0].board, minutes: minutes, start: nil, end: nil, limit: ohlcDepth)
                if let since = query["since"].flatMap({ Int64($0) }) { candles.removeAll { $0.time / 1000 <= since } }
                let s = VenueText.string
                let rows = candles.map { c in
                    "[\(c.time / 1000),\(s(c.open)),\(s(c.high)),\(s(c.low)),\(s(c.close)),\(s((c.high + c.low + c.close) / 3)),\(s(c.volume)),1]"
                }
                let last = candles.last.map { $0.time / 1000 } ?? 0
                return .ok(
                    #"{"error":[],"result":{\#(VenueText.quote(names(chosen[0]).key)):[\#(rows.joined(separator: ","))],"last":\#(last)}}"#
                )
            }
        ]
    }

    /// One entry of a v2 `ticker` message (numbers as JSON numbers, as v2 sends them).
    static func ticker(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64) -> String {
        let n = VenueText.number
        return """
            {"symbol":\(VenueText.quote(m.symbol)),"bid":\(n(e.last)),"bid_qty":1.0,"ask":\(n(e.last)),"ask_qty":1.0,\
            "last":\(n(e.last)),"volume":\(n(e.volume)),"vwap":\(n(VenueText.vwap(e))),"low":\(n(e.low)),\
            "high":\(n(e.high)),"change":\(n(e.last - e.open)),"change_pct":\(n((e.percentageChange * 100).rounded() / 100)),\
            "timestamp":"\(VenueText.rfc3339(time, digits: 6))"}
            """
    }

    static func socketRoutes(_ context: VenueContext) -> [VenueSocketRoute] {
        let index = context.markets.index(.kraken)
        return [VenueSocketRoute(path: "/v2") { _, _ in KrakenConnection(index: index, context: context) }]
    }
}

/// One Kraken websocket v2 connection.
final class KrakenConnection: VenueConnection {
    private struct State {
        var symbols: [String] = []
        /// Whether a message went out since the last heartbeat tick.
        var sentSinceTick = false
    }

    private let index: [String: VenueMarket]
    private let byBoard: [String: VenueMarket]
    private let context: VenueContext
    private let state = Mutex(State())
    private static let connectionIDs = Atomic<Int64>(14_000_000_000)

    init(index: [String: VenueMarket], context: VenueContext) {
        self.index = index
        byBoard = VenueMarket.byBoard(index)
        self.context = context
    }

    func opened(now: Int64) -> [String] {
        let id = Self.connectionIDs.add(1, ordering: .relaxed).newValue
        return [
            #"{"channel":"status","type":"update","data":[{"version":"2.0.0","system":"online","api_version":"v2","connection_id":\#(id)}]}"#
        ]
    }

    func received(_ text: String, age: Duration, now: Int64) -> VenueReply {
        let times =
            #""time_in":"\#(VenueText.rfc3339(now, digits: 6))","time_out":"\#(VenueText.rfc3339(now, digits: 6))""#
        guard let object = jsonObject(text), let method = object["method"] as? String else {
            return VenueReply(messages: [#"{"error":"Malformed request","success":false,\#(times)}"#])
        }
        let reqID = object["req_id"].map { ",\"req_id\":" + jsonID($0) } ?? ""
        switch method {
        case "ping":
            return VenueReply(messages: [#"{"method":"pong"\#(reqID),\#(times)}"#])
        case "subscribe", "unsubscribe":
            let params = object["params"] as? [String: Any] ?? [:]
            let channel = params["channel"] as? String ?? ""
            let symbols = params["symbol"] as? [String] ?? []
            guard channel == "ticker" else {
                return VenueReply(messages: [
                    #"{"error":"Channel \#(channel) not supported","method":"\#(method)","success":false,\#(times)\#(reqID)}"#
                ])
            }
            let board = method == "subscribe" ? context.board(.kraken) : nil
            return state.withLock { state in
                var messages: [String] = []
                var snapshot: [String] = []
                for symbol in symbols {
                    guard let m = index[symbol] else {
                        messages.append(
                            #"{"error":"Currency pair not supported \#(symbol)","method":"\#(method)","success":false,"symbol":\#(VenueText.quote(symbol)),\#(times)\#(reqID)}"#
                        )
                        continue
                    }
                    messages.append(
                        #"{"method":"\#(method)","result":{"channel":"ticker","event_trigger":"trades","snapshot":true,"symbol":\#(VenueText.quote(symbol))},"success":true,\#(times)\#(reqID)}"#
                    )
                    if method == "subscribe" {
                        if !state.symbols.contains(symbol) { state.symbols.append(symbol) }
                        if let e = board?.entries[m.board] { snapshot.append(Kraken.ticker(m, e, time: now)) }
                    } else {
                        state.symbols.removeAll { $0 == symbol }
                    }
                }
                if !snapshot.isEmpty {
                    messages.append(
                        #"{"channel":"ticker","type":"snapshot","data":[\#(snapshot.joined(separator: ","))]}"#)
                }
                state.sentSinceTick = true
                return VenueReply(messages: messages, subscribed: !state.symbols.isEmpty)
            }
        default:
            return VenueReply(messages: [
                #"{"error":"Method \#(method) not supported","method":\#(VenueText.quote(method)),"success":false,\#(times)\#(reqID)}"#
            ])
        }
    }

    func render(_ update: BoardUpdate) -> [String] {
        let update = context.update(update, for: .kraken)
        return state.withLock { state in
            let followed = Set(state.symbols)
            let out = update.entries.compactMap { board, entry -> String? in
                guard let m = byBoard[board], followed.contains(m.symbol) else { return nil }
                return #"{"channel":"ticker","type":"update","data":[\#(Kraken.ticker(m, entry, time: update.time))]}"#
            }
            if !out.isEmpty { state.sentSinceTick = true }
            return out
        }
    }

    /// A heartbeat each tick without other messages, once the connection follows a channel.
    func tick(age: Duration, now: Int64) -> [VenueAction] {
        state.withLock { state in
            defer { state.sentSinceTick = false }
            guard !state.symbols.isEmpty, !state.sentSinceTick else { return [] }
            return [.send(#"{"channel":"heartbeat"}"#)]
        }
    }
}
