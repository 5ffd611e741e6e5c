import Synchronization

/// The open websocket connections and which of them are subscribed to `coinIndex`.
///
/// Each connection gets an unbounded stream of outgoing messages that its own writer drains,
/// so a broadcast never waits for a slow client and frames reach each client in order.
final class ConnectionHub: Sendable {
    enum Outgoing: Sendable, Equatable {
        case control(String)
        case price(String)
        case invalid(String)
        /// Close the connection (fault injection or server stop).
        case close
    }

    private struct Connection: Sendable {
        let continuation: AsyncStream<Outgoing>.Continuation
        var subscribed = false
    }

    private struct State {
        var connections: [Int: Connection] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Registers a connection; its messages arrive on the returned stream.
    func open() -> (id: Int, outgoing: AsyncStream<Outgoing>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        let id = state.withLock { state in
            state.nextID += 1
            state.connections[state.nextID] = Connection(continuation: continuation)
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

    /// Queues `message` for every subscribed connection.
    func broadcast(_ message: Outgoing) {
        state.withLock { state in
            for connection in state.connections.values where connection.subscribed {
                connection.continuation.yield(message)
            }
        }
    }

    /// Asks every connection to close; returns how many were open.
    @discardableResult
    func closeAll() -> Int {
        state.withLock { state in
            for connection in state.connections.values { connection.continuation.yield(.close) }
            return state.connections.count
        }
    }
}
