import AlertHTTP
import AlertModel
import Platform
import Synchronization

/// Values a source learns from one request and uses in another (BTSE's 24 h figures, Poloniex
/// legacy pair ids), shared between the feed's tasks.
final class SharedBox<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ initial: Value) {
        value = Mutex(initial)
    }

    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    func get() -> Value { value.withLock { $0 } }
    func update<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { value.withLock { body(&$0) } }
}

extension HTTPClient {
    /// GETs `url` and decodes it with `decode`, turning a bad payload into a `SourceError` that
    /// names the URL.
    func fetch<T>(
        _ url: String, headers: [(name: String, value: String)] = [],
        decode: ([UInt8]) -> Result<T, FeedPayloadError>
    ) async throws -> T {
        let body = try await fetch(HTTPRequest(url: url, headers: headers))
        switch decode(body) {
        case .success(let value): return value
        case .failure(let error): throw SourceError(url: Endpoint.display(url), reason: error.reason)
        }
    }
}

extension FeedFrame {
    /// The ticks of a snapshot response, or a `SourceError` naming `url`.
    func ticks(from url: String) throws -> [Tick] {
        switch self {
        case .ticks(let ticks): return ticks
        case .control: return []
        case .invalid(let reason): throw SourceError(url: Endpoint.display(url), reason: reason)
        }
    }
}

extension Environment {
    /// `[(name, value)]` when the variable is set and not empty; API keys stay out of files.
    static func header(_ name: String, from variable: String) -> [(name: String, value: String)] {
        guard let value = Environment.value(variable), !value.isEmpty else { return [] }
        return [(name, value)]
    }
}
