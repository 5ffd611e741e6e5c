import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The embedded BTSE-compatible exchange, on 127.0.0.1 only.
///
/// ```swift
/// let server = DemoExchangeServer(configuration: .init(port: 0))
/// let port = try await server.start()   // ws://127.0.0.1:\(port)/ws/futures
/// …
/// await server.stop()
/// ```
/// Routes: `GET /futures/api/inquire/initial/market`, `GET /spot/api/v3.2/market_summary`,
/// `GET /spot/api/v3.2/ohlcv` and `/futures/api/v2.1/ohlcv` (candles), websockets
/// `/ws/futures` and `/ws/spot`; and the five look-alikes (`Venue`: Binance, Coinbase, Kraken,
/// Bybit, OKX) at their exchanges' own paths and under `/binance`, `/coinbase`, …, from the
/// same prices. See Docs/exchange.md.
public final class DemoExchangeServer: Sendable {
    public let configuration: ExchangeConfiguration
    private let logger: Logger
    private let hub = ConnectionHub()
    private let counters = StatsCounter()
    private let requests = RequestLog()
    private let faults: FaultSettings
    private let feed: PriceFeed
    private let listing: NewMarket.Listing
    private let venues: VenueContext
    private let running = Mutex<Running?>(nil)
    private let startedOnce = Mutex(false)

    private struct Running: Sendable {
        let group: ServiceGroup
        let task: Task<Void, Error>
        let dropTimer: Task<Void, Never>
        let port: Int
    }

    public init(configuration: ExchangeConfiguration = ExchangeConfiguration(), logger: Logger? = nil) {
        self.configuration = configuration
        var defaultLogger = Logger(label: "demo-exchange")
        defaultLogger.logLevel = .warning
        self.logger = logger ?? defaultLogger
        faults = FaultSettings(configuration.faults)
        let catalog = MarketCatalog.embedded
        let markets = VenueMarkets(perVenue: configuration.marketsPerVenue)
        // The look-alikes' synthetic markets are walked after the catalog's, so the catalog's
        // prices are the same with or without them.
        let symbols = catalog.spot.map(\.symbol) + markets.synthetic
        let board: MarketBoard
        let generator: any PriceGenerator
        switch configuration.prices {
        case .randomWalk(let seed, let interval):
            let walk = RandomWalk(symbols: symbols, seed: seed, interval: interval)
            board = MarketBoard(symbols: symbols, startPrices: walk.publishedPrices, seed: seed)
            generator = walk
        case .replay(let ticks, let speed):
            // Markets the file does not mention still need a price in market_summary.
            let walk = RandomWalk(symbols: symbols, seed: 1, interval: .seconds(1))
            board = MarketBoard(symbols: symbols, startPrices: walk.publishedPrices, seed: 1)
            generator = TickReplay(ticks: ticks, speed: speed)
        }
        listing = NewMarket.Listing(after: configuration.newMarketAfter)
        feed = PriceFeed(
            generator: generator, board: board, hub: hub, stats: counters, faults: faults, listing: listing,
            clock: configuration.clock, lookalikeOnly: Set(markets.synthetic))
        venues = VenueContext(
            feed: feed, keepAlive: configuration.keepAlive, faults: faults, prices: configuration.prices,
            markets: markets, walkSymbols: symbols)
    }

    /// Binds 127.0.0.1:`configuration.port` and returns the bound port (the chosen one when
    /// the configured port is 0). Throws when the port cannot be bound, or on a second call.
    public func start() async throws -> Int {
        // The price generator is consumed by one run, so a server starts once; make a new one
        // to start again.
        guard
            startedOnce.withLock({ started in
                defer { started = true }; return !started
            })
        else {
            throw DemoExchangeError.alreadyStarted
        }
        let portReport = PortReport()
        // Client frames of up to 64 KiB, as messages (`VenueSession`): OKX's documented limit for
        // one subscribe request, the largest of the five (the library's default is 16 KiB).
        let plain = HTTPServerBuilder.http1WebSocketUpgrade(
            webSocketRouter: makeWebSocketRouter(), configuration: .init(ws: .init(maxFrameSize: 1 << 16)))
        let server: HTTPServerBuilder
        if let tls = configuration.tls {
            server = try .tls(plain, tlsConfiguration: Self.tlsConfiguration(tls))
        } else {
            server = plain
        }
        let app = Application(
            router: makeRouter(),
            server: server,
            configuration: .init(
                address: .hostname("127.0.0.1", port: configuration.port), serverName: "pricealert-demo-exchange"),
            onServerRunning: { channel in portReport.report(.success(channel.localAddress?.port ?? -1)) },
            logger: logger)
        let group = ServiceGroup(services: [app], logger: logger)
        let task = Task {
            do {
                try await group.run()
                portReport.report(.failure(DemoExchangeError.stoppedBeforeListening))
            } catch {
                portReport.report(.failure(error))
                throw error
            }
        }
        let port: Int
        do {
            port = try await portReport.value()
        } catch {
            task.cancel()
            throw error
        }
        let clock = configuration.clock
        let dropTimer = Task { [hub, counters, faults] in
            await Self.dropLoop(hub: hub, stats: counters, faults: faults, clock: clock)
        }
        running.withLock { $0 = Running(group: group, task: task, dropTimer: dropTimer, port: port) }
        return port
    }

    /// Closes every websocket connection, stops the prices and the listener, and waits for
    /// all of it. Safe to call twice, or without `start()`.
    public func stop() async {
        guard
            let running = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        running.dropTimer.cancel()
        await feed.stop()
        hub.closeAll()
        await running.group.triggerGracefulShutdown()
        // A connection caught mid-upgrade by closeAll() could hold the graceful shutdown open;
        // after 5 s the listener is cancelled instead.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(5))
            running.task.cancel()
        }
        _ = try? await running.task.value
        watchdog.cancel()
    }

    /// The server side of `tls`: its certificate chain and key, read now. Throws
    /// `DemoExchangeError.tlsFiles` naming the file that cannot be read.
    static func tlsConfiguration(_ tls: ExchangeTLS) throws -> TLSConfiguration {
        for file in [tls.certificateFile, tls.keyFile] where !FileManager.default.isReadableFile(atPath: file) {
            throw DemoExchangeError.tlsFiles("\(file): no such file, or not readable")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(tls.certificateFile)
        } catch {
            throw DemoExchangeError.tlsFiles("\(tls.certificateFile): not a PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw DemoExchangeError.tlsFiles("\(tls.certificateFile): no certificate in it") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: tls.keyFile, format: .pem)
        } catch {
            throw DemoExchangeError.tlsFiles("\(tls.keyFile): not a PEM private key (\(error))")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// The bound port while running.
    public var port: Int? { running.withLock { $0?.port } }

    /// Counters so far.
    public var stats: ExchangeStats { counters.snapshot }

    /// The REST requests received so far (path and query, oldest first; the last 10 000).
    public var requestLog: [String] { requests.entries }

    /// The faults in force now; `setFaults` changes them while running.
    public var currentFaults: ExchangeFaults { faults.current }

    public func setFaults(_ new: ExchangeFaults) {
        faults.set(new)
    }

    /// Sends one `coinIndex` frame of `prices` (in this order) to every subscribed connection
    /// now, and shows them in `market_summary`. With `.replay(ticks: [], speed: 0)` these are
    /// the only prices sent, so a test scripts the stream frame by frame.
    public func send(prices: [(symbol: String, price: Double)]) {
        feed.send(PriceStep(prices: prices, delay: .zero))
    }

    /// Drops every websocket connection now, as `faults.dropMode` says (what `dropEvery` does
    /// on its timer).
    public func dropAllConnections() {
        Self.drop(hub: hub, stats: counters, mode: faults.current.dropMode)
    }

    /// Sends Binance's `{"e":"serverShutdown","E":…}` on every Binance connection now (other
    /// exchanges have no such notice); `dropAllConnections()` then closes them.
    public func sendShutdownNotice() {
        hub.sendAll(.shutdownNotice)
    }

    private static func drop(hub: ConnectionHub, stats: StatsCounter, mode: DropMode) {
        let dropped = hub.sendAll(mode == .reset ? .reset : .close)
        stats.update { $0.connectionsDropped += dropped }
    }

    private func makeRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.add(middleware: RequestLogging(log: requests))
        router.add(middleware: RateLimitFault(faults: faults, stats: counters))
        let markets = ByteBuffer(string: MarketCatalog.embedded.payload)
        let withNewMarket = ByteBuffer(string: NewMarket.payload(adding: MarketCatalog.embedded.payload))
        router.get("/futures/api/inquire/initial/market") { [listing] _, _ in
            let body = listing.serveList() ? withNewMarket : markets
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        for path in ["/spot/api/v3.2/ohlcv", "/futures/api/v2.1/ohlcv"] {
            router.get(RouterPath(path)) { [feed, configuration] request, _ in
                feed.startIfNeeded()
                let json = Self.candles(
                    request.uri.queryParameters, futures: path.hasPrefix("/futures"),
                    prices: configuration.prices, startedAt: feed.startedAt)
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: json)))
            }
        }
        router.get("/spot/api/v3.2/market_summary") { [feed, listing] request, _ in
            feed.startIfNeeded()
            let symbol = request.uri.queryParameters["symbol"].map(String.init)
            var spot = MarketCatalog.embedded.spot
            var board = feed.board
            if listing.isListed {
                spot.append(NewMarket.market)
                board.list(NewMarket.market.symbol, price: NewMarket.price)
            }
            let json = MarketSummary.json(markets: spot, board: board, symbol: symbol)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        for venue in Venue.allCases {
            for route in Self.routes(venue, venues) {
                let names = parameterNames(route.path)
                for path in [route.path, venue.prefix + route.path] {
                    router.get(RouterPath(path)) { request, context in
                        var parameters: [String: String] = [:]
                        for name in names { parameters[name] = context.parameters.get(name) }
                        let answer = route.answer(request.queryDictionary, parameters)
                        return Response(
                            status: .init(code: answer.status), headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: answer.body)))
                    }
                }
            }
        }
        return router
    }

    private static func routes(_ venue: Venue, _ context: VenueContext) -> [VenueRoute] {
        switch venue {
        case .binance: Binance.routes(context)
        case .coinbase: Coinbase.routes(context)
        case .kraken: Kraken.routes(context)
        case .bybit: Bybit.routes(context)
        case .okx: OKX.routes(context)
        }
    }

    private static func socketRoutes(_ venue: Venue, _ context: VenueContext) -> [VenueSocketRoute] {
        switch venue {
        case .binance: Binance.socketRoutes(context)
        case .coinbase: Coinbase.socketRoutes(context)
        case .kraken: Kraken.socketRoutes(context)
        case .bybit: Bybit.socketRoutes(context)
        case .okx: OKX.socketRoutes(context)
        }
    }

    /// An `ohlcv` answer (Docs/exchange.md): the random walk's candles of the spot market
    /// `symbol` (`BTC-USD`); an empty list for futures, unknown markets, a replay, or a request
    /// without `resolution`, `start` and `end`.
    private static func candles(_ query: Parameters, futures: Bool, prices: PriceMode, startedAt: Int64?) -> String {
        guard !futures, case .randomWalk(let seed, let interval) = prices, let startedAt,
            let name = query["symbol"].map(String.init),
            let symbol = MarketCatalog.embedded.spot.first(where: { $0.name == name })?.symbol,
            let resolution = query["resolution"].flatMap({ Int64(String($0)) }), resolution > 0,
            let start = query["start"].flatMap({ Int64(String($0)) }),
            let end = query["end"].flatMap({ Int64(String($0)) })
        else { return "[]" }
        let symbols = MarketCatalog.embedded.spot.map(\.symbol)
        let book = DemoCandles(
            walk: RandomWalk(symbols: symbols, seed: seed, interval: interval),
            startMinute: startedAt / 60_000)
        return DemoCandles.json(book.rows(symbol: symbol, resolution: resolution, start: start, end: end))
    }

    private func makeWebSocketRouter() -> Router<ExchangeRequestContext> {
        let router = Router(context: ExchangeRequestContext.self)
        let session = WebSocketSession(hub: hub, feed: feed, stats: counters)
        for path in ["/ws/futures", "/ws/spot"] {
            router.ws(RouterPath(path)) { inbound, outbound, context in
                try await session.run(inbound: inbound, outbound: outbound, channel: context.requestContext.channel)
            }
        }
        let venueSession = VenueSession(
            hub: hub, feed: feed, stats: counters, clock: configuration.clock, tick: configuration.keepAlive.tick)
        for venue in Venue.allCases {
            for route in Self.socketRoutes(venue, venues) {
                let names = parameterNames(route.path)
                let prefixed = route.path == "/" ? venue.prefix : venue.prefix + route.path
                for path in [route.path, prefixed] {
                    router.ws(RouterPath(path)) { inbound, outbound, context in
                        var parameters: [String: String] = [:]
                        for name in names { parameters[name] = context.requestContext.parameters.get(name) }
                        let connection = route.connect(context.request.queryDictionary, parameters)
                        try await venueSession.run(
                            connection, inbound: inbound, outbound: outbound, channel: context.requestContext.channel)
                    }
                }
            }
        }
        return router
    }

    /// Closes every connection each `dropEvery` of `clock`; re-reads the setting every 50 ms so
    /// `setFaults` takes effect while running. The period restarts when the setting changes.
    private static func dropLoop<C: Clock<Duration>>(
        hub: ConnectionHub, stats: StatsCounter, faults: FaultSettings,
        clock: C
    ) async {
        var last = clock.now
        var period = faults.current.dropEvery
        while !Task.isCancelled {
            do { try await clock.sleep(for: .milliseconds(50)) } catch { return }
            let now = clock.now
            let current = faults.current.dropEvery
            if current != period {
                period = current
                last = now
            }
            guard let period, last.duration(to: now) >= period else { continue }
            last = now
            drop(hub: hub, stats: stats, mode: faults.current.dropMode)
        }
    }
}

public enum DemoExchangeError: Error, Sendable, Equatable {
    /// `start()` was called before on this server (also after `stop()`).
    case alreadyStarted
    /// The listener ended before it reported its port (for example, the port is in use).
    case stoppedBeforeListening
    /// The TLS certificate or key cannot be read: the file and why.
    case tlsFiles(String)
}
