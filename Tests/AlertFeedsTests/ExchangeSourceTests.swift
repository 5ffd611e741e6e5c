import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import Logging
import Synchronization
import Testing

/// The five v3 exchange sources (`ExchangeSource`) through the real runner, libcurl and
/// websocket client, against a `ScriptedExchange` on 127.0.0.1 serving the documentation
/// fixtures, with the feed's timers on a `ManualClock`.
@Suite("exchange sources against a scripted exchange", .programs)
struct ExchangeSourceTests {
    /// A running feed of `profile` against a scripted exchange serving `rest`.
    final class Live: Sendable {
        let exchange: ScriptedExchange
        let runner: FeedRunner
        let clock = ManualClock()
        let recorder: LiveFeedTests.Recorder
        let task: Task<Void, Never>

        init(_ profile: ExchangeProfile, rest: [String: [UInt8]]) async throws {
            exchange = ScriptedExchange(rest: rest)
            let port = try await exchange.start()
            var options = FeedOptions(
                staleAfter: .seconds(3600), backoffBase: .milliseconds(100), backoffMaximum: .milliseconds(200))
            options.clock = clock
            runner = FeedRunner(
                source: ExchangeSource(profile, endpoint: "http://127.0.0.1:\(port)"), http: NIOHTTPClient(),
                options: options, logger: Logger(label: "test"))
            let recorder = LiveFeedTests.Recorder(clock: clock)
            self.recorder = recorder
            let runner = self.runner
            task = Task { await runner.runFeed { recorder.append($0) } }
        }

        func stop() async {
            task.cancel()
            _ = await task.value
            await exchange.stop()
        }

        /// Moves the clock by `duration` once something sleeps on it that this wakes (a deadline
        /// in `(now, now + duration]`), or once `ready` holds of the deadlines: the wait the code
        /// asked for passes at once.
        func advance(
            by duration: Duration, when ready: (([ManualClock.Instant], ManualClock.Instant) -> Bool)? = nil
        ) async throws {
            let now = clock.now
            let ready =
                ready ?? { deadlines, now in deadlines.contains { $0 > now && $0 <= now.advanced(by: duration) } }
            try await waitUntil("a sleeper for \(duration)") { ready(self.clock.deadlines, now) }
            clock.advance(by: duration)
        }

        /// Lets the reconnect backoff (at most 200 ms) pass on the clock until connection `n` is
        /// open. The backoff's jitter may pick no wait at all: then there is nothing to advance.
        func passBackoff(untilConnection n: Int) async throws -> ScriptedConnection {
            let now = clock.now
            try await waitUntil("a backoff sleeper or connection \(n)") {
                exchange.connectionCount >= n
                    || clock.deadlines.contains { $0 > now && $0 <= now.advanced(by: .milliseconds(200)) }
            }
            if exchange.connectionCount < n { clock.advance(by: .milliseconds(200)) }
            return try await exchange.connection(n)
        }

        /// `advance` once something sleeps until exactly `duration` from now.
        func advance(exactly duration: Duration) async throws {
            try await advance(by: duration) { deadlines, now in deadlines.contains(now.advanced(by: duration)) }
        }

        /// Looks at `condition` every 2 ms, for up to a minute.
        func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition() {
                guard ContinuousClock.now < deadline else { throw LookedTooLong(what: what) }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        func waitForTicks(_ count: Int) async -> [Tick] {
            _ = await recorder.wait { $0.ticks.count >= count }
            return recorder.ticks
        }

        func waitFor(_ predicate: @escaping @Sendable (FeedEvent) -> Bool, count: Int = 1) async -> Bool {
            await recorder.wait { $0.count(predicate) >= count }
        }
    }

    struct LookedTooLong: Error { var what: String }

    static func isConnected(_ event: FeedEvent) -> Bool { if case .connected = event { true } else { false } }
    static func isDisconnected(_ event: FeedEvent) -> Bool { if case .disconnected = event { true } else { false } }

    static func binanceRest() throws -> [String: [UInt8]] {
        [
            "/api/v3/exchangeInfo": try exchangeFixture("binance_exchangeInfo.json"),
            "/api/v3/ticker/24hr": try exchangeFixture("binance_ticker24hr.json")
        ]
    }

    static func binanceTicker(_ symbol: String, time: Int64, price: Double) -> String {
        #"{"e":"24hrTicker","E":\#(time),"s":"\#(symbol)","c":"\#(price)","P":"1.5","q":"1000"}"#
    }

    // MARK: - Binance

    @Test func binanceMarketsAndSnapshotAreInCommonSymbols() async throws {
        let exchange = ScriptedExchange(rest: try Self.binanceRest())
        let port = try await exchange.start()
        let source = try SourceRegistry.make("binance", endpoint: "http://127.0.0.1:\(port)")
        let markets = try await source.loadMarkets(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(markets.map(\.symbol) == ["ETH/BTC", "BTC/USDT", "LUNA/BTC"])
        #expect(markets.map(\.active) == [true, true, false])
        let ticks = try await source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
        // BNBBTC is not in the market list: it has no BASE/QUOTE and is left out.
        #expect(ticks.count == 1)
        let eth = try #require(ticks.first)
        #expect(eth.symbol == "ETH/BTC" && eth.price == 4.000002 && eth.time == 1_499_869_899_040)
        #expect(eth.change24h == -95.96 && eth.volume24h == 15.3)
        await exchange.stop()
    }

    @Test func binanceSubscribesTheActiveMarketsAndMapsTicks() async throws {
        let live = try await Live(.binance, rest: try Self.binanceRest())
        let first = try await live.exchange.connection(1)
        let subscribe = try await first.waitForTexts(1)
        #expect(first.path == "/ws")
        #expect(subscribe == [#"{"method":"SUBSCRIBE","params":["ethbtc@ticker","btcusdt@ticker"],"id":1}"#])
        first.send(#"{"result":null,"id":1}"#)
        first.send(Self.binanceTicker("ETHBTC", time: 1000, price: 0.05))
        let ticks = await live.waitForTicks(1)
        #expect(ticks == [Tick(time: 1000, symbol: "ETH/BTC", price: 0.05, change24h: 1.5, volume24h: 1000)])
        await live.stop()
    }

    /// After a clean close and after a reset: a new connection, a fresh SUBSCRIBE, and the
    /// server's repeat of the last tick is not delivered twice.
    @Test(arguments: [false, true])
    func binanceReconnectsAndResubscribesWithoutRepeats(reset: Bool) async throws {
        let live = try await Live(.binance, rest: try Self.binanceRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        first.send(Self.binanceTicker("ETHBTC", time: 1000, price: 0.05))
        _ = await live.waitForTicks(1)
        if reset { first.reset() } else { first.close() }
        #expect(await live.waitFor(Self.isDisconnected))
        // The backoff sleeps on the feed's clock.
        let second = try await live.passBackoff(untilConnection: 2)
        #expect(try await second.waitForTexts(1) == first.texts)
        second.send(Self.binanceTicker("ETHBTC", time: 1000, price: 0.05))
        second.send(Self.binanceTicker("ETHBTC", time: 2000, price: 0.06))
        let ticks = await live.waitForTicks(2)
        #expect(ticks.map(\.time) == [1000, 2000])
        await live.stop()
    }

    @Test func binanceAnswersTheServersPings() async throws {
        let live = try await Live(.binance, rest: try Self.binanceRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        first.ping("p1")
        first.ping("p2")
        try await first.waitForPongs(2)
        #expect(first.pongs == 2)
        await live.stop()
    }

    /// At 23 h 30 min a replacement connection opens and subscribes while the first stays
    /// open; once the replacement delivers, the first is closed. Ticks both send are delivered once.
    @Test func binanceReplacesEachConnectionBeforeItsTwentyFourHours() async throws {
        let live = try await Live(.binance, rest: try Self.binanceRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        first.send(Self.binanceTicker("ETHBTC", time: 1000, price: 0.05))
        _ = await live.waitForTicks(1)
        try await live.advance(exactly: .seconds(23 * 3600 + 1800))
        let second = try await live.exchange.connection(2)
        try await second.waitForTexts(1)
        #expect(!first.isClosed)
        first.send(Self.binanceTicker("ETHBTC", time: 2000, price: 0.06))
        second.send(Self.binanceTicker("ETHBTC", time: 2000, price: 0.06))
        second.send(Self.binanceTicker("ETHBTC", time: 3000, price: 0.07))
        try await first.waitUntilClosed()
        let ticks = await live.waitForTicks(3)
        #expect(ticks.map(\.time) == [1000, 2000, 3000])
        #expect(live.recorder.count(Self.isDisconnected) == 0)
        await live.stop()
    }

    @Test func binanceServerShutdownOpensAReplacementAtOnce() async throws {
        let live = try await Live(.binance, rest: try Self.binanceRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        first.send(#"{"e":"serverShutdown","E":1700000000000}"#)
        let second = try await live.exchange.connection(2)
        try await second.waitForTexts(1)
        second.send(Self.binanceTicker("BTCUSDT", time: 5000, price: 43000))
        try await first.waitUntilClosed()
        #expect(await live.waitForTicks(1).map(\.symbol) == ["BTC/USDT"])
        await live.stop()
    }

    /// 2 100 markets: three connections (1024 streams at most each), each subscribing in
    /// messages of 200 streams paced 250 ms apart on the feed's clock.
    @Test func binanceSplitsStreamsOverConnectionsAndPacesSubscribes() async throws {
        let symbols = (0..<2_100).map { "C\($0)USDT" }
        let info =
            #"{"symbols":["#
            + symbols.map {
                #"{"symbol":"\#($0)","status":"TRADING","baseAsset":"\#($0.dropLast(4))","quoteAsset":"USDT"}"#
            }
            .joined(separator: ",") + "]}"
        let live = try await Live(.binance, rest: ["/api/v3/exchangeInfo": Array(info.utf8)])
        var connections: [ScriptedConnection] = []
        for n in 1...3 { connections.append(try await live.exchange.connection(n)) }
        for connection in connections { try await connection.waitForTexts(1) }
        // Nothing more is sent until the clock moves 250 ms.
        #expect(connections.map(\.texts.count) == [1, 1, 1])
        for _ in 0..<5 {
            // The two connections with more messages to send sleep 250 ms before each.
            try await live.advance(by: .milliseconds(250)) { deadlines, now in
                deadlines.count { $0 == now.advanced(by: .milliseconds(250)) } == 2
            }
        }
        try await live.waitUntil("13 subscribe messages") { connections.map(\.texts.count).reduce(0, +) == 13 }
        let streams = connections.map { $0.texts.joined().components(separatedBy: "@ticker").count - 1 }
        #expect(streams.sorted() == [52, 1024, 1024])
        #expect(connections.map(\.texts.count).sorted() == [1, 6, 6])
        await live.stop()
    }

    // MARK: - Coinbase

    static func coinbaseRest() throws -> [String: [UInt8]] {
        ["/api/v3/brokerage/market/products": try exchangeFixture("coinbase_products.json")]
    }

    static func coinbaseTicker(sequence: Int, price: Double, time: String = "2023-02-09T20:30:37.167Z") -> String {
        #"{"channel":"ticker","client_id":"","timestamp":"\#(time)","sequence_num":\#(sequence),"events":[{"type":"update","tickers":[{"type":"ticker","product_id":"BTC-USD","price":"\#(price)","volume_24_h":"2","price_percent_chg_24_h":"-1.5"}]}]}"#
    }

    /// Moves the feed's clock past the 250 ms between two subscribe messages.
    static func passCoinbasePace(_ live: Live) async throws {
        try await live.advance(exactly: .milliseconds(250))
    }

    @Test func coinbaseSubscribesHeartbeatsFirstAndReadsTicks() async throws {
        let exchange = ScriptedExchange(rest: try Self.coinbaseRest())
        let port = try await exchange.start()
        let source = try SourceRegistry.make("coinbase", endpoint: "http://127.0.0.1:\(port)")
        let snapshot = try await source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(snapshot.map(\.symbol) == ["BTC/USD"])
        #expect(snapshot.first?.volume24h == 12000.5 * 37000.01 && snapshot.first?.change24h == 1.2)
        await exchange.stop()

        let live = try await Live(.coinbase, rest: try Self.coinbaseRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        // The ticker subscribe follows 250 ms after the heartbeats one (half of 8 messages a second).
        #expect(first.texts.count == 1)
        try await Self.passCoinbasePace(live)
        let texts = try await first.waitForTexts(2)
        #expect(texts[0] == #"{"type":"subscribe","channel":"heartbeats"}"#)
        // ETH-EUR has trading disabled: only BTC-USD is followed.
        #expect(texts[1] == #"{"type":"subscribe","product_ids":["BTC-USD"],"channel":"ticker"}"#)
        first.send(Self.coinbaseTicker(sequence: 0, price: 100))
        let tick = try #require(await live.waitForTicks(1).first)
        #expect(tick.symbol == "BTC/USD" && tick.price == 100 && tick.volume24h == 200 && tick.change24h == -1.5)
        #expect(tick.time == 1_675_974_637_167)
        await live.stop()
    }

    /// A jump in `sequence_num` is counted, and the connection is replaced by a fresh one with
    /// a fresh subscription.
    @Test func coinbaseSequenceGapIsCountedAndResubscribed() async throws {
        let live = try await Live(.coinbase, rest: try Self.coinbaseRest())
        let first = try await live.exchange.connection(1)
        try await first.waitForTexts(1)
        try await Self.passCoinbasePace(live)
        try await first.waitForTexts(2)
        first.send(Self.coinbaseTicker(sequence: 0, price: 100, time: "2023-02-09T20:30:37.000Z"))
        first.send(
            #"{"channel":"heartbeats","client_id":"","timestamp":"2023-02-09T20:30:38Z","sequence_num":1,"events":[]}"#)
        first.send(Self.coinbaseTicker(sequence: 5, price: 101, time: "2023-02-09T20:30:39.000Z"))
        #expect(await live.waitFor(Self.isDisconnected))
        #expect(live.runner.sequenceGapCount == 1)
        let reason = live.recorder.all.compactMap { event -> String? in
            if case .disconnected(let reason, _) = event { reason } else { nil }
        }.first
        #expect(reason?.contains("sequence gap: expected message 2, got 5 (3 lost)") == true, "\(reason ?? "")")
        try await first.waitUntilClosed()
        let second = try await live.passBackoff(untilConnection: 2)
        try await second.waitForTexts(1)
        try await Self.passCoinbasePace(live)
        #expect(try await second.waitForTexts(2) == first.texts)
        // A new connection counts from its own first message.
        second.send(Self.coinbaseTicker(sequence: 0, price: 102, time: "2023-02-09T20:30:40.000Z"))
        #expect(await live.waitForTicks(3).map(\.price) == [100, 101, 102])
        #expect(live.runner.sequenceGapCount == 1)
        await live.stop()
    }

    // MARK: - Kraken

    static func krakenRest() throws -> [String: [UInt8]] {
        [
            "/0/public/AssetPairs": try exchangeFixture("kraken_AssetPairs.json"),
            "/0/public/Ticker": try exchangeFixture("kraken_Ticker.json")
        ]
    }

    @Test func krakenSnapshotThenUpdatesAndPingsEveryThirtySeconds() async throws {
        let live = try await Live(.kraken, rest: try Self.krakenRest())
        let first = try await live.exchange.connection(1)
        let subscribe = try await first.waitForTexts(1)
        #expect(first.path == "/v2")
        #expect(subscribe == [#"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD","DOGE/EUR"]}}"#])
        first.send(
            #"{"channel":"ticker","type":"snapshot","data":[{"symbol":"BTC/USD","last":30000.5,"volume":10,"vwap":30000,"change_pct":1.25,"timestamp":"2023-09-25T09:04:31.742Z"}]}"#
        )
        first.send(#"{"channel":"heartbeat"}"#)
        first.send(
            #"{"channel":"ticker","type":"update","data":[{"symbol":"XDG/EUR","last":0.07,"volume":5,"vwap":0.06,"change_pct":-2,"timestamp":"2023-09-25T09:04:32.000Z"}]}"#
        )
        let ticks = await live.waitForTicks(2)
        #expect(ticks.map(\.symbol) == ["BTC/USD", "DOGE/EUR"])
        #expect(ticks[0].volume24h == 300_000 && ticks[0].change24h == 1.25)
        try await live.advance(exactly: .seconds(30))
        #expect(try await first.waitForTexts(2).last == #"{"method":"ping"}"#)
        await live.stop()
    }

    @Test func krakenSnapshotIsKeyedByThePairsOfTheMarketList() async throws {
        let exchange = ScriptedExchange(rest: try Self.krakenRest())
        let port = try await exchange.start()
        let source = try SourceRegistry.make("kraken", endpoint: "http://127.0.0.1:\(port)")
        let markets = try await source.loadMarkets(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(Set(markets.map(\.symbol)) == ["BTC/USD", "DOGE/EUR", "ETH/BTC"])
        let ticks = try await source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(ticks.map(\.symbol) == ["BTC/USD"])
        #expect(ticks.first?.price == 30303.2 && ticks.first?.change24h == nil)
        #expect(close(ticks.first?.volume24h, 4412.73601799 * 30689.13205))
        await exchange.stop()
    }

    // MARK: - Bybit

    @Test func bybitPingsEveryTwentySecondsAndMapsSymbols() async throws {
        let rest: [String: [UInt8]] = [
            "/v5/market/instruments-info": try exchangeFixture("bybit_instruments_spot.json"),
            "/v5/market/tickers": try exchangeFixture("bybit_tickers_spot.json")
        ]
        let live = try await Live(.bybit, rest: rest)
        let first = try await live.exchange.connection(1)
        #expect(try await first.waitForTexts(1) == [#"{"op":"subscribe","args":["tickers.BTCUSDT"]}"#])
        #expect(first.path == "/v5/public/spot")
        first.send(
            #"{"topic":"tickers.BTCUSDT","ts":1673853746003,"type":"snapshot","cs":2588407389,"data":{"symbol":"BTCUSDT","lastPrice":"21109.77","price24hPcnt":"-0.0068","turnover24h":"5000"}}"#
        )
        let tick = try #require(await live.waitForTicks(1).first)
        #expect(tick.symbol == "BTC/USDT" && tick.time == 1_673_853_746_003 && tick.volume24h == 5000)
        #expect(close(tick.change24h, -0.68))
        try await live.advance(exactly: .seconds(20))
        #expect(try await first.waitForTexts(2).last == #"{"op":"ping"}"#)
        let snapshot = try await live.runner.source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(snapshot.map(\.symbol) == ["BTC/USDT"] && snapshot.first?.time == 1_673_859_087_947)
        await live.stop()
    }

    // MARK: - OKX

    @Test func okxPingsEveryTwentySeconds() async throws {
        let rest: [String: [UInt8]] = [
            "/api/v5/public/instruments": try exchangeFixture("okx_instruments_spot.json"),
            "/api/v5/market/tickers": try exchangeFixture("okx_tickers_spot.json")
        ]
        let live = try await Live(.okx, rest: rest)
        let first = try await live.exchange.connection(1)
        #expect(
            try await first.waitForTexts(1) == [
                #"{"op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]}"#
            ])
        first.send(
            #"{"arg":{"channel":"tickers","instId":"BTC-USDT"},"data":[{"instType":"SPOT","instId":"BTC-USDT","last":"110","open24h":"100","volCcy24h":"2222","ts":"1597026383085"}]}"#
        )
        let tick = try #require(await live.waitForTicks(1).first)
        #expect(tick.symbol == "BTC/USDT" && close(tick.change24h, 10) && tick.volume24h == 2222)
        // Every 20 s a ping, ticks or not.
        try await live.advance(exactly: .seconds(20))
        #expect(try await first.waitForTexts(2) == first.texts)
        #expect(first.texts.dropFirst() == ["ping"])
        let snapshot = try await live.runner.source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
        #expect(snapshot.map(\.symbol) == ["BTC/USDT"])
        #expect(close(snapshot.first?.change24h, (9999.99 - 9000) / 9000 * 100))
        await live.stop()
    }

    // MARK: - Candles

    /// Binance klines: the market's exchange symbol, hour candles for a history past 24 hours,
    /// at most 1000 a page.
    @Test func binanceCandlesAskTheKlinesOfTheExchangeSymbol() async throws {
        var rest = try Self.binanceRest()
        rest["/api/v3/klines"] = try exchangeFixture("binance_klines.json")
        let exchange = ScriptedExchange(rest: rest)
        let port = try await exchange.start()
        let source = ExchangeSource(.binance, endpoint: "http://127.0.0.1:\(port)")
        let until: Int64 = 1_500_249_600_000
        let outcome = await SourceCandles(source: source, http: PatientHTTPClient(NIOHTTPClient())).fetch(
            Backfill.Need(symbol: "ETH/BTC", reach: until - 1_499_040_000_000, until: until))
        await exchange.stop()
        guard case .candles(let candles) = outcome else { Issue.record("\(outcome)"); return }
        #expect(candles.map(\.close) == [0.015771, 0.0159])
        let klines = try #require(exchange.requests.first { $0.hasPrefix("/api/v3/klines") })
        #expect(klines.contains("symbol=ETHBTC") && klines.contains("interval=1h") && klines.contains("limit=1000"))
    }

    /// Kraken OHLC keeps the last 720 candles: a history reaching further is filled from what
    /// there is, and a log line says so.
    @Test func krakenCandlesSayWhenTheWindowReachesPastTheLast720() async throws {
        var rest = try Self.krakenRest()
        rest["/0/public/OHLC"] = try exchangeFixture("kraken_OHLC.json")
        let exchange = ScriptedExchange(rest: rest)
        let port = try await exchange.start()
        let logs = CapturingLogHandler()
        let source = ExchangeSource(.kraken, endpoint: "http://127.0.0.1:\(port)", logger: logs.logger(label: "test"))
        let until: Int64 = 1_688_671_320_000
        let candles = SourceCandles(source: source, http: PatientHTTPClient(NIOHTTPClient()))
        let outcome = await candles.fetch(
            Backfill.Need(symbol: "BTC/USD", reach: 86_400_000, detail: 86_400_000, until: until))
        // Another fill reaching as far back, of any market of this source, is not said again.
        _ = await candles.fetch(Backfill.Need(symbol: "BTC/USD", reach: 86_400_000, detail: 86_400_000, until: until))
        await exchange.stop()
        guard case .candles(let filled) = outcome else { Issue.record("\(outcome)"); return }
        #expect(filled.map(\.start) == [1_688_671_200_000, 1_688_671_260_000])
        let ohlc = try #require(exchange.requests.first { $0.hasPrefix("/0/public/OHLC") })
        #expect(ohlc.contains("pair=XXBTZUSD") && ohlc.contains("interval=1&"))
        #expect(exchange.requests.filter { $0.hasPrefix("/0/public/OHLC") }.count == 2)
        #expect(logs.records.filter { $0.message.contains("Kraken keeps only the last 720 candles") }.count == 1)
    }

    /// OKX pages backwards with `after`: `candles` for the recent 1 440, `history-candles`
    /// (100 a page) before them.
    @Test(arguments: [false, true])
    func okxCandlesPageBackwards(old: Bool) async throws {
        let exchange = ScriptedExchange(rest: [
            "/api/v5/public/instruments": try exchangeFixture("okx_instruments_spot.json"),
            "/api/v5/market/candles": try exchangeFixture("okx_candles.json"),
            "/api/v5/market/history-candles": try exchangeFixture("okx_candles.json")
        ])
        let port = try await exchange.start()
        let source = ExchangeSource(.okx, endpoint: "http://127.0.0.1:\(port)")
        let until: Int64 = 1_597_026_443_085
        let since: Int64 = 1_597_026_323_085
        // Old: asked 61 days after the candles, beyond the recent 1 440 hour candles.
        let now = old ? until + 61 * 86_400_000 : until
        let candles = try await source.candles(
            of: "BTC/USDT", since: since, until: until, now: now, http: PatientHTTPClient(NIOHTTPClient()))
        await exchange.stop()
        let asked = exchange.requests.filter { $0.contains("candles") }
        #expect(asked.count == 1)
        let first = try #require(asked.first)
        #expect(first.hasPrefix(old ? "/api/v5/market/history-candles" : "/api/v5/market/candles?"))
        #expect(first.contains("after=\(until)") && first.contains(old ? "limit=100" : "limit=300"))
        #expect(first.contains(old ? "bar=1H" : "bar=1m"))
        // Recent: the two minute candles; old: hour candles, none closed by `until`.
        #expect(candles.map(\.start) == (old ? [] : [since, since + 60_000]))
    }
}
