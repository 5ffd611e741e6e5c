import AlertTestSupport
import DemoExchange
import Foundation
import Testing

@Suite("Bybit look-alike")
struct BybitLookalikeTests {
    @Test("instruments, tickers and klines have the documented shapes; more than 1000 klines are refused")
    func rest() async throws {
        try await withExchange(walk()) { _, port in
            let instruments = try await get(port, "/v5/market/instruments-info?category=spot")
            let json = try JSONSerialization.jsonObject(with: instruments.body)
            try expectShape(of: "bybit_instruments_spot.json", json)
            let kline = try await get(port, "/bybit/v5/market/kline?category=spot&symbol=BTCUSDT&interval=1&limit=1000")
            let rows = try #require(try JSONSerialization.jsonObject(with: kline.body) as? [String: Any])
            try expectShape(of: "bybit_kline.json", rows)
            #expect(((rows["result"] as? [String: Any])?["list"] as? [Any])?.count == 1000)
            let over = try await get(port, "/v5/market/kline?category=spot&symbol=BTCUSDT&interval=1&limit=1001")
            #expect((try JSONSerialization.jsonObject(with: over.body) as? [String: Any])?["retCode"] as? Int == 10001)
            let tickers = try await get(port, "/v5/market/tickers?category=spot&symbol=ETHUSDT")
            let list = try #require(
                ((try JSONSerialization.jsonObject(with: tickers.body) as? [String: Any])?["result"] as? [String: Any])?[
                    "list"] as? [[String: Any]])
            #expect(list.first?["symbol"] as? String == "ETHUSDT")
        }
    }

    @Test("subscribe is acknowledged and ticker snapshots follow; more than 10 args and unknown symbols refused")
    func ticks() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/v5/public/spot") { socket in
                let eleven = (0..<11).map { #""tickers.X\#($0)USDT""# }.joined(separator: ",")
                try await socket.send(#"{"req_id":"a","op":"subscribe","args":[\#(eleven)]}"#)
                let tooMany = try object(try await socket.nextText())
                #expect(tooMany["success"] as? Bool == false)
                try await socket.send(#"{"req_id":"b","op":"subscribe","args":["tickers.NOPEUSDT"]}"#)
                let unknown = try object(try await socket.nextText())
                #expect(unknown["success"] as? Bool == false)
                #expect(unknown["req_id"] as? String == "b")
                try await socket.send(#"{"req_id":"c","op":"subscribe","args":["tickers.BTCUSDT"]}"#)
                let ack = try object(try await socket.nextText())
                #expect(ack["success"] as? Bool == true)
                #expect(ack["op"] as? String == "subscribe")
                for _ in 0..<2 {
                    let push = try parse(try text(try await socket.nextText()))
                    try expectShape(of: "bybit_v5_spot_ticker.json", push)
                }
            }
        }
    }

    @Test("a connection that sends no ping is closed after bybitPingWithin; one that pings every 20 s stays")
    func keepAlive() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/v5/public/spot") { pinging in
                try await RawWebSocket.connect(port: port, path: "/v5/public/spot") { silent in
                    for k in 1...2 {
                        try await advance(clock, to: .seconds(20 * k), sleepers: 3)
                        try await pinging.send(#"{"req_id":"\#(k)","op":"ping"}"#)
                        let pong = try object(try await pinging.nextText())
                        #expect(pong["ret_msg"] as? String == "pong")
                    }
                    try await advance(clock, to: .seconds(59), sleepers: 3)
                    try await advance(clock, to: .seconds(60), sleepers: 3)
                    guard case .close = try await silent.next() else {
                        Issue.record("expected the silent connection to be closed")
                        return
                    }
                    #expect(clock.now.offset == .seconds(60))
                    // The pinging connection's timer still runs: it and the fault timer sleep.
                    try await advance(clock, to: .seconds(61), sleepers: 2)
                }
            }
        }
    }
}

@Suite("OKX look-alike")
struct OKXLookalikeTests {
    @Test("instruments and candles have the documented shapes; page sizes are enforced")
    func rest() async throws {
        try await withExchange(walk()) { _, port in
            let instruments = try await get(port, "/api/v5/public/instruments?instType=SPOT")
            let json = try JSONSerialization.jsonObject(with: instruments.body)
            try expectShape(of: "okx_instruments_spot.json", json)
            let candles = try await get(port, "/okx/api/v5/market/candles?instId=BTC-USDT&bar=1m&limit=300")
            let body = try #require(try JSONSerialization.jsonObject(with: candles.body) as? [String: Any])
            try expectShape(of: "okx_candles.json", body)
            #expect((body["data"] as? [Any])?.count == 300)
            for (path, limit) in [("candles", 301), ("history-candles", 101)] {
                let over = try await get(port, "/api/v5/market/\(path)?instId=BTC-USDT&bar=1m&limit=\(limit)")
                #expect(
                    (try JSONSerialization.jsonObject(with: over.body) as? [String: Any])?["code"] as? String == "51000"
                )
            }
            let history = try await get(port, "/api/v5/market/history-candles?instId=BTC-USDT&bar=1m&limit=100")
            #expect(
                ((try JSONSerialization.jsonObject(with: history.body) as? [String: Any])?["data"] as? [Any])?.count
                    == 100)
        }
    }

    @Test("subscribe is acknowledged per argument, tickers pushes follow; unknown instruments are refused")
    func ticks() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws/v5/public") { socket in
                try await socket.send(
                    #"{"id":"1512","op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"},{"channel":"tickers","instId":"BTC-NOPE"}]}"#
                )
                let ack = try object(try await socket.nextText())
                #expect(ack["event"] as? String == "subscribe")
                #expect(ack["id"] as? String == "1512")
                let first = try parse(try text(try await socket.nextText()))
                try expectShape(of: "okx_v5_tickers_docs_example.json", first)
                let error = try object(try await socket.nextText())
                #expect(error["event"] as? String == "error")
                #expect(error["code"] as? String == "60018")
                try await socket.send("ping")
                #expect(try await socket.nextText(where: { !$0.hasPrefix("{") }) == "pong")
            }
        }
    }

    @Test("a connection from which nothing arrives for 30 s is closed; one that sends ping stays")
    func keepAlive() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws/v5/public") { pinging in
                try await RawWebSocket.connect(port: port, path: "/ws/v5/public") { silent in
                    try await advance(clock, to: .seconds(20), sleepers: 3)
                    try await pinging.send("ping")
                    #expect(try await pinging.nextText() == "pong")
                    try await advance(clock, to: .seconds(29), sleepers: 3)
                    try await advance(clock, to: .seconds(30), sleepers: 3)
                    guard case .close = try await silent.next() else {
                        Issue.record("expected the silent connection to be closed")
                        return
                    }
                    #expect(clock.now.offset == .seconds(30))
                    try await advance(clock, to: .seconds(49), sleepers: 2)
                }
            }
        }
    }
}

@Suite("look-alike drops")
struct VenueDropTests {
    @Test("a drop closes every look-alike connection with a close frame, or resets it", arguments: DropMode.allCases)
    func drop(mode: DropMode) async throws {
        var configuration = walk()
        configuration.faults.dropMode = mode
        try await withExchange(configuration) { server, port in
            try await RawWebSocket.connect(port: port, path: "/ws/v5/public") { socket in
                try await socket.send(#"{"op":"subscribe","args":[{"channel":"tickers","instId":"ETH-USDT"}]}"#)
                _ = try await socket.nextText()
                _ = try await socket.nextText()
                server.dropAllConnections()
                var event = try await socket.next()
                while case .text = event { event = try await socket.next() }
                switch mode {
                case .close: #expect(event == .close(code: 1001, reason: "closed by the demo exchange"))
                case .reset: #expect(event == .ended(reset: true))
                }
                #expect(server.stats.connectionsDropped == 1)
            }
        }
    }
}

@Suite("look-alike wick")
struct VenueWickTests {
    @Test("a wick moves one market on one look-alike only, in its REST tickers and its websocket")
    func wick() async throws {
        var configuration = ExchangeConfiguration(port: 0, prices: .replay(ticks: [], speed: 0))
        configuration.faults.wick = Wick(venue: .binance, market: "BTC", factor: 1.1)
        try await withExchange(configuration) { server, port in
            let binance = try await get(port, "/api/v3/ticker/24hr?symbol=BTCUSDT")
            let coinbase = try await get(port, "/api/v3/brokerage/market/products/BTC-USD")
            let wicked = try #require(
                Double(
                    (try JSONSerialization.jsonObject(with: binance.body) as? [String: Any])?["lastPrice"] as? String
                        ?? ""))
            let honest = try #require(
                Double(
                    (try JSONSerialization.jsonObject(with: coinbase.body) as? [String: Any])?["price"] as? String ?? ""
                ))
            #expect(abs(wicked - honest * 1.1) < 1e-6 * honest)
            try await RawWebSocket.connect(port: port, path: "/ws/btcusdt@ticker", answerPings: true) { binance in
                try await RawWebSocket.connect(port: port, path: "/v2") { kraken in
                    _ = try await kraken.nextText()
                    try await kraken.send(#"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"]}}"#)
                    _ = try await kraken.nextText() // the ack
                    _ = try await kraken.nextText() // the snapshot
                    while server.stats.subscriptions < 2 { try await Task.sleep(for: .milliseconds(5)) }
                    server.send(prices: [("BTC", 50_000)])
                    let event = try object(try await binance.nextText())
                    #expect(event["c"] as? String == "55000")
                    let update = try object(try await kraken.nextText(where: { $0.contains(#""type":"update""#) }))
                    let data = try #require((update["data"] as? [[String: Any]])?.first)
                    #expect(data["last"] as? Double == 50_000)
                }
            }
        }
    }
}
