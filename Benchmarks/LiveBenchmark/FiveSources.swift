// `live-benchmark --sources 5`: the live path of `run` with five sources at once, in one process.
// Each of Binance, Coinbase, Kraken, Bybit and OKX is a flood server on 127.0.0.1 that sends its
// look-alike's own ticker messages (`VenueFrames`: what `pricealert exchange --markets N` sends
// for N markets, rendered ahead of time and sent in a cycle, Coinbase's `sequence_num` counted
// on) as fast as the socket takes them, about 64 KiB a write (`FloodServer`), once the client's
// first subscribe arrives; their REST routes (market lists, tickers) are the embedded exchange's. The client is `run`'s own
// pipeline (`LivePipeline`): five `FeedRunner`s with `ExchangeSource` and NIO's HTTP client,
// each on its own lane of the evaluator's inbox, the evaluator, the delivery policy and a
// counting sink. Rules: `--rules` price rules (levels, crossings and bands ±30 % around each
// market's price) on qualified symbols (`binance:BTC/USDT`) drawn over all the markets, so
// every tick meets rules; no window rules (their backfill is `run-five-exchanges.sh`'s).
// Reports the ticks the engine accepted per second, from the first frame sent (once all five
// have subscribed) to the end of the run (its drain included), and each source's frames sent.
// With `--store URL` (PostgreSQL) or `--state DIR` (SQLite), the pipeline is `run`'s with that
// store: alerts are written to its outbox before the sink gets them, and the engine state is
// restored from it and saved there every second (`run --save-every 1s`); without, alerts go to
// the sink directly and nothing is saved. The counting sink is declared as a `stdout` sink,
// which is delivered directly even with a store; `--sink webhook` declares it a webhook (its
// requests never leave: the counting sink takes them), so that with a store every alert is
// written to the store's outbox, claimed there and deleted once counted, as a webhook's are.
import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertPolicy
import AlertPostgres
import AlertRules
import AlertSinks
import AlertStore
import DemoExchange
import Logging
import NIOCore
import Operations
import SeededRandom
import Synchronization

enum FiveSources {
    /// Each look-alike, its client profile and its websocket path under the look-alike's prefix.
    static let venues: [(venue: Venue, profile: ExchangeProfile, socket: String)] = [
        (.binance, .binance, "/ws"), (.coinbase, .coinbase, ""), (.kraken, .kraken, "/v2"),
        (.bybit, .bybit, "/v5/public/spot"), (.okx, .okx, "/ws/v5/public")
    ]

    /// One source's messages as websocket frames, ready to send in a cycle, about 64 KiB a
    /// chunk. Coinbase's carry a sequence number, one more each message on a connection: those
    /// are kept in two parts around it and framed as they go, one message a chunk.
    struct Pool: Sendable {
        let chunks: [(bytes: ByteBuffer, frames: Int)]
        let split: [(head: ByteBuffer, tail: ByteBuffer)]?

        init(_ texts: [String], numbered: Bool) {
            guard numbered else {
                var chunks: [(ByteBuffer, Int)] = []
                var chunk = ByteBuffer()
                var frames = 0
                for text in texts {
                    textFrame(ByteBuffer(string: text), into: &chunk)
                    frames += 1
                    if chunk.readableBytes >= 1 << 16 {
                        chunks.append((chunk, frames))
                        chunk = ByteBuffer()
                        frames = 0
                    }
                }
                if frames > 0 { chunks.append((chunk, frames)) }
                self.chunks = chunks
                split = nil
                return
            }
            chunks = []
            split = texts.map { frame in
                let key = #""sequence_num":"#
                guard let at = frame.range(of: key) else { return (ByteBuffer(string: frame), ByteBuffer()) }
                let rest = frame[at.upperBound...]
                let end = rest.firstIndex { !$0.isNumber } ?? rest.endIndex
                return (ByteBuffer(string: String(frame[..<at.upperBound])), ByteBuffer(string: String(rest[end...])))
            }
        }

        /// Chunk `i` of the cycle and how many messages it holds; for Coinbase message `i`,
        /// numbered `i`.
        func chunk(_ i: Int) -> (bytes: ByteBuffer, frames: Int) {
            guard let split else { return chunks[i % chunks.count] }
            var (head, tail) = split[i % split.count]
            let number = String(i)
            var message = ByteBuffer()
            message.reserveCapacity(head.readableBytes + number.utf8.count + tail.readableBytes)
            message.writeBuffer(&head)
            message.writeString(number)
            message.writeBuffer(&tail)
            var framed = ByteBuffer()
            framed.reserveCapacity(message.readableBytes + 10)
            textFrame(message, into: &framed)
            return (framed, 1)
        }
    }

    /// Counts the alerts delivered.
    final class CountingSink: Sink {
        let name = "count"
        let count = Atomic<Int>(0)
        func send(_ alert: Alert) async -> SinkResult {
            count.add(1, ordering: .relaxed)
            return .delivered
        }
    }

    static func run(
        markets: Int, rules ruleCount: Int, seconds: Int, steps: Int, seed: UInt64, store url: String?,
        state: String?, sink sinkType: String = "stdout"
    ) async throws {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: seed, interval: .seconds(3600)), marketsPerVenue: markets))
        let restPort = try await exchange.start()
        let http = NIOHTTPClient()

        // The rules: levels around each market's price now (its REST ticker).
        var rng = SeededRandom(seed: seed)
        var quoted: [(symbol: String, price: Double)] = []
        for (venue, profile, _) in venues {
            let source = ExchangeSource(profile, endpoint: "http://127.0.0.1:\(restPort)/\(venue.rawValue)")
            _ = try await source.loadMarkets(http: http)
            for tick in try await source.snapshot(http: http) where tick.price > 0 {
                quoted.append(("\(venue.rawValue):\(tick.symbol)", tick.price))
            }
        }
        let ruleTexts = (0..<ruleCount).map { i in
            let (symbol, price) = quoted[rng.below(quoted.count)]
            let x = price * rng.uniform(0.7...1.3)
            let when: String
            switch rng.below(7) {
            case 0, 1: when = #"{"price":{"above":\#(x)}}"#
            case 2, 3: when = #"{"price":{"below":\#(x)}}"#
            case 4: when = #"{"price":{"crossesAbove":\#(x)}}"#
            case 5: when = #"{"price":{"crossesBelow":\#(x)}}"#
            default: when = #"{"price":{"inside":[\#(x),\#(x * 1.05)]}}"#
            }
            return
                #"{"id":"r\#(i)","symbol":"\#(symbol)","when":\#(when),"cooldown":"\#([0, 60, 600][rng.below(3)])s"}"#
        }

        // The flood server: REST from the embedded exchange, websockets from the pools.
        var pools: [String: Pool] = [:]
        for (venue, _, _) in venues {
            let frames = VenueFrames.render(venue, marketsPerVenue: markets, seed: seed, steps: steps)
            pools[venue.rawValue] = Pool(frames, numbered: venue == .coinbase)
        }
        let firstSent = Locked<ContinuousClock.Instant?>(nil)
        // The floods start together once every source has subscribed: connecting, loading the
        // market lists and subscribing are not measured (run-five-exchanges.sh times those).
        let subscribed = Locked<Set<String>>([])
        let sent = Locked<[String: (frames: Int, connections: Int)]>([:])
        let names = Dictionary(
            uniqueKeysWithValues: venues.map { ("/\($0.venue.rawValue)\($0.socket)", $0.venue.rawValue) })
        let flood = FloodServer(
            pools: Dictionary(
                uniqueKeysWithValues: venues.map { ("/\($0.venue.rawValue)\($0.socket)", pools[$0.venue.rawValue]!) }),
            subscribed: { path in
                subscribed.withLock { _ = $0.insert(path) }
                while subscribed.withLock({ $0.count }) < venues.count {
                    try await Task.sleep(for: .milliseconds(5))
                }
                firstSent.withLock { $0 = $0 ?? .now }
            },
            finished: { path, count in
                sent.withLock {
                    $0[names[path] ?? path, default: (0, 0)].frames += count
                    $0[names[path] ?? path, default: (0, 0)].connections += 1
                }
            },
            rest: { uri in
                let answer = try await http.send(AlertHTTP.HTTPRequest(url: "http://127.0.0.1:\(restPort)\(uri)"))
                return (answer.status, answer.body)
            })
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let server = Task {
            try await flood.run { port in
                portSink.yield(port)
                portSink.finish()
            }
        }
        var portIterator = ports.makeAsyncIterator()
        guard let port = await portIterator.next(), port > 0 else { throw ServerDidNotStart() }

        // `run`'s pipeline over the five.
        let sources = venues.map { v in
            #""\#(v.venue.rawValue)":{"type":"\#(v.venue.rawValue)","endpoint":"http://127.0.0.1:\#(port)/\#(v.venue.rawValue)"}"#
        }
        let text = """
            {"version":3,"sources":{\(sources.joined(separator: ","))},"sinks":{"count":{"type":"\(sinkType)"\(sinkType == "webhook" ? #","url":"http://127.0.0.1:9/""# : "")}},
             "defaults":{"notify":["count"]},"rules":[\(ruleTexts.joined(separator: ","))]}
            """
        let ruleSet = try RuleLoader.load([RuleSource(path: "five-sources.json", bytes: Array(text.utf8))]).get()
        var feedLogger = Logger(label: "live-benchmark.feed")
        feedLogger.logLevel = .warning
        let feeds = venues.map { v in
            LiveFeed(
                name: v.venue.rawValue, tag: v.venue.rawValue,
                runner: FeedRunner(
                    source: ExchangeSource(v.profile, endpoint: "http://127.0.0.1:\(port)/\(v.venue.rawValue)"),
                    http: http, logger: feedLogger))
        }
        let monitor = PipelineMonitor(
            rules: ruleSet.rules.map(\.id), notifier: ServiceNotifier(environment: [:]), logger: feedLogger)
        let sink = CountingSink()
        let store: (any DurableStore)?
        if let url {
            store = try await PostgresStore.open(
                try PostgresURL(url), use: .init(reconnects: true, exclusive: true), logger: feedLogger)
        } else if let state {
            store = try StateAccess.open(state).get()
        } else {
            store = nil
        }
        let delivery =
            if let store {
                try await AlertDelivery.setUp(ruleSet: ruleSet, sinks: ["count": sink], store: store)
            } else {
                AlertDelivery(
                    route: .direct(Dispatcher(sinks: ["count": sink])),
                    policy: try DeliveryPolicy(ruleSet: ruleSet, silences: SilenceSet(), journal: nil))
            }
        var pipeline = LivePipeline(
            ruleSet: ruleSet, feeds: feeds, feedOptions: FeedOptions(), delivery: delivery, logger: feedLogger,
            monitor: monitor)
        if let store {
            pipeline.saved = SavedState(try await store.engine.load())
            pipeline.saveEvery = .seconds(1)
        }
        pipeline.shutdownSignals = []
        pipeline.stop = {
            // `seconds` of flooding, from when the five have subscribed.
            let deadline = ContinuousClock.now + .seconds(60)
            while firstSent.withLock({ $0 }) == nil {
                guard ContinuousClock.now < deadline else {
                    print("# not every source subscribed within 60 s: \(subscribed.withLock { $0.sorted() }) did")
                    return
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            try? await Task.sleep(for: .seconds(seconds))
        }
        let outcome = try await pipeline.run()
        await store?.close()
        let end = ContinuousClock.now
        server.cancel()
        await exchange.stop()
        guard let start = firstSent.withLock({ $0 }) else { fatalError("no source was flooded") }
        let elapsed = (end - start).ms / 1000
        let accepted = outcome.stats.accepted
        // A source whose messages went over several connections says how many (`okx=…/2`).
        let perSource = sent.withLock { $0 }.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.frames)" + ($0.value.connections > 1 ? "/\($0.value.connections)" : "")
        }
        let saves = url != nil ? "postgres" : state != nil ? "state-folder" : "none"
        print(
            """
            five-sources store=\(saves) sink=\(sinkType) markets/source=\(markets) markets=\(quoted.count) rules=\(ruleSet.rules.count) \
            ticks=\(accepted) ticks/s=\(Int(Double(accepted) / elapsed)) alerts=\(outcome.stats.alerts) \
            delivered=\(sink.count.load(ordering: .relaxed)) dropped=\(outcome.stats.droppedTotal) \
            (\(outcome.stats.dropped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))) \
            seconds=\(fixed(elapsed, 2)) inbox-peak=\(outcome.inboxPeak) frames-sent: \(perSource.joined(separator: " "))
            """)
    }
}
