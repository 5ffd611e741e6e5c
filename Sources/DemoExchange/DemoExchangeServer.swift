import Hummingbird
import HummingbirdWebSocket
import Logging
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
/// websockets `/ws/futures` and `/ws/spot`. See Docs/exchange.md.
public final class DemoExchangeServer: Sendable {
    public let configuration: ExchangeConfiguration
    private let logger: Logger
    private let hub = ConnectionHub()
    private let counters = StatsCounter()
    private let faults: FaultSettings
    private let feed: PriceFeed
    private let running = Mutex<Running?>(nil)

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
        let symbols = catalog.spot.map(\.symbol)
        let board: MarketBoard
        let source: any PriceSource
        switch configuration.prices {
        case .randomWalk(let seed, let interval):
            let walk = RandomWalk(symbols: symbols, seed: seed, interval: interval)
            board = MarketBoard(symbols: symbols, startPrices: walk.publishedPrices, seed: seed)
            source = walk
        case .replay(let ticks, let speed):
            // Markets the file does not mention still need a price in market_summary.
            let walk = RandomWalk(symbols: symbols, seed: 1, interval: .seconds(1))
            board = MarketBoard(symbols: symbols, startPrices: walk.publishedPrices, seed: 1)
            source = TickReplay(ticks: ticks, speed: speed)
        }
        feed = PriceFeed(source: source, board: board, hub: hub, stats: counters, faults: faults)
    }

    /// Binds 127.0.0.1:`configuration.port` and returns the bound port (the chosen one when
    /// the configured port is 0). Throws when the port cannot be bound or when already started.
    public func start() async throws -> Int {
        let portReport = PortReport()
        let app = Application(
            router: makeRouter(),
            server: .http1WebSocketUpgrade(webSocketRouter: makeWebSocketRouter()),
            configuration: .init(address: .hostname("127.0.0.1", port: configuration.port), serverName: "pricealert-demo-exchange"),
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
        let dropTimer = Task { [hub, counters, faults] in await Self.dropLoop(hub: hub, stats: counters, faults: faults) }
        let started = running.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(group: group, task: task, dropTimer: dropTimer, port: port)
            return true
        }
        guard started else {
            dropTimer.cancel()
            await group.triggerGracefulShutdown()
            throw DemoExchangeError.alreadyStarted
        }
        return port
    }

    /// Closes every websocket connection, stops the prices and the listener, and waits for
    /// all of it. Safe to call twice, or without `start()`.
    public func stop() async {
        guard let running = running.withLock({ running in defer { running = nil }; return running }) else { return }
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

    /// The bound port while running.
    public var port: Int? { running.withLock { $0?.port } }

    /// Counters so far.
    public var stats: ExchangeStats { counters.snapshot }

    /// The faults in force now; `setFaults` changes them while running.
    public var currentFaults: ExchangeFaults { faults.current }

    public func setFaults(_ new: ExchangeFaults) {
        faults.set(new)
    }

    /// Closes every websocket connection now (what `dropEvery` does on its timer).
    public func dropAllConnections() {
        let closed = hub.closeAll()
        counters.update { $0.connectionsDropped += closed }
    }

    private func makeRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.add(middleware: RateLimitFault(faults: faults, stats: counters))
        let markets = ByteBuffer(string: MarketCatalog.embedded.payload)
        router.get("/futures/api/inquire/initial/market") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: markets))
        }
        router.get("/spot/api/v3.2/market_summary") { [feed] request, _ in
            feed.startIfNeeded()
            let symbol = request.uri.queryParameters["symbol"].map(String.init)
            let json = MarketSummary.json(markets: MarketCatalog.embedded.spot, board: feed.board, symbol: symbol)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        return router
    }

    private func makeWebSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let session = WebSocketSession(hub: hub, feed: feed, stats: counters)
        for path in ["/ws/futures", "/ws/spot"] {
            router.ws(RouterPath(path)) { inbound, outbound, _ in
                try await session.run(inbound: inbound, outbound: outbound)
            }
        }
        return router
    }

    /// Closes every connection each `dropEvery`; re-reads the setting every 50 ms so
    /// `setFaults` takes effect while running. The period restarts when the setting changes.
    private static func dropLoop(hub: ConnectionHub, stats: StatsCounter, faults: FaultSettings) async {
        let clock = ContinuousClock()
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
            guard let period, now - last >= period else { continue }
            last = now
            let closed = hub.closeAll()
            stats.update { $0.connectionsDropped += closed }
        }
    }
}

public enum DemoExchangeError: Error, Sendable, Equatable {
    case alreadyStarted
    /// The listener ended before it reported its port (for example, the port is in use).
    case stoppedBeforeListening
}

/// Hands the bound port (or the failure to bind) from `onServerRunning` to `start()`, once.
private final class PortReport: Sendable {
    private let state = Mutex<(result: Result<Int, any Error>?, waiter: CheckedContinuation<Int, any Error>?)>((nil, nil))

    func report(_ result: Result<Int, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Int, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
