import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The websocket router's request context: Hummingbird's, plus the connection's channel, which
/// a look-alike needs to see pong frames and to reset the connection.
struct ExchangeRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

extension Request {
    /// The query as a dictionary; a repeated key's values joined with `,`.
    var queryDictionary: [String: String] {
        var query: [String: String] = [:]
        for (key, value) in uri.queryParameters {
            let k = String(key)
            query[k] = query[k].map { $0 + "," + String(value) } ?? String(value)
        }
        return query
    }
}

/// The names of a route's path parameters: `{product_id}` → `product_id`.
func parameterNames(_ path: String) -> [String] {
    path.split(separator: "/").compactMap { part in
        part.hasPrefix("{") && part.hasSuffix("}") ? String(part.dropFirst().dropLast()) : nil
    }
}
