import Synchronization

/// The open websocket connections, BTSE's and the look-alikes', and which of them are subscribed
/// (to `coinIndex`, or to at least one market of a look-alike).
///
/// Each connection gets an unbounded stream of outgoing messages that its own writer drains,
/// so a broadcast never waits for a slow client and frames reach each client in order.
final class ConnectionHub: Sendable {
    enum Outgoing: Sendable {
        case control(String)
        /// A BTSE `coinIndex` frame (BTSE connections only).
        case price(String)
        /// A price step, which each look-alike connection renders in its exchange's shape.
        case update(BoardUpdate)
        case invalid(String)
        /// A websocket ping frame with this payload (look-alikes).
        case ping([UInt8])
        /// The notice an exchange sends before it shuts down (Binance's `serverShutdown`).
        case shutdownNotice
        /// Close the connection (fault injection or server stop).
        case close
        /// Close with this code and reason (a look-alike's keep-alive rule).
        case closeWith(code: UInt16, reason: String)
        /// Reset the TCP connection: no close frame.
        case reset
    }

    enum Kind: Sendable {
        case btse, venue
    }

    private struct Connection: Sendable {
        let continuation: AsyncStream<Outgoing>.Continuation
        let kind: Kind
        var subscribed = false
    }

    private struct State {
        var connections: [Int: Connection] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Registers a connection; its messages arrive on the returned stream.
    func open(kind: Kind = .btse) -> (id: Int, outgoing: AsyncStream<Outgoing>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        let id = state.withLock { state in
            state.nextID += 1
            state.connections[state.nextID] = Connection(continuation: continuation, kind: kind)
            return state.nextID
        }
        return (id, stream)
    }

    /// Forgets a connection and ends its stream.
    func remove(_ id: Int) {
        state.withLock { $0.connections.removeValue(forKey: id) }?.continuation.finish()
    }

    func send(_ message: Outgoing, to id: Int) {
        _ = state.withLock { $0.connections[id] }?.continuation.yield(message)
    }

    /// Returns whether the connection was not subscribed before.
    func setSubscribed(_ id: Int, _ subscribed: Bool) -> Bool {
        state.withLock { state in
            guard let before = state.connections[id]?.subscribed else { return false }
            state.connections[id]?.subscribed = subscribed
            return before != subscribed
        }
    }

    /// Runs `answer` (a connection's reply to a client's message), queues the reply's messages
    /// and sets whether the connection is subscribed, all under the lock `broadcast` takes. A
    /// price step is then either on the board the reply's snapshot was read from, or queued
    /// after the reply: as on a real exchange, no step falls between a subscription's snapshot
    /// and its updates. Returns the reply and whether the connection became subscribed.
    func answer(_ id: Int, _ answer: () -> VenueReply) -> (reply: VenueReply, newlySubscribed: Bool) {
        state.withLock { state in
            let reply = answer()
            guard let connection = state.connections[id] else { return (reply, false) }
            for text in reply.messages { connection.continuation.yield(.control(text)) }
            guard let subscribed = reply.subscribed, subscribed != connection.subscribed else { return (reply, false) }
            state.connections[id]?.subscribed = subscribed
            return (reply, subscribed)
        }
    }

    /// Queues `message` for every subscribed connection that takes it: `coinIndex` frames go
    /// to BTSE connections, price steps to look-alike connections, the rest to both.
    func broadcast(_ message: Outgoing) {
        let kind: Kind? =
            switch message {
            case .price: .btse
            case .update: .venue
            default: nil
            }
        state.withLock { state in
            for connection in state.connections.values where connection.subscribed {
                if let kind, connection.kind != kind { continue }
                connection.continuation.yield(message)
            }
        }
    }

    /// Queues `message` for every open connection; returns how many were open.
    @discardableResult
    func sendAll(_ message: Outgoing) -> Int {
        state.withLock { state in
            for connection in state.connections.values { connection.continuation.yield(message) }
            return state.connections.count
        }
    }

    /// Asks every connection to close; returns how many were open.
    @discardableResult
    func closeAll() -> Int {
        sendAll(.close)
    }
}
