import Platform
import Synchronization

/// The Bybit v5 spot look-alike, written from Bybit's v5 documentation
/// (bybit-exchange.github.io/docs/v5: "Get Instruments Info", "Get Tickers", "Get Kline",
/// "WebSocket Connect", "Ticker"): spot instruments, tickers and klines (at most 1000) over
/// REST, and the public spot websocket at `/v5/public/spot` with `tickers.<symbol>` topics, at
/// most 10 args per subscribe, `{"op":"ping"}` answered with a pong, and a connection that sends
/// no ping for `KeepAliveSettings.bybitPingWithin` closed.
enum Bybit {
    static let maxKlines = 1000
    static let defaultKlines = 200
    static let maxArgs = 10
    static let intervals: [String: Int64] = [
        "1": 1, "3": 3, "5": 5, "15": 15, "30": 30, "60": 60, "120": 120, "240": 240, "360": 360, "720": 720,
        "D": 1440, "W": 10080
    ]

    static func answer(_ result: String, code: Int = 0, message: String = "OK") -> VenueResponse {
        .ok(
            #"{"retCode":\#(code),"retMsg":\#(VenueText.quote(message)),"result":\#(result),"retExtInfo":{},"time":\#(Wallclock.millis())}"#
        )
    }

    static func failure(_ code: Int, _ message: String) -> VenueResponse { answer("{}", code: code, message: message) }

    static func routes(_ context: VenueContext) -> [VenueRoute] {
        let markets = context.markets.all(.bybit)
        let index = context.markets.index(.bybit)
        return [
            VenueRoute(path: "/v5/market/instruments-info") { query, _ in
                guard query["category"] == "spot" else { return failure(10001, "Illegal category") }
                var chosen = markets
                if let symbol = query["symbol"] { chosen = index[symbol].map { [$0] } ?? [] }
                let rows = chosen.map { m in
                    let q = VenueText.quote
                    return """
                        {"symbol":\(q(m.symbol)),"baseCoin":\(q(m.base)),"quoteCoin":\(q(m.quote)),"innovation":"0",\
                        "status":"Trading","marginTrading":"none","lotSizeFilter":{"basePrecision":"0.000001",\
                        "quotePrecision":"0.00000001","minOrderQty":"0.000048","maxOrderQty":"71.73956243",\
                        "minOrderAmt":"1","maxOrderAmt":"2000000"},"priceFilter":{"tickSize":"0.01"}}
                        """
                }
                return answer(#"{"category":"spot","list":[\#(rows.joined(separator: ","))]}"#)
            },
            VenueRoute(path: "/v5/market/tickers") { query, _ in
                guard query["category"] == "spot" else { return failure(10001, "Illegal category") }
                var chosen = markets
                if let symbol = query["symbol"] {
                    guard let m = index[symbol] else { return failure(10001, "Not supported symbols") }
                    chosen = [m]
                }
                let board = context.board(.bybit)
                let rows = chosen.compactMap { m in board.entries[m.board].map { ticker(m, $0, rest: true) } }
                return answer(#"{"category":"spot","list":[\#(rows.joined(separator: ","))]}"#)
            },
            VenueRoute(path: "/v5/market/kline") { query, _ in
                guard query["category"] == nil || query["category"] == "spot" else {
                    return failure(10001, "Illegal category")
                }
                guard let symbol = query["symbol"], let m = index[symbol] else {
                    return failure(10001, "Not supported symbols")
                }
                guard let name = query["interval"], let minutes = intervals[name] else {
                    return failure(10001, "Invalid period!")
                }
                let limit = query["limit"].map { Int($0) ?? -1 } ?? defaultKlines
                guard (1...maxKlines).contains(limit) else { return failure(10001, "Invalid limit") }
                let candles = context.candles(
                    board: m.board, minutes: minutes, start: query["start"].flatMap { Int64($0) },
                    end: query["end"].flatMap { Int64($0) }, limit: limit, newestFirst: true)
                let s = VenueText.string
                let rows = candles.map { c in
                    #"["\#(c.time)",\#(s(c.open)),\#(s(c.high)),\#(s(c.low)),\#(s(c.close)),\#(s(c.volume)),\#(s(c.volume * c.close))]"#
                }
                return answer(
                    #"{"symbol":\#(VenueText.quote(symbol)),"category":"spot","list":[\#(rows.joined(separator: ","))]}"#
                )
            }
        ]
    }

    /// A spot ticker: the REST entry (`rest`) or the websocket `data` object. `price24hPcnt` is
    /// a fraction (`-0.0049` is −0.49 %), as Bybit sends it.
    static func ticker(_ m: VenueMarket, _ e: MarketBoard.Entry, rest: Bool) -> String {
        let s = VenueText.string
        let book = rest ? #""bid1Price":\#(s(e.last)),"bid1Size":"1","ask1Price":\#(s(e.last)),"ask1Size":"1","# : ""
        return """
            {"symbol":\(VenueText.quote(m.symbol)),\(book)"lastPrice":\(s(e.last)),"highPrice24h":\(s(e.high)),\
            "lowPrice24h":\(s(e.low)),"prevPrice24h":\(s(e.open)),"volume24h":\(s(e.volume)),\
            "turnover24h":\(s(VenueText.quoteVolume(e))),"price24hPcnt":\(s(e.percentageChange / 100)),\
            "usdIndexPrice":\(s(e.last))}
            """
    }

    static func socketRoutes(_ context: VenueContext) -> [VenueSocketRoute] {
        let index = context.markets.index(.bybit)
        return [
            VenueSocketRoute(path: "/v5/public/spot") { _, _ in BybitConnection(index: index, context: context) }
        ]
    }
}

/// One Bybit v5 public spot connection.
final class BybitConnection: VenueConnection {
    private struct State {
        var topics: [String] = []
        var lastPing: Duration = .zero
        var cs: Int64 = 1
    }

    private let index: [String: VenueMarket]
    private let byBoard: [String: VenueMarket]
    private let context: VenueContext
    private let state = Mutex(State())
    private let connectionID: String

    init(index: [String: VenueMarket], context: VenueContext) {
        self.index = index
        byBoard = VenueMarket.byBoard(index)
        self.context = context
        connectionID = "demo-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    func opened(now: Int64) -> [String] { [] }

    private func response(_ op: String, success: Bool, _ message: String, reqID: String?) -> String {
        let req = reqID.map { ",\"req_id\":" + $0 } ?? ""
        return
            #"{"success":\#(success),"ret_msg":\#(VenueText.quote(message)),"conn_id":"\#(connectionID)"\#(req),"op":\#(VenueText.quote(op))}"#
    }

    func received(_ text: String, age: Duration, now: Int64) -> VenueReply {
        guard let object = jsonObject(text), let op = object["op"] as? String else {
            return VenueReply(messages: [response("", success: false, "error:request not understood", reqID: nil)])
        }
        let reqID = object["req_id"].map { jsonID($0) }
        switch op {
        case "ping":
            state.withLock { $0.lastPing = age }
            return VenueReply(messages: [response("ping", success: true, "pong", reqID: reqID)])
        case "subscribe", "unsubscribe":
            let args = object["args"] as? [String] ?? []
            guard args.count <= Bybit.maxArgs else {
                return VenueReply(messages: [
                    response(op, success: false, "args size >\(Bybit.maxArgs)", reqID: reqID)
                ])
            }
            let unknown = args.filter { arg in
                !(arg.hasPrefix("tickers.") && index[String(arg.dropFirst("tickers.".count))] != nil)
            }
            guard unknown.isEmpty else {
                return VenueReply(messages: [
                    response(op, success: false, "Invalid symbol :[\(unknown.joined(separator: ","))]", reqID: reqID)
                ])
            }
            let board = op == "subscribe" ? context.board(.bybit) : nil
            return state.withLock { state in
                var messages = [response(op, success: true, op == "subscribe" ? "subscribe" : "", reqID: reqID)]
                for arg in args {
                    if op == "subscribe" {
                        guard !state.topics.contains(arg) else { continue }
                        state.topics.append(arg)
                        if let m = index[String(arg.dropFirst("tickers.".count))], let e = board?.entries[m.board] {
                            messages.append(push(m, e, time: now, &state))
                        }
                    } else {
                        state.topics.removeAll { $0 == arg }
                    }
                }
                return VenueReply(messages: messages, subscribed: !state.topics.isEmpty)
            }
        default:
            return VenueReply(messages: [response(op, success: false, "error:handler not found", reqID: reqID)])
        }
    }

    private func push(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64, _ state: inout State) -> String {
        state.cs += 1
        return
            #"{"topic":"tickers.\#(m.symbol)","ts":\#(time),"type":"snapshot","cs":\#(state.cs),"data":\#(Bybit.ticker(m, e, rest: false))}"#
    }

    func render(_ update: BoardUpdate) -> [String] {
        let update = context.update(update, for: .bybit)
        return state.withLock { state in
            guard !state.topics.isEmpty else { return [] }
            let followed = Set(state.topics)
            var out: [String] = []
            for (board, entry) in update.entries {
                guard let m = byBoard[board], followed.contains("tickers." + m.symbol) else { continue }
                out.append(push(m, entry, time: update.time, &state))
            }
            return out
        }
    }

    func tick(age: Duration, now: Int64) -> [VenueAction] {
        let last = state.withLock { $0.lastPing }
        guard age - last >= context.keepAlive.bybitPingWithin else { return [] }
        return [.close(code: 1000, reason: "no ping for \(context.keepAlive.bybitPingWithin)")]
    }
}
