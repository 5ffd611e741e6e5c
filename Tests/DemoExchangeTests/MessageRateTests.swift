import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// The look-alikes' limits on the messages a client sends, timed on the exchange's clock (a
/// `ManualClock` here, so a second is a second of the test's choosing): Binance takes 5 a second
/// on a connection and Coinbase 8 (Docs/exchange.md#websockets); one more closes the connection.
@Suite("look-alike message rates")
struct MessageRateTests {
    /// Sends `count` messages at once (on the exchange's clock) and expects an answer to each.
    static func sendAnswered(_ socket: inout RawWebSocket, _ message: String, count: Int) async throws {
        for _ in 0..<count {
            try await socket.send(message)
            #expect(try await socket.nextText() != nil)
        }
    }

    /// After the answered ones, the next message closes the connection with 1008.
    static func expectClosedOnNext(_ socket: inout RawWebSocket, _ message: String) async throws {
        try await socket.send(message)
        while true {
            let event = try await socket.next()
            if case .ping = event { continue }
            guard case .close(let code, let reason) = event else {
                Issue.record("expected a close frame, got \(event)")
                return
            }
            #expect(code == 1008)
            #expect(reason.contains("too many messages"))
            return
        }
    }

    @Test("Binance: 5 messages in a second are answered, a sixth closes the connection; 5 a second go on")
    func binance() async throws {
        let clock = ManualClock()
        let list = #"{"method":"LIST_SUBSCRIPTIONS","id":1}"#
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws", answerPings: true) { socket in
                try await Self.sendAnswered(&socket, list, count: 5)
                try await Self.expectClosedOnNext(&socket, list)
            }
            try await RawWebSocket.connect(port: port, path: "/ws", answerPings: true) { socket in
                for _ in 1...3 {
                    try await Self.sendAnswered(&socket, list, count: 5)
                    // Both connections' keep-alive timers and the fault timer sleep on the clock.
                    try await advance(clock, to: clock.now.offset + .seconds(1), sleepers: 2)
                }
                try await Self.sendAnswered(&socket, list, count: 1)
            }
        }
    }

    @Test("Coinbase: 8 messages in a second are answered, a ninth closes the connection")
    func coinbase() async throws {
        let clock = ManualClock()
        let heartbeats = #"{"type":"subscribe","channel":"heartbeats"}"#
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/", answerPings: true) { socket in
                try await Self.sendAnswered(&socket, heartbeats, count: 8)
                try await Self.expectClosedOnNext(&socket, heartbeats)
            }
        }
    }
}
