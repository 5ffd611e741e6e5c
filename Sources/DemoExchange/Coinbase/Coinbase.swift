import Foundation
import Platform
import Synchronization

/// The Coinbase Advanced Trade look-alike, written from Coinbase's Advanced Trade documentation
/// (docs.cdp.coinbase.com: "List Public Products", "Get Public Product Candles", "WebSocket
/// Overview", "WebSocket Channels"): the public products (price and 24-hour figures included)
/// and candles (at most 350 per request) over REST, and the websocket at `/` with the `ticker`
/// and `heartbeats` channels, one channel per subscribe message, `sequence_num` on every
/// message, the rule that a connection that sends no subscribe within 5 s is closed, and at most
/// 8 messages a second ("WebSocket Rate Limits").
enum Coinbase {
    static let maxCandles = 350
    static let maxMessagesPerSecond = 8
    static let granularities: [String: Int64] = [
        "ONE_MINUTE": 1, "FIVE_MINUTE": 5, "FIFTEEN_MINUTE": 15, "THIRTY_MINUTE": 30, "ONE_HOUR": 60,
        "TWO_HOUR": 120, "SIX_HOUR": 360, "ONE_DAY": 1440
    ]

    static func error(_ status: Int, _ code: String, _ message: String) -> VenueResponse {
        let m = VenueText.quote(message)
        return VenueResponse(status: status, body: #"{"error":"\#(code)","error_details":\#(m),"message":\#(m)}"#)
    }

    static func routes(_ context: VenueContext) -> [VenueRoute] {
        let markets = context.markets.all(.coinbase)
        let index = context.markets.index(.coinbase)
        return [
            VenueRoute(path: "/api/v3/brokerage/market/products") { query, _ in
                var chosen = markets
                if let ids = query["product_ids"] {
                    let wanted = Set(ids.split(separator: ",").map(String.init))
                    chosen = markets.filter { wanted.contains($0.symbol) }
                }
                if let type = query["product_type"], type != "SPOT" { chosen = [] }
                let board = context.board(.coinbase)
                let rows = chosen.compactMap { m in board.entries[m.board].map { product(m, $0) } }
                return .ok(#"{"products":[\#(rows.joined(separator: ","))],"num_products":\#(rows.count)}"#)
            },
            VenueRoute(path: "/api/v3/brokerage/market/products/{product_id}") { _, parameters in
                guard let market = parameters["product_id"].flatMap({ index[$0] }),
                    let entry = context.board(.coinbase).entries[market.board]
                else { return notFound(parameters["product_id"] ?? "") }
                return .ok(product(market, entry))
            },
            VenueRoute(path: "/api/v3/brokerage/market/products/{product_id}/candles") { query, parameters in
                guard let market = parameters["product_id"].flatMap({ index[$0] }) else {
                    return notFound(parameters["product_id"] ?? "")
                }
                guard let name = query["granularity"], let minutes = granularities[name] else {
                    return error(400, "INVALID_ARGUMENT", "granularity is not one of \(granularities.keys.sorted())")
                }
                guard let start = query["start"].flatMap({ Int64($0) }), let end = query["end"].flatMap({ Int64($0) }),
                    start < end
                else { return error(400, "INVALID_ARGUMENT", "start and end (UNIX seconds, start < end) are required") }
                let requested = (end - start) / (minutes * 60)
                let limit = query["limit"].flatMap { Int($0) } ?? maxCandles
                guard requested <= maxCandles, (1...maxCandles).contains(limit) else {
                    return error(
                        400, "INVALID_ARGUMENT", "number of candles requested should be less than \(maxCandles + 1)")
                }
                let candles = context.candles(
                    board: market.board, minutes: minutes, start: start * 1000, end: end * 1000 - 1, limit: limit,
                    newestFirst: true)
                let rows = candles.map { c in
                    let n = VenueText.string
                    return
                        #"{"start":"\#(c.time / 1000)","low":\#(n(c.low)),"high":\#(n(c.high)),"open":\#(n(c.open)),"close":\#(n(c.close)),"volume":\#(n(c.volume))}"#
                }
                return .ok(#"{"candles":[\#(rows.joined(separator: ","))]}"#)
            }
        ]
    }

    static func notFound(_ id: String) -> VenueResponse {
        error(404, "NOT_FOUND", "ProductID \(id) not found")
    }

    /// One entry of `products`, in the documented field order.
    static func product(_ m: VenueMarket, _ e: MarketBoard.Entry) -> String {
        let n = VenueText.string, q = VenueText.quote
        return """
            {"product_id":\(q(m.symbol)),"price":\(n(e.last)),"price_percentage_change_24h":\(n(e.percentageChange)),\
            "volume_24h":\(n(e.volume)),"volume_percentage_change_24h":"0","base_increment":"0.00000001",\
            "quote_increment":"0.01","quote_min_size":"1","quote_max_size":"10000000","base_min_size":"0.00000001",\
            "base_max_size":"1000000","base_name":\(q(m.base)),"quote_name":"US Dollar","watched":false,\
            "is_disabled":false,"new":false,"status":"online","cancel_only":false,"limit_only":false,\
            "post_only":false,"trading_disabled":false,"auction_mode":false,"product_type":"SPOT",\
            "quote_currency_id":\(q(m.quote)),"base_currency_id":\(q(m.base)),"mid_market_price":\(n(e.last)),\
            "base_display_symbol":\(q(m.base)),"quote_display_symbol":\(q(m.quote))}
            """
    }

    /// One entry of a `ticker` event.
    static func ticker(_ m: VenueMarket, _ e: MarketBoard.Entry) -> String {
        let n = VenueText.string
        return """
            {"type":"ticker","product_id":\(VenueText.quote(m.symbol)),"price":\(n(e.last)),\
            "volume_24_h":\(n(e.volume)),"low_24_h":\(n(e.low)),"high_24_h":\(n(e.high)),"low_52_w":\(n(e.low)),\
            "high_52_w":\(n(e.high)),"price_percent_chg_24_h":\(n(e.percentageChange)),"best_bid":\(n(e.last)),\
            "best_bid_quantity":"1","best_ask":\(n(e.last)),"best_ask_quantity":"1"}
            """
    }

    static func socketRoutes(_ context: VenueContext) -> [VenueSocketRoute] {
        let index = context.markets.index(.coinbase)
        return [
            VenueSocketRoute(path: "/") { _, _ in
                CoinbaseConnection(index: index, context: context)
            }
        ]
    }
}

/// One Coinbase Advanced Trade websocket connection.
final class CoinbaseConnection: VenueConnection {
    private struct State {
        var products: [String] = []
        var heartbeats = false
        var subscribedOnce = false
        var sequence: Int64 = 0
        var heartbeatCounter: Int64 = 0
        var messagesSinceGap = 0
        /// Coinbase takes 8 unauthenticated messages a second from an IP address; on loopback
        /// every client has the same address, so the look-alike counts per connection.
        var rate = MessageRate(limit: Coinbase.maxMessagesPerSecond)
    }

    private let index: [String: VenueMarket]
    private let byBoard: [String: VenueMarket]
    private let context: VenueContext
    private let state = Mutex(State())

    init(index: [String: VenueMarket], context: VenueContext) {
        self.index = index
        byBoard = VenueMarket.byBoard(index)
        self.context = context
    }

    func opened(now: Int64) -> [String] { [] }

    /// Where `stamped` puts the next `sequence_num` of a message.
    private static let sequenceMark = "\u{1}SEQUENCE\u{1}"

    /// The envelope every channel message has; its `sequence_num` is given as it is written
    /// (`stamped`), so replies to subscribes and streamed tickers are numbered in the order the
    /// client reads them.
    private func message(_ channel: String, events: String, now: Int64, _ state: inout State) -> String {
        #"{"channel":"\#(channel)","client_id":"","timestamp":"\#(VenueText.rfc3339(now))","sequence_num":\#(Self.sequenceMark),"events":[\#(events)]}"#
    }

    /// The next `sequence_num` in a message about to be written (skipping one after every
    /// `coinbaseSequenceGapEvery` messages when that fault is on).
    func stamped(_ text: String) -> String {
        guard text.contains(Self.sequenceMark) else { return text }
        let gapEvery = context.faults.current.coinbaseSequenceGapEvery
        let sequence = state.withLock { state in
            if gapEvery > 0, state.messagesSinceGap >= gapEvery {
                state.sequence += 1
                state.messagesSinceGap = 0
            }
            defer {
                state.sequence += 1
                state.messagesSinceGap += 1
            }
            return state.sequence
        }
        return text.replacingOccurrences(of: Self.sequenceMark, with: String(sequence))
    }

    private static func error(_ message: String) -> VenueReply {
        VenueReply(messages: [#"{"type":"error","message":\#(VenueText.quote(message))}"#])
    }

    func received(_ text: String, age: Duration, now: Int64) -> VenueReply {
        let rate = state.withLock { state in state.rate.admit(at: age) ? nil : state.rate.close }
        if let rate { return VenueReply(close: rate) }
        guard let object = jsonObject(text), let type = object["type"] as? String else {
            return Self.error("failed to parse the message: expected a JSON object with type")
        }
        guard type == "subscribe" || type == "unsubscribe" else {
            return Self.error("unknown message type \(type)")
        }
        if object["channels"] != nil {
            return Self.error("one channel per message: use \"channel\", not \"channels\"")
        }
        guard let channel = object["channel"] as? String else { return Self.error("channel is required") }
        let ids = object["product_ids"] as? [String] ?? []
        switch channel {
        case "heartbeats":
            break
        case "ticker":
            guard !ids.isEmpty else { return Self.error("product_ids are required for the ticker channel") }
            if let unknown = ids.first(where: { index[$0] == nil }) {
                return Self.error("Failed to subscribe: \(unknown) is not a valid product")
            }
        default:
            return Self.error("Failed to subscribe: unknown channel \(channel)")
        }
        let board = channel == "ticker" && type == "subscribe" ? context.board(.coinbase) : nil
        return state.withLock { state in
            state.subscribedOnce = true
            var snapshot: [String] = []
            if channel == "heartbeats" {
                state.heartbeats = type == "subscribe"
            } else if type == "subscribe" {
                for id in ids where !state.products.contains(id) {
                    state.products.append(id)
                    if let m = index[id], let e = board?.entries[m.board] { snapshot.append(Coinbase.ticker(m, e)) }
                }
            } else {
                state.products.removeAll(where: ids.contains)
            }
            let tickers = state.products.map(VenueText.quote).joined(separator: ",")
            let beats = state.heartbeats ? #""heartbeats":["heartbeats"]"# : ""
            let ticker = state.products.isEmpty ? "" : #""ticker":[\#(tickers)]"#
            let list = [ticker, beats].filter { !$0.isEmpty }.joined(separator: ",")
            var messages = [message("subscriptions", events: #"{"subscriptions":{\#(list)}}"#, now: now, &state)]
            if !snapshot.isEmpty {
                messages.append(
                    message(
                        "ticker", events: #"{"type":"snapshot","tickers":[\#(snapshot.joined(separator: ","))]}"#,
                        now: now, &state))
            }
            return VenueReply(messages: messages, subscribed: !state.products.isEmpty)
        }
    }

    func render(_ update: BoardUpdate) -> [String] {
        let update = context.update(update, for: .coinbase)
        return state.withLock { state in
            guard !state.products.isEmpty else { return [] }
            let followed = Set(state.products)
            let tickers = update.entries.compactMap { board, entry -> String? in
                guard let m = byBoard[board], followed.contains(m.symbol) else { return nil }
                return Coinbase.ticker(m, entry)
            }
            guard !tickers.isEmpty else { return [] }
            return [
                message(
                    "ticker", events: #"{"type":"update","tickers":[\#(tickers.joined(separator: ","))]}"#,
                    now: update.time, &state)
            ]
        }
    }

    func tick(age: Duration, now: Int64) -> [VenueAction] {
        state.withLock { state in
            if !state.subscribedOnce, age >= context.keepAlive.coinbaseSubscribeWithin {
                return [.close(code: 1008, reason: "no subscribe message within 5 seconds")]
            }
            guard state.heartbeats else { return [] }
            state.heartbeatCounter += 1
            let time = VenueText.rfc3339(now).replacingOccurrences(of: "T", with: " ").dropLast() + " +0000 UTC"
            let event = #"{"current_time":"\#(time)","heartbeat_counter":"\#(state.heartbeatCounter)"}"#
            return [.send(message("heartbeats", events: event, now: now, &state))]
        }
    }
}
