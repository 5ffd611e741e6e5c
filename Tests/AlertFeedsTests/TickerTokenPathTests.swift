import AlertModel
import DemoExchange
import Foundation
import SeededRandom
import Testing

@testable import AlertFeeds

/// The ticker frame parsers of the five v3 exchanges read their hot ticker message from the
/// tokens and every other frame through the `FeedJSON` tree (`FrameReading`). These tests hold
/// the two readings to the same result, field for field, on the exchanges' documented frames
/// (`Tests/Fixtures/exchanges`), on the look-alikes' own rendered frames (`VenueFrames`) and on
/// seeded random mutations of both: members shuffled, added (known keys given twice, unknown
/// nested objects), removed, given other types or numbers as strings and strings as numbers,
/// strings with escapes, and frames cut short.
@Suite struct TickerTokenPathTests {
    /// One exchange's parser in both readings, and whether the token reader took a frame.
    struct Parser: Sendable, CustomStringConvertible {
        let venue: Venue
        let fixtures: [String]
        let answers: [String]

        var description: String { venue.rawValue }

        /// The frame (and Coinbase's `sequence_num`) as `reading` reads it.
        func read(_ frame: [UInt8], _ reading: FrameReading) -> Outcome {
            switch venue {
            case .binance: Outcome(frame: BinanceTicker.parse(frame, reading: reading), sequence: nil)
            case .coinbase:
                Outcome(
                    frame: CoinbaseTicker.read(frame, reading: reading).frame,
                    sequence: CoinbaseTicker.read(frame, reading: reading).sequence)
            case .kraken: Outcome(frame: KrakenTicker.parse(frame, reading: reading), sequence: nil)
            case .bybit: Outcome(frame: BybitTicker.parse(frame, reading: reading), sequence: nil)
            case .okx: Outcome(frame: OKXTicker.parse(frame, reading: reading), sequence: nil)
            }
        }

        func tokensTake(_ frame: [UInt8]) -> Bool {
            switch venue {
            case .binance: BinanceTicker.tokenParse(frame) != nil
            case .coinbase: CoinbaseTicker.tokenRead(frame) != nil
            case .kraken: KrakenTicker.tokenParse(frame) != nil
            case .bybit: BybitTicker.tokenParse(frame) != nil
            case .okx: OKXTicker.tokenParse(frame) != nil
            }
        }
    }

    struct Outcome: Equatable {
        var frame: ExchangeFrame
        var sequence: Int64?
    }

    static let parsers = [
        Parser(
            venue: .binance,
            fixtures: ["binance_24hrTicker.jsonc", "binance_miniTicker.jsonc", "binance_subscribe.json"],
            answers: [
                #"{"result":null,"id":1}"#, #"{"code":2,"msg":"Invalid request","id":1}"#,
                #"{"error":{"code":-1,"msg":"x"},"id":2}"#, #"{"e":"serverShutdown","E":1}"#,
                #"{"stream":"bnbbtc@ticker","data":{"e":"24hrTicker","E":1,"s":"BNBBTC","c":"1","P":"x","q":null}}"#,
                #"[{"e":"24hrTicker","E":1,"s":"A","c":"1"},{"e":"24hrTicker","E":2,"s":"B"}]"#
            ]),
        Parser(
            venue: .coinbase,
            fixtures: [
                "coinbase_advanced_trade_ticker.json", "coinbase_advanced_trade_heartbeats.json",
                "coinbase_advanced_trade_subscribe.json", "coinbase_exchange_legacy_ticker.jsonc"
            ],
            answers: [
                #"{"channel":"subscriptions","sequence_num":1,"events":[{"subscriptions":{"ticker":["BTC-USD"]}}]}"#,
                #"{"type":"error","message":"failure to subscribe"}"#
            ]),
        Parser(
            venue: .kraken,
            fixtures: [
                "kraken_v2_ticker_snapshot.json", "kraken_v2_heartbeat.json", "kraken_v2_ping.json",
                "kraken_v2_subscribe.json"
            ],
            answers: [
                #"{"method":"pong","req_id":101}"#,
                #"{"method":"subscribe","result":{"channel":"ticker","symbol":"XBT/USD"},"success":true}"#,
                #"{"method":"subscribe","error":"Currency pair not supported","success":false}"#,
                #"{"channel":"status","data":[]}"#
            ]),
        Parser(
            venue: .bybit,
            fixtures: [
                "bybit_v5_spot_ticker.json", "bybit_v5_linear_ticker.json", "bybit_v5_ping.json",
                "bybit_v5_subscribe.json"
            ],
            answers: [
                #"{"success":true,"ret_msg":"pong","conn_id":"x","req_id":"","op":"ping"}"#,
                #"{"success":false,"ret_msg":"error:handler not found","op":"subscribe"}"#,
                #"{"topic":"tickers.A","type":"delta","ts":1,"data":{"symbol":"A","lastPrice":"1"}}"#
            ]),
        Parser(
            venue: .okx,
            fixtures: [
                "okx_v5_tickers_captured_spot.json", "okx_v5_tickers_captured_swap.json",
                "okx_v5_tickers_docs_example.json", "okx_v5_subscribe.json"
            ],
            answers: [
                "pong", #"{"event":"subscribe","arg":{"channel":"tickers","instId":"BTC-USDT"}}"#,
                #"{"event":"error","code":"60012","msg":"Invalid request"}"#, #"{"event":"notice","msg":"x"}"#
            ])
    ]

    /// The fixture files' frames and the exchange's answers no fixture has (acks, errors,
    /// pongs, notices), as its documentation gives them.
    static func documented(_ parser: Parser) throws -> [[UInt8]] {
        try parser.fixtures.map(exchangeFixture) + parser.answers.map { Array($0.utf8) }
    }

    /// The look-alike's ticker messages for 40 markets over 3 steps, as sent to a client.
    static func venueFrames(_ venue: Venue) -> [[UInt8]] {
        VenueFrames.render(venue, marketsPerVenue: 40, seed: 11, steps: 3, time: 1_700_000_000_000).map {
            Array($0.utf8)
        }
    }

    @Test(arguments: parsers)
    func documentedAndLookalikeTickerFramesAreReadFromTheTokensAlike(parser: Parser) throws {
        let tickerFixture = try #require(parser.fixtures.first)
        for frame in try Self.documented(parser) {
            #expect(
                parser.read(frame, .tokens) == parser.read(frame, .tree), "\(String(decoding: frame, as: UTF8.self))")
        }
        // The documented ticker message is the hot shape and gives ticks.
        let ticker = try exchangeFixture(tickerFixture)
        #expect(parser.tokensTake(ticker))
        #expect(exchangeTicks(parser.read(ticker, .tokens).frame) != nil)

        let rendered = Self.venueFrames(parser.venue)
        #expect(rendered.count >= 3)
        var ticks = 0
        for frame in rendered {
            let tokens = parser.read(frame, .tokens)
            #expect(tokens == parser.read(frame, .tree), "\(String(decoding: frame.prefix(300), as: UTF8.self))")
            #expect(parser.tokensTake(frame), "a look-alike ticker message left to the tree")
            ticks += exchangeTicks(tokens.frame)?.ticks.count ?? 0
        }
        #expect(ticks >= 40)
    }

    @Test(arguments: parsers)
    func seededMutationsReadAlikeFromTokensAndTree(parser: Parser) throws {
        let documented = try Self.documented(parser), lookalike = Array(Self.venueFrames(parser.venue).prefix(6))
        var random = SeededRandom(seed: 26_029 &+ UInt64(parser.venue.rawValue.utf8.count))
        var taken = 0, ticked = 0
        let rounds = 4_000
        for round in 0..<rounds {
            // Half the rounds start from a look-alike ticker message, the hot shape.
            let seed =
                round % 2 == 0 ? lookalike[round / 2 % lookalike.count] : documented[round / 2 % documented.count]
            var frame: [UInt8]
            if case .success(let json) = FeedJSON.parse(seed) {
                var mutated = json
                for _ in 0...Int(random.next() % 4) { mutated = Self.mutate(mutated, depth: 0, &random) }
                let escapes = random.next() % 4 == 0
                frame = Array(Self.render(mutated, escapes: escapes, &random).utf8)
            } else {
                frame = seed
            }
            if random.next() % 10 == 0 { frame = Array(frame.prefix(Int(random.next() % UInt64(frame.count + 1)))) }
            let tokens = parser.read(frame, .tokens)
            #expect(
                tokens == parser.read(frame, .tree),
                "round \(round): \(String(decoding: frame.prefix(2_000), as: UTF8.self))")
            if parser.tokensTake(frame) { taken += 1 }
            if exchangeTicks(tokens.frame) != nil { ticked += 1 }
        }
        // The mutations reach both readers: many frames stay the hot shape, many do not.
        #expect(taken > rounds / 10, "token reader took \(taken) of \(rounds)")
        #expect(taken < rounds * 9 / 10, "token reader took \(taken) of \(rounds)")
        #expect(ticked > rounds / 10)
    }

    // MARK: - Mutations

    /// Keys the five parsers look for (given twice or in the wrong place by the mutations), and
    /// one they do not.
    static let keys = [
        "e", "E", "s", "c", "P", "q", "stream", "data", "error", "code", "result", "id", "msg", "events", "channel",
        "timestamp", "sequence_num", "type", "tickers", "product_id", "price", "price_percent_chg_24_h", "volume_24_h",
        "method", "symbol", "last", "change_pct", "volume", "vwap", "topic", "ts", "op", "lastPrice", "price24hPcnt",
        "turnover24h", "arg", "event", "instId", "open24h", "volCcy24h", "instType", "success", "ret_msg",
        "subscriptions", "unknown"
    ]

    static let strings = [
        "24hrTicker", "serverShutdown", "ticker", "ticker_batch", "tickers", "tickers.BTCUSDT", "tickers.\u{301}X",
        "snapshot", "delta", "update", "SPOT", "SWAP", "error", "heartbeats", "pong", "subscribe", "BTC-USD",
        "BTCUSDT", "XBT/USD", "BTC/USD", "2023-02-09T20:30:37.123Z", "2023-09-25T09:04:31.742599Z", "1672515782136",
        "+5", "-3", "12x", "0012", "1234567890123456789", "1e3", "0.5", "-0.25", "6.3e-9", "1e999", "", "é",
        "a\u{0}b", "\u{85}sym", "\u{7F}", String(repeating: "A", count: 65), "tab\there", "quote\"back\\slash"
    ]

    static func randomValue(_ depth: Int, _ random: inout SeededRandom) -> FeedJSON {
        switch random.next() % 9 {
        case 0: return .string(strings[Int(random.next() % UInt64(strings.count))])
        case 1: return .number(Double(Int64(bitPattern: random.next()) % 100_000) / 100, integer: nil)
        case 2:
            return .number(
                Double(1_700_000_000_000 + Int64(random.next() % 1_000_000)),
                integer: 1_700_000_000_000 + Int64(random.next() % 1_000_000))
        case 3: return .bool(random.next() % 2 == 0)
        case 4: return .null
        case 5 where depth < 4:
            return .object(
                (0..<Int(random.next() % 4)).map { _ in
                    (keys[Int(random.next() % UInt64(keys.count))], randomValue(depth + 1, &random))
                })
        case 6 where depth < 4:
            return .array((0..<Int(random.next() % 3)).map { _ in randomValue(depth + 1, &random) })
        case 7: return .number(0, integer: 0)
        default: return .string(strings[Int(random.next() % UInt64(strings.count))])
        }
    }

    /// The value with one random change somewhere in it (or none).
    static func mutate(_ value: FeedJSON, depth: Int, _ random: inout SeededRandom) -> FeedJSON {
        switch value {
        case .object(var members):
            switch random.next() % 8 {
            case 0: members.shuffle(using: &random)
            case 1:
                let key =
                    random.next() % 2 == 0 && !members.isEmpty
                    ? members[Int(random.next() % UInt64(members.count))].key
                    : keys[Int(random.next() % UInt64(keys.count))]
                members.insert(
                    (key, randomValue(depth + 1, &random)), at: Int(random.next() % UInt64(members.count + 1)))
            case 2 where !members.isEmpty: members.remove(at: Int(random.next() % UInt64(members.count)))
            case 3 where !members.isEmpty:
                let i = Int(random.next() % UInt64(members.count))
                members[i].value = retyped(members[i].value, depth + 1, &random)
            default:
                guard !members.isEmpty else { break }
                let i = Int(random.next() % UInt64(members.count))
                members[i].value = mutate(members[i].value, depth: depth + 1, &random)
            }
            return .object(members)
        case .array(var elements):
            guard !elements.isEmpty else {
                return random.next() % 2 == 0 ? .array([randomValue(depth + 1, &random)]) : value
            }
            let i = Int(random.next() % UInt64(elements.count))
            switch random.next() % 6 {
            case 0: elements.shuffle(using: &random)
            case 1: elements.insert(randomValue(depth + 1, &random), at: i)
            case 2: elements.remove(at: i)
            default: elements[i] = mutate(elements[i], depth: depth + 1, &random)
            }
            return .array(elements)
        default:
            return random.next() % 3 == 0 ? retyped(value, depth, &random) : value
        }
    }

    /// The same figure in another spelling (a number as a string, a string as a number), or a
    /// value of another type.
    static func retyped(_ value: FeedJSON, _ depth: Int, _ random: inout SeededRandom) -> FeedJSON {
        switch (value, random.next() % 3) {
        case (.number(let d, let i), 0): return .string(i.map(String.init) ?? "\(d)")
        case (.string(let s), 0):
            if let i = Int64(s) { return .number(Double(i), integer: i) }
            if let d = Double(s), d.isFinite { return .number(d, integer: nil) }
            return randomValue(depth, &random)
        default: return randomValue(depth, &random)
        }
    }

    // MARK: - Rendering

    /// JSON text of `value`: random whitespace between tokens and, with `escapes`, one string
    /// in six with a random share of its characters written as `\u` escapes (or `\/`).
    static func render(_ value: FeedJSON, escapes: Bool, _ random: inout SeededRandom) -> String {
        let space = random.next() % 8 == 0 ? " " : ""
        switch value {
        case .object(let members):
            return "{" + space
                + members.map {
                    quote($0.key, escapes: escapes, &random) + ":" + space + render($0.value, escapes: escapes, &random)
                }.joined(separator: ",")
                + "}"
        case .array(let elements):
            return "[" + elements.map { render($0, escapes: escapes, &random) }.joined(separator: "," + space) + "]"
        case .string(let s): return quote(s, escapes: escapes, &random)
        case .number(let d, let i): return i.map(String.init) ?? (d.isFinite ? "\(d)" : "0")
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    /// A JSON string literal of `text`; with `escapes`, one time in six each character may be
    /// escaped.
    static func quote(_ text: String, escapes: Bool, _ random: inout SeededRandom) -> String {
        guard escapes, random.next() % 6 == 0 else { return jsonString(text) }
        var out = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" || scalar.value < 0x20 || random.next() % 3 == 0 {
                if scalar == "/" {
                    out += "\\/"
                } else if scalar.value > 0xFFFF {
                    out += jsonString(String(scalar)).dropFirst().dropLast()
                } else {
                    out += String(format: "\\u%04x", scalar.value)
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

@Suite struct LiveSymbolMappingTests {
    /// The live handler maps `BTC-USD` to `BTC/USD` byte by byte for ASCII symbols: the same as
    /// the character-by-character mapping, which non-ASCII symbols keep (a combining mark after
    /// `-` makes one character that is not `-`).
    @Test func dashAsSlashByBytesIsTheCharacterMapping() {
        for symbol in ["BTC-USD", "BTCUSD", "-", "A--B-", "", "ÉTH-USD", "BTC-\u{301}USD", "X\r\n-Y"] {
            #expect(
                ExchangeMarkets.dashAsSlash(symbol) == String(symbol.map { $0 == "-" ? "/" : $0 }), "\(symbol)")
        }
        let list = ExchangeMarkets([
            ExchangeMarket(exchangeSymbol: "BTCUSDT", base: "BTC", quote: "USDT", active: true),
            ExchangeMarket(exchangeSymbol: "BTCUSDT", base: "XBT", quote: "USDT", active: true)
        ])
        #expect(list.common("BTCUSDT", mapping: .marketList) == "BTC/USDT")
        #expect(list.common("ETHUSDT", mapping: .marketList) == nil)
        #expect(list.common("ETH-USDT", mapping: .dash) == "ETH/USDT")
    }
}
