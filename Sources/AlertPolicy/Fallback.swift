import AlertModel

/// The fallback stage (Docs/sinks.md#fallback): where a sink's dead letters go next.
public struct FallbackRoutes: Sendable, Equatable {
    /// sink → its `fallback`.
    public let routes: [String: String]

    public init(_ routes: [String: String]) {
        self.routes = routes
    }

    public init(_ sinks: [SinkDefinition]) {
        var routes: [String: String] = [:]
        for sink in sinks { if let fallback = sink.policy.fallback { routes[sink.name] = fallback } }
        self.init(routes)
    }

    /// A chain that comes back to where it started, as the names in order with the first
    /// repeated at the end (`a → b → a`); nil when there is none. Looks from each sink in name
    /// order, so the same routes always report the same cycle.
    public static func cycle(in routes: [String: String]) -> [String]? {
        for start in routes.keys.sorted() {
            var path = [start]
            var current = start
            while let next = routes[current] {
                if let index = path.firstIndex(of: next) {
                    // A loop that `start` only leads into is reported from a sink on it.
                    if index == 0 { return path + [next] }
                    break
                }
                path.append(next)
                current = next
            }
        }
        return nil
    }

    /// Why a delivery failed for good.
    public enum Failure: Sendable, Equatable {
        /// The sink answered that retrying cannot help (e.g. HTTP 4xx other than 408/429).
        case permanent
        /// It may work later; it is retried until `maxAge`.
        case temporary
    }

    public enum Decision: Sendable, Equatable {
        /// Try again on the same sink.
        case retry
        /// A dead letter on `sink`, put in the outbox for `fallback` with the same id.
        case fallback(String)
        /// A dead letter with nowhere else to go.
        case deadLetter
    }

    /// What happens to a delivery to `sink` made at `createdAt` that failed with `failure` at
    /// `now`: a temporary failure is retried until the delivery is `maxAge` old (the retry
    /// stage's rule); a dead letter goes to the sink's fallback when it has one.
    public func decide(sink: String, failure: Failure, createdAt: Int64, now: Int64, maxAge: Int64) -> Decision {
        if failure == .temporary, now - createdAt < maxAge { return .retry }
        return routes[sink].map(Decision.fallback) ?? .deadLetter
    }
}
