import DemoExchange
import Foundation
import Logging
import Synchronization
import WSClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Starts a real server on 127.0.0.1 port 0, runs `body` with it and its port, and always stops it.
func withExchange<T: Sendable>(
    _ configuration: ExchangeConfiguration = ExchangeConfiguration(port: 0),
    _ body: @escaping @Sendable (DemoExchangeServer, Int) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    let server = DemoExchangeServer(configuration: configuration)
    let port = try await server.start()
    do {
        let result = try await withTimeout(.seconds(300)) { try await body(server, port) }
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String { "timed out" }
}

/// Runs `body`, failing with `TimedOut` when it takes longer than `limit`, so no test hangs.
func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A REST response from the exchange.
struct RESTReply {
    var status: Int
    var headers: [String: String]
    var body: Data
}

func get(_ port: Int, _ path: String) async throws -> RESTReply {
    let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
    let (data, response) = try await URLSession.shared.data(from: url)
    let http = response as! HTTPURLResponse
    var headers: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        headers[String(describing: name).lowercased()] = String(describing: value)
    }
    return RESTReply(status: http.statusCode, headers: headers, body: data)
}

/// The text messages a websocket client receives, in order.
struct Messages {
    var iterator: WebSocketInboundMessageStream.AsyncIterator

    /// The next text message, or nil when the connection ended.
    mutating func next() async throws -> String? {
        while let message = try await iterator.next() {
            if case .text(let text) = message { return text }
        }
        return nil
    }

    /// Skips messages until one satisfies `match`; nil when the connection ended first.
    mutating func next(where match: (String) -> Bool) async throws -> String? {
        while let text = try await next() {
            if match(text) { return text }
        }
        return nil
    }
}

/// Connects a real swift-websocket client to the exchange and runs `script`, which returns
/// when done (the client then closes). Returns what `script` returns.
func withClient<T: Sendable>(
    port: Int, path: String = "/ws/futures",
    _ script: @escaping @Sendable (inout Messages, WebSocketOutboundWriter) async throws -> T
)
    async throws -> T
{
    let result = ResultBox<T>()
    var logger = Logger(label: "test-client")
    logger.logLevel = .warning
    try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)\(path)", logger: logger) { inbound, outbound, _ in
        var messages = Messages(iterator: inbound.messages(maxSize: 1 << 20).makeAsyncIterator())
        result.set(try await script(&messages, outbound))
    }
    guard let value = result.get() else { throw TimedOut() }
    return value
}

final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    func set(_ new: T) { value.withLock { $0 = new } }
    func get() -> T? { value.withLock { $0 } }
}

let subscribeCoinIndex = #"{"op":"subscribe","args":["coinIndex"]}"#

func isCoinIndex(_ text: String) -> Bool {
    text.hasPrefix(#"{"topic":"coinIndex""#)
}

/// The `data` object of a coinIndex frame, or nil when the frame is not a valid one.
func coinIndexData(_ text: String) -> [String: [String: Any]]? {
    guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
        object["topic"] as? String == "coinIndex"
    else { return nil }
    return object["data"] as? [String: [String: Any]]
}

/// A look-alike whose prices walk on the real clock. The exchanges' deadlines on what a client
/// sends (Coinbase's subscribe within 5 s, Bybit's ping, OKX's idle limit, Binance's pong) are
/// stretched to 10 minutes: on two busy cores a test's next message can come later than 5 s,
/// and each deadline has its own test on a manual clock (`quietExchange`).
func walk(
    seed: UInt64 = 7, interval: Duration = .milliseconds(100), faults: ExchangeFaults = ExchangeFaults()
)
    -> ExchangeConfiguration
{
    ExchangeConfiguration(
        port: 0, prices: .randomWalk(seed: seed, interval: interval), faults: faults,
        keepAlive: KeepAliveSettings(
            binancePongWithin: .seconds(600), coinbaseSubscribeWithin: .seconds(600),
            bybitPingWithin: .seconds(600), okxIdleLimit: .seconds(600)))
}
