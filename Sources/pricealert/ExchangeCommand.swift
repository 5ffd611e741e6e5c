import AlertFeeds
import AlertModel
import ArgumentParser
import DemoExchange
import Logging
import Operations
import Platform
import ServiceLifecycle

/// `pricealert exchange`: the embedded exchange on 127.0.0.1, BTSE-compatible and with
/// look-alikes of Binance, Coinbase, Kraken, Bybit and OKX, for demos and offline runs
/// (Docs/exchange.md).
struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract:
            "Run a demo exchange on 127.0.0.1: BTSE-compatible, and look-alikes of Binance, Coinbase, Kraken, Bybit and OKX.",
        discussion: """
            Prices are a seeded random walk, or a recorded tick file with --replay; every look-alike \
            serves the same prices at its exchange's own paths and under /binance, /coinbase, /kraken, \
            /bybit and /okx. Faults can be injected to watch a client recover. With --tls-cert and \
            --tls-key it serves https:// and wss://. Runs until SIGINT or SIGTERM. See Docs/exchange.md.
            """)

    @Option(help: "TCP port on 127.0.0.1 (0 picks a free one).")
    var port = 8765

    @Option(help: "Seed of the random walk; the same seed gives the same prices.")
    var seed: UInt64 = 1

    @Option(help: "How often the random walk publishes prices (e.g. 1s, 200ms), as for demo.")
    var interval: DurationArgument = DurationArgument(.seconds(1))

    @Option(help: "Replay this recorded tick file (JSON Lines) instead of the random walk.")
    var replay: String?

    @Option(help: "Replay speed: recorded gaps are divided by this (0: as fast as possible).")
    var speed = 1.0

    @Option(name: .customLong("drop-every"), help: "Fault: close every websocket connection every S seconds.")
    var dropEvery: Double?

    @Option(name: .customLong("invalid-every"), help: "Fault: send an invalid frame instead of every Nth price frame.")
    var invalidEvery = 0

    @Option(name: .customLong("silence-after"), help: "Fault: stop sending prices S seconds after the feed starts …")
    var silenceAfter: Double?

    @Option(name: .customLong("silence-for"), help: "… for D seconds (connections stay open).")
    var silenceFor: Double?

    @Option(
        name: .customLong("status-429"), help: "Fault: answer the first N REST requests with 429 and Retry-After: 1.")
    var status429 = 0

    @Option(
        name: .customLong("new-market-after"),
        help: "After serving the market list N times, list one more spot market, NEWCOIN (for 'listed' rules).")
    var newMarketAfter: Int?

    @Option(
        name: .customLong("drop-mode"),
        help: "How --drop-every drops a connection: close (a close frame) or reset (a TCP reset).")
    var dropMode: DropMode = .close

    @Option(
        name: .customLong("coinbase-sequence-gap-every"),
        help: "Fault: Coinbase skips one sequence_num after every N messages on a connection.")
    var coinbaseSequenceGapEvery = 0

    @Option(
        name: .customLong("binance-lifetime"),
        help: "Binance closes every connection at this age in seconds (24 hours).")
    var binanceLifetime: Double = 86_400

    @Option(
        name: .customLong("binance-shutdown-notice"),
        help: "Binance sends {\"e\":\"serverShutdown\"} this many seconds before --binance-lifetime ends.")
    var binanceShutdownNotice: Double?

    @Option(
        name: .customLong("bybit-ping-within"),
        help: "Bybit closes a connection that sends no {\"op\":\"ping\"} for this many seconds.")
    var bybitPingWithin: Double = 60

    @Option(
        help: ArgumentHelp(
            "Fault: one look-alike shows one market at its price times FACTOR (e.g. binance:BTC:1.1).",
            valueName: "venue:market:factor"))
    var wick: String?

    @Option(
        help: ArgumentHelp(
            "Each look-alike lists N spot markets: the demo's, then synthetic ones (e.g. 600 for 3 000 in all).",
            valueName: "N"))
    var markets: Int?

    @Option(
        name: .customLong("tls-cert"), help: "Serve https:// and wss:// with this certificate (PEM; chain after it).")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "The private key (PEM) of --tls-cert.")
    var tlsKey: String?

    /// `--wick binance:BTC:1.1`, read.
    private var parsedWick: Wick? {
        get throws {
            guard let wick else { return nil }
            let parts = wick.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let venue = Venue(rawValue: parts[0]), !parts[1].isEmpty,
                let factor = Double(parts[2]), factor > 0, factor.isFinite
            else {
                let venues = Venue.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError(
                    "--wick must be VENUE:MARKET:FACTOR (VENUE one of \(venues), FACTOR a number above 0), not '\(wick)'"
                )
            }
            return Wick(venue: venue, market: parts[1].uppercased(), factor: factor)
        }
    }

    func validate() throws {
        _ = try parsedWick
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("give --tls-cert and --tls-key together") }
        guard coinbaseSequenceGapEvery >= 0 else {
            throw ValidationError("--coinbase-sequence-gap-every must be 0 or more")
        }
        guard binanceLifetime > 0, bybitPingWithin > 0 else {
            throw ValidationError("--binance-lifetime and --bybit-ping-within must be greater than 0")
        }
        if let binanceShutdownNotice, !(0...binanceLifetime).contains(binanceShutdownNotice) {
            throw ValidationError("--binance-shutdown-notice must be between 0 and --binance-lifetime")
        }
        if let markets, !(1...ExchangeConfiguration.maxMarketsPerVenue).contains(markets) {
            throw ValidationError("--markets must be between 1 and \(ExchangeConfiguration.maxMarketsPerVenue)")
        }
        if let newMarketAfter, newMarketAfter < 0 { throw ValidationError("--new-market-after must be 0 or more") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard speed >= 0, speed.isFinite else { throw ValidationError("--speed must be 0 or more") }
        if let dropEvery, !(dropEvery > 0) { throw ValidationError("--drop-every must be greater than 0") }
        guard invalidEvery >= 0 else { throw ValidationError("--invalid-every must be 0 or more") }
        guard status429 >= 0 else { throw ValidationError("--status-429 must be 0 or more") }
        if (silenceAfter == nil) != (silenceFor == nil) {
            throw ValidationError("give --silence-after and --silence-for together")
        }
        if let silenceAfter, let silenceFor, silenceAfter < 0 || silenceFor <= 0 {
            throw ValidationError("--silence-after must be 0 or more and --silence-for greater than 0")
        }
    }

    func run() async throws {
        Logs.bootstrap()
        let server = DemoExchangeServer(configuration: try makeConfiguration())
        let port: Int
        do {
            port = try await server.start()
        } catch DemoExchangeError.tlsFiles(let reason) {
            StandardError.write("exchange: error: \(reason)")
            throw ExitCodes.noInput
        } catch {
            StandardError.write(
                "exchange: error: cannot listen on 127.0.0.1:\(self.port): \(ListenFailure.reason(error))")
            throw ExitCodes.unavailable
        }
        let group = ServiceGroup(
            services: [ExchangeService(server: server, port: port, tls: tlsCert != nil)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: Logger(label: "pricealert.exchange"))
        try await group.run()
        let stats = server.stats
        StandardError.write(
            "exchange: stopped: \(stats.connectionsAccepted) connections, \(stats.framesSent) price frames sent, \(stats.restRequests) REST requests"
        )
    }

    private func makeConfiguration() throws -> ExchangeConfiguration {
        let faults = ExchangeFaults(
            dropEvery: dropEvery.map { .seconds($0) },
            invalidEvery: invalidEvery,
            silenceAfter: silenceAfter.map { .seconds($0) },
            silenceFor: silenceFor.map { .seconds($0) },
            status429: status429, dropMode: dropMode, coinbaseSequenceGapEvery: coinbaseSequenceGapEvery,
            wick: try parsedWick)
        let keepAlive = KeepAliveSettings(
            binanceLifetime: .seconds(binanceLifetime),
            binanceShutdownNotice: binanceShutdownNotice.map { .seconds($0) },
            bybitPingWithin: .seconds(bybitPingWithin))
        let tls = tlsCert.flatMap { cert in tlsKey.map { ExchangeTLS(certificateFile: cert, keyFile: $0) } }
        guard let replay else {
            return ExchangeConfiguration(
                port: port, prices: .randomWalk(seed: seed, interval: interval.duration), faults: faults,
                newMarketAfter: newMarketAfter, keepAlive: keepAlive, tls: tls, marketsPerVenue: markets)
        }
        let loaded: (ticks: [Tick], skipped: Int)
        do {
            loaded = try PriceMode.loadTicks(path: replay)
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.noInput
        }
        if loaded.skipped > 0 {
            StandardError.write("exchange: note: \(loaded.skipped) lines of \(replay) are not ticks and are skipped")
        }
        return ExchangeConfiguration(
            port: port, prices: .replay(ticks: loaded.ticks, speed: speed), faults: faults,
            newMarketAfter: newMarketAfter, keepAlive: keepAlive, tls: tls, marketsPerVenue: markets)
    }
}

/// Keeps the exchange up until SIGINT or SIGTERM starts a graceful shutdown, then stops it
/// (closing websocket connections first) so the process exits 0.
struct ExchangeService: Service {
    let server: DemoExchangeServer
    let port: Int
    let tls: Bool

    func run() async throws {
        // Said here, not before the group runs: the group traps the signals before it starts its
        // services, so a SIGTERM sent as soon as this line appears is a graceful stop (exit 0).
        let (http, ws) = tls ? ("https", "wss") : ("http", "ws")
        StandardError.write("exchange: listening on \(http)://127.0.0.1:\(port) (\(ws)://127.0.0.1:\(port)/ws/futures)")
        try? await gracefulShutdown()
        await server.stop()
    }
}

extension DropMode: ExpressibleByArgument {}
