import Platform
import Synchronization

/// The OKX v5 spot look-alike, written from OKX's v5 documentation (www.okx.com/docs-v5:
/// "Get instruments", "Get tickers", "Get ticker", "Get candlesticks", "Get candlesticks
/// history", "WebSocket: Connect", "Tickers channel"): spot instruments and tickers over REST,
/// candles (at most 300 per request, only the latest 1440) and history candles (at most 100 per
/// request), and the public websocket at `/ws/v5/public` with the `tickers` channel, one
/// acknowledgement per argument, `ping` answered with `pong`, and a connection from which
/// nothing arrives for 30 s closed.
enum OKX {
    static let maxCandles = 300
    static let candleDepth = 1440
    static let maxHistoryCandles = 100
    static let bars: [String: Int64] = [
        "1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1H": 60, "2H": 120, "4H": 240, "6H": 360, "12H": 720,
        "1D": 1440, "1W": 10080
    ]

    static func failure(_ code: String, _ message: String) -> VenueResponse {
        .ok(#"{"code":"\#(code)","msg":\#(VenueText.quote(message)),"data":[]}"#)
    }

    static func data(_ rows: [String]) -> VenueResponse {
        .ok(#"{"code":"0","msg":"","data":[\#(rows.joined(separator: ","))]}"#)
    }

    static func routes(_ context: VenueContext) -> [VenueRoute] {
        let markets = context.markets.all(.okx)
        let index = context.markets.index(.okx)
        return [
            VenueRoute(path: "/api/v5/public/instruments") { query, _ in
                guard let type = query["instType"] else {
                    return failure("50014", "Parameter instType can not be empty.")
                }
                guard type == "SPOT" else { return data([]) }
                var chosen = markets
                if let id = query["instId"] { chosen = index[id].map { [$0] } ?? [] }
                return data(
                    chosen.map { m in
                        let q = VenueText.quote
                        return """
                            {"alias":"","baseCcy":\(q(m.base)),"category":"1","ctMult":"","ctType":"","ctVal":"",\
                            "ctValCcy":"","expTime":"","instFamily":"","instId":\(q(m.symbol)),"instType":"SPOT","lever":"",\
                            "listTime":"1606468572000","lotSz":"0.00000001","maxIcebergSz":"9999999999.0000000000000000",\
                            "minSz":"0.00001","quoteCcy":\(q(m.quote)),\
                            "settleCcy":"","state":"live","tickSz":"0.0001","uly":""}
                            """
                    })
            },
            VenueRoute(path: "/api/v5/market/tickers") { query, _ in
                guard let type = query["instType"] else {
                    return failure("50014", "Parameter instType can not be empty.")
                }
                guard type == "SPOT" else { return data([]) }
                let board = context.board(.okx)
                let now = Wallclock.millis()
                return data(markets.compactMap { m in board.entries[m.board].map { ticker(m, $0, time: now) } })
            },
            VenueRoute(path: "/api/v5/market/ticker") { query, _ in
                guard let id = query["instId"], let m = index[id], let e = context.board(.okx).entries[m.board] else {
                    return failure("51001", "Instrument ID does not exist")
                }
                return data([ticker(m, e, time: Wallclock.millis())])
            },
            VenueRoute(path: "/api/v5/market/candles") { query, _ in
                candles(query, context, index, maxLimit: maxCandles, depth: candleDepth)
            },
            VenueRoute(path: "/api/v5/market/history-candles") { query, _ in
                candles(query, context, index, maxLimit: maxHistoryCandles, depth: nil)
            }
        ]
    }

    /// `after`: older than this time (ms); `before`: newer than this time; newest first.
    /// `depth`: only the latest this many candles exist (`candles`); nil: all (`history-candles`).
    static func candles(
        _ query: [String: String], _ context: VenueContext, _ index: [String: VenueMarket], maxLimit: Int, depth: Int?
    ) -> VenueResponse {
        guard let id = query["instId"], let m = index[id] else {
            return failure("51001", "Instrument ID does not exist")
        }
        let bar = query["bar"] ?? "1m"
        guard let minutes = bars[bar] else { return failure("51000", "Parameter bar error") }
        let limit = query["limit"].map { Int($0) ?? -1 } ?? 100
        guard (1...maxLimit).contains(limit) else { return failure("51000", "Parameter limit error") }
        let after = query["after"].flatMap { Int64($0) }
        let before = query["before"].flatMap { Int64($0) }
        var rows: [VenueCandle]
        if let depth {
            rows = context.candles(
                board: m.board, minutes: minutes, start: nil, end: nil, limit: depth, newestFirst: true)
            if let after { rows.removeAll { $0.time >= after } }
            if let before { rows.removeAll { $0.time <= before } }
            rows = Array(rows.prefix(limit))
        } else {
            rows = context.candles(
                board: m.board, minutes: minutes, start: before.map { $0 + 1 }, end: after.map { $0 - 1 }, limit: limit,
                newestFirst: true)
        }
        let s = VenueText.string
        return data(
            rows.map { c in
                #"["\#(c.time)",\#(s(c.open)),\#(s(c.high)),\#(s(c.low)),\#(s(c.close)),\#(s(c.volume)),\#(s(c.volume * c.close)),\#(s(c.volume * c.close)),"1"]"#
            })
    }

    static func ticker(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64) -> String {
        let s = VenueText.string
        return """
            {"instType":"SPOT","instId":\(VenueText.quote(m.symbol)),"last":\(s(e.last)),"lastSz":"1",\
            "askPx":\(s(e.last)),"askSz":"1","bidPx":\(s(e.last)),"bidSz":"1","open24h":\(s(e.open)),\
            "high24h":\(s(e.high)),"low24h":\(s(e.low)),"volCcy24h":\(s(VenueText.quoteVolume(e))),\
            "vol24h":\(s(e.volume)),"ts":"\(time)","sodUtc0":\(s(e.open)),"sodUtc8":\(s(e.open))}
            """
    }

    static func socketRoutes(_ context: VenueContext) -> [VenueSocketRoute] {
        let index = context.markets.index(.okx)
        return [VenueSocketRoute(path: "/ws/v5/public") { _, _ in OKXConnection(index: index, context: context) }]
    }
}

/// One OKX v5 public websocket connection.
final class OKXConnection: VenueConnection {
    private struct State {
        var instruments: [String] = []
        var lastMessage: Duration = .zero
    }

    private let index: [String: VenueMarket]
    private let byBoard: [String: VenueMarket]
    private let context: VenueContext
    private let state = Mutex(State())
    private let connectionID = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    init(index: [String: VenueMarket], context: VenueContext) {
        self.index = index
        byBoard = VenueMarket.byBoard(index)
        self.context = context
    }

    func opened(now: Int64) -> [String] { [] }

    private func push(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64) -> String {
        #"{"arg":{"channel":"tickers","instId":\#(VenueText.quote(m.symbol))},"data":[\#(OKX.ticker(m, e, time: time))]}"#
    }

    func received(_ text: String, age: Duration, now: Int64) -> VenueReply {
        state.withLock { $0.lastMessage = age }
        if text == "ping" { return VenueReply(messages: ["pong"]) }
        let conn = #""connId":"\#(connectionID)""#
        guard let object = jsonObject(text), let op = object["op"] as? String else {
            return VenueReply(messages: [
                #"{"event":"error","code":"60012","msg":\#(VenueText.quote("Invalid request: \(text.prefix(200))")),\#(conn)}"#
            ])
        }
        let id = object["id"].map { "\"id\":" + jsonID($0) + "," } ?? ""
        guard op == "subscribe" || op == "unsubscribe", let args = object["args"] as? [[String: Any]] else {
            return VenueReply(messages: [
                #"{\#(id)"event":"error","code":"60012","msg":\#(VenueText.quote("Invalid request: \(text.prefix(200))")),\#(conn)}"#
            ])
        }
        let board = op == "subscribe" ? context.board(.okx) : nil
        return state.withLock { state in
            var messages: [String] = []
            for arg in args {
                let channel = arg["channel"] as? String ?? ""
                let instID = arg["instId"] as? String ?? ""
                guard channel == "tickers", let m = index[instID] else {
                    let message =
                        "Wrong URL or channel:\(channel),instId:\(instID) doesn't exist. Please use the correct URL, channel and parameters referring to API document."
                    messages.append(
                        #"{\#(id)"event":"error","code":"60018","msg":\#(VenueText.quote(message)),\#(conn)}"#)
                    continue
                }
                messages.append(
                    #"{\#(id)"event":"\#(op)","arg":{"channel":"tickers","instId":\#(VenueText.quote(instID))},\#(conn)}"#
                )
                if op == "subscribe" {
                    guard !state.instruments.contains(instID) else { continue }
                    state.instruments.append(instID)
                    if let e = board?.entries[m.board] { messages.append(push(m, e, time: now)) }
                } else {
                    state.instruments.removeAll { $0 == instID }
                }
            }
            return VenueReply(messages: messages, subscribed: !state.instruments.isEmpty)
        }
    }

    func render(_ update: BoardUpdate) -> [String] {
        let update = context.update(update, for: .okx)
        let followed = Set(state.withLock { $0.instruments })
        guard !followed.isEmpty else { return [] }
        return update.entries.compactMap { board, entry in
            guard let m = byBoard[board], followed.contains(m.symbol) else { return nil }
            return push(m, entry, time: update.time)
        }
    }

    func tick(age: Duration, now: Int64) -> [VenueAction] {
        let last = state.withLock { $0.lastMessage }
        guard age - last >= context.keepAlive.okxIdleLimit else { return [] }
        return [.close(code: 4004, reason: "No data received in 30s.")]
    }
}
