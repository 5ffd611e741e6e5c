import Foundation
import Platform
import Synchronization

/// The Binance spot look-alike, written from Binance's spot API documentation
/// (developers.binance.com: "General API Information", "Market Data endpoints", "WebSocket
/// Streams"): `exchangeInfo`, `ticker/24hr` and `klines` over REST, and the `<symbol>@ticker`
/// and `<symbol>@miniTicker` streams at `/ws` (raw) and `/stream` (combined), with live
/// SUBSCRIBE / UNSUBSCRIBE / LIST_SUBSCRIPTIONS, at most 1024 streams and 5 messages a second per
/// connection, a ping
/// frame every 20 s answered within a minute, a 24-hour connection lifetime and the
/// `serverShutdown` event.
enum Binance {
    static let maxStreams = 1024
    static let maxMessagesPerSecond = 5
    static let maxKlines = 1000
    static let defaultKlines = 500

    static func routes(_ context: VenueContext) -> [VenueRoute] {
        let markets = context.markets.all(.binance)
        let index = context.markets.index(.binance)
        return [
            VenueRoute(path: "/api/v3/exchangeInfo") { query, _ in
                guard let wanted = symbols(query, index) else { return invalidSymbol }
                let chosen = wanted.isEmpty ? markets : wanted
                let symbols = chosen.map { m in
                    """
                    {"symbol":\(VenueText.quote(m.symbol)),"status":"TRADING","baseAsset":\(VenueText.quote(m.base)),\
                    "baseAssetPrecision":8,"quoteAsset":\(VenueText.quote(m.quote)),"quotePrecision":8,\
                    "quoteAssetPrecision":8,"orderTypes":["LIMIT","LIMIT_MAKER","MARKET"],"isSpotTradingAllowed":true,\
                    "isMarginTradingAllowed":false,"filters":[],"permissions":[],"permissionSets":[["SPOT"]]}
                    """
                }
                return .ok(
                    #"{"timezone":"UTC","serverTime":\#(Wallclock.millis()),"rateLimits":[{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000}],"exchangeFilters":[],"symbols":[\#(symbols.joined(separator: ","))]}"#
                )
            },
            VenueRoute(path: "/api/v3/ticker/24hr") { query, _ in
                guard let wanted = symbols(query, index) else { return invalidSymbol }
                let board = context.board(.binance)
                let now = Wallclock.millis()
                let rows = (wanted.isEmpty ? markets : wanted).compactMap { m in
                    board.entries[m.board].map { ticker24hr(m, $0, now: now) }
                }
                if query["symbol"] != nil, let one = rows.first { return .ok(one) }
                return .ok("[" + rows.joined(separator: ",") + "]")
            },
            VenueRoute(path: "/api/v3/klines") { query, _ in
                guard let name = query["symbol"], let market = index[name] else { return invalidSymbol }
                guard let interval = query["interval"], let minutes = CandleWidths.binance[interval] else {
                    return VenueResponse(status: 400, body: #"{"code":-1120,"msg":"Invalid interval."}"#)
                }
                let limit = query["limit"].map { Int($0) ?? -1 } ?? defaultKlines
                guard (1...maxKlines).contains(limit) else {
                    return VenueResponse(
                        status: 400, body: #"{"code":-1130,"msg":"Data sent for parameter 'limit' is not valid."}"#)
                }
                let candles = context.candles(
                    board: market.board, minutes: minutes, start: query["startTime"].flatMap { Int64($0) },
                    end: query["endTime"].flatMap { Int64($0) }, limit: limit)
                let width = minutes * 60_000
                let rows = candles.map { c in
                    let n = VenueText.string
                    return
                        "[\(c.time),\(n(c.open)),\(n(c.high)),\(n(c.low)),\(n(c.close)),\(n(c.volume)),\(c.time + width - 1),\(n(c.volume * c.close)),1,\"0\",\"0\",\"0\"]"
                }
                return .ok("[" + rows.joined(separator: ",") + "]")
            }
        ]
    }

    static let invalidSymbol = VenueResponse(status: 400, body: #"{"code":-1121,"msg":"Invalid symbol."}"#)

    /// The markets `symbol=` or `symbols=["A","B"]` names: empty for neither, nil when one is
    /// not listed.
    static func symbols(_ query: [String: String], _ index: [String: VenueMarket]) -> [VenueMarket]? {
        var names: [String] = []
        if let one = query["symbol"] { names = [one] }
        if let list = query["symbols"] {
            guard let data = list.data(using: .utf8),
                let array = try? JSONSerialization.jsonObject(with: data) as? [String]
            else { return nil }
            names = array
        }
        var found: [VenueMarket] = []
        for name in names {
            guard let market = index[name] else { return nil }
            found.append(market)
        }
        return found
    }

    /// The REST 24-hour ticker (`GET /api/v3/ticker/24hr`, FULL).
    static func ticker24hr(_ m: VenueMarket, _ e: MarketBoard.Entry, now: Int64) -> String {
        let n = VenueText.string
        return """
            {"symbol":\(VenueText.quote(m.symbol)),"priceChange":\(n(e.last - e.open)),\
            "priceChangePercent":\(n(e.percentageChange)),"weightedAvgPrice":\(n(VenueText.vwap(e))),\
            "prevClosePrice":\(n(e.open)),"lastPrice":\(n(e.last)),"lastQty":"1","bidPrice":\(n(e.last)),\
            "bidQty":"1","askPrice":\(n(e.last)),"askQty":"1","openPrice":\(n(e.open)),"highPrice":\(n(e.high)),\
            "lowPrice":\(n(e.low)),"volume":\(n(e.volume)),"quoteVolume":\(n(VenueText.quoteVolume(e))),\
            "openTime":\(now - 86_400_000),"closeTime":\(now),"firstId":0,"lastId":0,"count":0}
            """
    }

    /// The `<symbol>@ticker` event (`24hrTicker`).
    static func tickerEvent(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64) -> String {
        let n = VenueText.string
        return """
            {"e":"24hrTicker","E":\(time),"s":\(VenueText.quote(m.symbol)),"p":\(n(e.last - e.open)),\
            "P":\(n(e.percentageChange)),"w":\(n(VenueText.vwap(e))),"x":\(n(e.open)),"c":\(n(e.last)),"Q":"1",\
            "b":\(n(e.last)),"B":"1","a":\(n(e.last)),"A":"1","o":\(n(e.open)),"h":\(n(e.high)),"l":\(n(e.low)),\
            "v":\(n(e.volume)),"q":\(n(VenueText.quoteVolume(e))),"O":\(time - 86_400_000),"C":\(time),\
            "F":0,"L":0,"n":0}
            """
    }

    /// The `<symbol>@miniTicker` event (`24hrMiniTicker`).
    static func miniTickerEvent(_ m: VenueMarket, _ e: MarketBoard.Entry, time: Int64) -> String {
        let n = VenueText.string
        return """
            {"e":"24hrMiniTicker","E":\(time),"s":\(VenueText.quote(m.symbol)),"c":\(n(e.last)),"o":\(n(e.open)),\
            "h":\(n(e.high)),"l":\(n(e.low)),"v":\(n(e.volume)),"q":\(n(VenueText.quoteVolume(e)))}
            """
    }

    static func socketRoutes(_ context: VenueContext) -> [VenueSocketRoute] {
        let index = context.markets.index(.binance)
        let make: @Sendable ([String], Bool) -> any VenueConnection = { streams, combined in
            BinanceConnection(index: index, combined: combined, streams: streams, context: context)
        }
        return [
            VenueSocketRoute(path: "/ws") { _, _ in make([], false) },
            VenueSocketRoute(path: "/ws/{streams}") { _, parameters in
                make((parameters["streams"] ?? "").split(separator: "/").map(String.init), false)
            },
            VenueSocketRoute(path: "/stream") { query, _ in
                make((query["streams"] ?? "").split(separator: "/").map(String.init), true)
            }
        ]
    }
}

/// One Binance stream connection.
final class BinanceConnection: VenueConnection {
    private struct State {
        /// Followed streams in subscription order.
        var streams: [String] = [] {
            didSet { byBoard = Self.index(streams, parse: parse) }
        }
        /// The followed streams by the market's key on the board, for rendering a step.
        var byBoard: [String: [(stream: String, market: VenueMarket, mini: Bool)]] = [:]
        let parse: @Sendable (String) -> (VenueMarket, mini: Bool)?

        static func index(
            _ streams: [String], parse: (String) -> (VenueMarket, mini: Bool)?
        ) -> [String: [(stream: String, market: VenueMarket, mini: Bool)]] {
            var index: [String: [(stream: String, market: VenueMarket, mini: Bool)]] = [:]
            for stream in streams {
                guard let (market, mini) = parse(stream) else { continue }
                index[market.board, default: []].append((stream, market, mini))
            }
            return index
        }
        /// Pings not answered yet: payload and when sent.
        var pings: [(payload: [UInt8], sent: Duration)] = []
        var lastPing: Duration = .zero
        var noticeSent = false
        /// Binance takes 5 messages a second on a connection, pings, pongs and JSON messages
        /// alike, and disconnects a connection that sends more.
        var rate = MessageRate(limit: Binance.maxMessagesPerSecond)
    }

    private let index: [String: VenueMarket]
    private let combined: Bool
    private let context: VenueContext
    private var keepAlive: KeepAliveSettings { context.keepAlive }
    private let state: Mutex<State>

    init(index: [String: VenueMarket], combined: Bool, streams: [String], context: VenueContext) {
        self.index = index
        self.combined = combined
        self.context = context
        // Streams named in the URL that do not exist are followed and send nothing, as on Binance.
        var initial = State(parse: { Self.parse($0, index: index) })
        initial.streams = Array(streams.prefix(Binance.maxStreams))
        state = Mutex(initial)
    }

    var subscribedAtOpen: Bool { state.withLock { !$0.streams.isEmpty } }

    func opened(now: Int64) -> [String] { [] }

    /// `btcusdt@ticker` → the market and whether it is the mini ticker; nil for anything else.
    private func parse(_ stream: String) -> (VenueMarket, mini: Bool)? {
        Self.parse(stream, index: index)
    }

    private static func parse(_ stream: String, index: [String: VenueMarket]) -> (VenueMarket, mini: Bool)? {
        let parts = stream.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == parts[0].lowercased(),
            let market = index[parts[0].uppercased()]
        else { return nil }
        switch parts[1] {
        case "ticker": return (market, false)
        case "miniTicker": return (market, true)
        default: return nil
        }
    }

    func received(_ text: String, age: Duration, now: Int64) -> VenueReply {
        let rate = state.withLock { state in state.rate.admit(at: age) ? nil : state.rate.close }
        if let rate { return VenueReply(close: rate) }
        guard let object = jsonObject(text) else {
            return VenueReply(messages: [
                #"{"error":{"code":3,"msg":"Invalid JSON: expected value at line 1 column 1"},"id":null}"#
            ])
        }
        let id = jsonID(object["id"])
        func error(_ code: Int, _ message: String) -> VenueReply {
            VenueReply(messages: [#"{"error":{"code":\#(code),"msg":\#(VenueText.quote(message))},"id":\#(id)}"#])
        }
        guard let method = object["method"] as? String else {
            return error(2, "Invalid request: missing field `method`")
        }
        switch method {
        case "SUBSCRIBE", "UNSUBSCRIBE":
            guard let params = object["params"] as? [String] else {
                return error(2, "Invalid request: `params` must be a list of stream names")
            }
            for stream in params where parse(stream) == nil {
                return error(2, "Invalid request: unknown stream \(stream)")
            }
            return state.withLock { state in
                if method == "SUBSCRIBE" {
                    let added = params.filter { !state.streams.contains($0) }
                    guard state.streams.count + Set(added).count <= Binance.maxStreams else {
                        return error(
                            2, "Invalid request: too many streams: a connection follows at most \(Binance.maxStreams)")
                    }
                    for stream in added where !state.streams.contains(stream) { state.streams.append(stream) }
                } else {
                    state.streams.removeAll { params.contains($0) }
                }
                return VenueReply(messages: [#"{"result":null,"id":\#(id)}"#], subscribed: !state.streams.isEmpty)
            }
        case "LIST_SUBSCRIPTIONS":
            let list = state.withLock { $0.streams }.map(VenueText.quote).joined(separator: ",")
            return VenueReply(messages: [#"{"result":[\#(list)],"id":\#(id)}"#])
        default:
            return error(
                2,
                "Invalid request: unknown variant `\(method)`, expected one of `SUBSCRIBE`, `UNSUBSCRIBE`, `LIST_SUBSCRIPTIONS`, `SET_PROPERTY`, `GET_PROPERTY`"
            )
        }
    }

    func render(_ update: BoardUpdate) -> [String] {
        let update = context.update(update, for: .binance)
        let followed = state.withLock { $0.byBoard }
        guard !followed.isEmpty else { return [] }
        var out: [String] = []
        for (board, entry) in update.entries {
            for (stream, market, mini) in followed[board] ?? [] {
                let event =
                    mini
                    ? Binance.miniTickerEvent(market, entry, time: update.time)
                    : Binance.tickerEvent(market, entry, time: update.time)
                out.append(combined ? #"{"stream":\#(VenueText.quote(stream)),"data":\#(event)}"# : event)
            }
        }
        return out
    }

    func tick(age: Duration, now: Int64) -> [VenueAction] {
        state.withLock { state in
            var actions: [VenueAction] = []
            if state.rate.exceeded { return [state.rate.close] }
            if age >= keepAlive.binanceLifetime {
                return [.close(code: 1001, reason: "connection lifetime reached")]
            }
            if let oldest = state.pings.first, age - oldest.sent >= keepAlive.binancePongWithin {
                return [.close(code: 1008, reason: "no pong within \(keepAlive.binancePongWithin) of a ping")]
            }
            if let notice = keepAlive.binanceShutdownNotice, !state.noticeSent,
                age >= keepAlive.binanceLifetime - notice
            {
                state.noticeSent = true
                actions.append(.send(#"{"e":"serverShutdown","E":\#(now)}"#))
            }
            if age - state.lastPing >= keepAlive.binancePingEvery {
                state.lastPing = age
                let payload = Array("\(now)".utf8)
                state.pings.append((payload, age))
                actions.append(.ping(payload))
            }
            return actions
        }
    }

    /// A pong answers the ping with the same payload and every earlier one; an unsolicited
    /// pong (another payload) answers nothing, as Binance documents.
    func pong(_ payload: [UInt8], age: Duration) {
        state.withLock { state in
            // Counted; a pong over the limit closes the connection at the next keep-alive tick.
            _ = state.rate.admit(at: age)
            if let i = state.pings.firstIndex(where: { $0.payload == payload }) {
                state.pings.removeFirst(i + 1)
            }
        }
    }

    func shutdownNotice(now: Int64) -> [String] {
        [#"{"e":"serverShutdown","E":\#(now)}"#]
    }
}
