import AlertTestSupport
import DemoExchange
import Foundation
import Testing

@Suite("Coinbase look-alike")
struct CoinbaseLookalikeTests {
    @Test("products and candles have the documented shapes; more than 350 candles are refused")
    func rest() async throws {
        try await withExchange(walk()) { _, port in
            let products = try await get(port, "/coinbase/api/v3/brokerage/market/products")
            let json = try JSONSerialization.jsonObject(with: products.body)
            try expectShape(of: "coinbase_products.json", json)
            let now = Int64(Date().timeIntervalSince1970)
            let start = now - 3600
            let candles = try await get(
                port,
                "/api/v3/brokerage/market/products/BTC-USD/candles?start=\(start)&end=\(now)&granularity=ONE_MINUTE")
            #expect(candles.status == 200)
            let rows = try JSONSerialization.jsonObject(with: candles.body)
            try expectShape(of: "coinbase_candles.json", rows)
            let tooMany = try await get(
                port,
                "/api/v3/brokerage/market/products/BTC-USD/candles?start=\(now - 351 * 60)&end=\(now)&granularity=ONE_MINUTE"
            )
            #expect(tooMany.status == 400)
            let unknown = try await get(port, "/api/v3/brokerage/market/products/NOPE-USD")
            #expect(unknown.status == 404)
        }
    }

    @Test("subscribe is acknowledged with subscriptions, a ticker snapshot in the documented shape follows")
    func ticks() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/") { socket in
                try await socket.send(#"{"type":"subscribe","product_ids":["BTC-USD","NOPE-USD"],"channel":"ticker"}"#)
                let error = try object(try await socket.nextText())
                #expect(error["type"] as? String == "error")
                try await socket.send(#"{"type":"subscribe","product_ids":["BTC-USD"],"channel":"ticker"}"#)
                let ack = try object(try await socket.nextText())
                #expect(ack["channel"] as? String == "subscriptions")
                let snapshot = try parse(try text(try await socket.nextText()))
                try expectShape(of: "coinbase_advanced_trade_ticker.json", snapshot)
                let update = try object(try await socket.nextText())
                #expect(update["channel"] as? String == "ticker")
                #expect(
                    ((update["events"] as? [[String: Any]])?.first?["type"] as? String) == "update")
                #expect(update["sequence_num"] as? Int == 2)
            }
        }
    }

    @Test("a connection that sends no subscribe within 5 seconds is closed")
    func subscribeDeadline() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/") { socket in
                try await advance(clock, to: .seconds(4), sleepers: 2)
                try await advance(clock, to: .seconds(5), sleepers: 2)
                guard case .close(let code, _) = try await socket.next() else {
                    Issue.record("expected a close frame")
                    return
                }
                #expect(code == 1008)
                #expect(clock.now.offset == .seconds(5))
            }
        }
    }

    @Test("heartbeats come every second with increasing counters and sequence numbers; a gap can be injected")
    func heartbeats() async throws {
        for gapEvery in [0, 3] {
            let clock = ManualClock()
            var configuration = quietExchange(clock: clock)
            configuration.faults.coinbaseSequenceGapEvery = gapEvery
            try await withExchange(configuration) { _, port in
                try await RawWebSocket.connect(port: port, path: "/coinbase") { socket in
                    try await socket.send(#"{"type":"subscribe","channel":"heartbeats"}"#)
                    let ack = try object(try await socket.nextText())
                    var sequence = [ack["sequence_num"] as? Int ?? -1]
                    var counters: [String] = []
                    for second in 1...6 {
                        try await advance(clock, to: .seconds(second), sleepers: 2)
                        let beat = try object(try await socket.nextText())
                        try expectShape(of: "coinbase_advanced_trade_heartbeats.json", beat)
                        sequence.append(beat["sequence_num"] as? Int ?? -1)
                        counters.append(
                            (beat["events"] as? [[String: Any]])?.first?["heartbeat_counter"] as? String ?? "")
                    }
                    #expect(counters == ["1", "2", "3", "4", "5", "6"])
                    let steps = zip(sequence, sequence.dropFirst()).map { $1 - $0 }
                    #expect(steps == (gapEvery == 0 ? [1, 1, 1, 1, 1, 1] : [1, 1, 2, 1, 1, 2]))
                }
            }
        }
    }
}

@Suite("Kraken look-alike")
struct KrakenLookalikeTests {
    @Test("AssetPairs use Kraken's asset names; OHLC serves only the last 720 candles")
    func rest() async throws {
        try await withExchange(walk()) { _, port in
            let pairs = try await get(port, "/0/public/AssetPairs")
            let json = try #require(try JSONSerialization.jsonObject(with: pairs.body) as? [String: Any])
            try expectShape(of: "kraken_AssetPairs.json", json, maps: ["$.result"])
            let btc = try #require((json["result"] as? [String: Any])?["XXBTZUSD"] as? [String: Any])
            #expect(btc["altname"] as? String == "XBTUSD")
            #expect(btc["wsname"] as? String == "XBT/USD")
            #expect(btc["base"] as? String == "XXBT")
            #expect(btc["quote"] as? String == "ZUSD")
            let ohlc = try await get(port, "/kraken/0/public/OHLC?pair=XBTUSD&interval=1&since=0")
            let body = try #require(try JSONSerialization.jsonObject(with: ohlc.body) as? [String: Any])
            try expectShape(of: "kraken_OHLC.json", body)
            #expect(((body["result"] as? [String: Any])?["XXBTZUSD"] as? [Any])?.count == 720)
            let unknown = try await get(port, "/0/public/Ticker?pair=NOPEUSD")
            #expect(String(decoding: unknown.body, as: UTF8.self) == #"{"error":["EQuery:Unknown asset pair"]}"#)
        }
    }

    @Test("status on connect, an ack per symbol, a snapshot then updates; unknown pairs refused; ping answered")
    func ticks() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/v2") { socket in
                let status = try object(try await socket.nextText())
                #expect(status["channel"] as? String == "status")
                try await socket.send(#"{"method":"ping","req_id":101}"#)
                let pong = try object(try await socket.nextText())
                #expect(pong["method"] as? String == "pong")
                #expect(pong["req_id"] as? Int == 101)
                try await socket.send(
                    #"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD","XBT/NOPE"]},"req_id":5}"#)
                let ok = try object(try await socket.nextText())
                #expect(ok["success"] as? Bool == true)
                #expect((ok["result"] as? [String: Any])?["symbol"] as? String == "BTC/USD")
                let refused = try object(try await socket.nextText())
                #expect(refused["success"] as? Bool == false)
                #expect(refused["symbol"] as? String == "XBT/NOPE")
                let snapshot = try parse(try text(try await socket.nextText()))
                try expectShape(of: "kraken_v2_ticker_snapshot.json", snapshot)
                let update = try object(try await socket.nextText(where: { !$0.contains("heartbeat") }))
                #expect(update["type"] as? String == "update")
            }
        }
    }

    @Test("heartbeats come each second while nothing else is sent")
    func heartbeats() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/v2") { socket in
                _ = try await socket.nextText()
                try await socket.send(#"{"method":"subscribe","params":{"channel":"ticker","symbol":["ETH/USD"]}}"#)
                _ = try await socket.nextText() // the ack
                _ = try await socket.nextText() // the snapshot
                // The first tick follows the snapshot, so only the second and third send a heartbeat.
                try await advance(clock, to: .seconds(3), sleepers: 2)
                #expect(try await socket.nextText() == #"{"channel":"heartbeat"}"#)
                #expect(try await socket.nextText() == #"{"channel":"heartbeat"}"#)
            }
        }
    }
}

@Suite("Rendered venue frames")
struct VenueFramesTests {
    /// The frames `live-benchmark --sources 5` floods with are what a connection writes: every
    /// one is JSON, and Coinbase's carry `sequence_num` as numbers, one more each message.
    @Test func everyFrameIsJSONAndCoinbaseFramesAreNumbered() throws {
        for venue in Venue.allCases {
            let frames = VenueFrames.render(venue, marketsPerVenue: 20, seed: 7, steps: 3, time: 1_700_000_000_000)
            #expect(!frames.isEmpty, "\(venue)")
            for frame in frames {
                #expect(throws: Never.self, "\(venue): \(frame.prefix(120))") {
                    try JSONSerialization.jsonObject(with: Data(frame.utf8))
                }
            }
            guard venue == .coinbase else { continue }
            let numbers = try frames.map { frame in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])
                return try #require(object["sequence_num"] as? Int)
            }
            #expect(numbers == Array(numbers[0]..<(numbers[0] + numbers.count)))
        }
    }
}
