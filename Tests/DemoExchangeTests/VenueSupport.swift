import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// One of `Tests/Fixtures/exchanges/` (documentation examples; sources in its README), parsed.
/// `.jsonc` files lose their `//` comments first.
func fixture(_ name: String) throws -> Any {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/exchanges")
    var text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    if name.hasSuffix(".jsonc") {
        text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
    }
    return try JSONSerialization.jsonObject(with: Data(text.utf8))
}

func parse(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8))
}

struct NoMessage: Error, CustomStringConvertible {
    var description: String { "the connection ended before the message expected" }
}

/// `message`, or `NoMessage` when the connection ended instead.
func text(_ message: String?) throws -> String {
    guard let message else { throw NoMessage() }
    return message
}

/// `message` as a JSON object; throws when the connection ended or it is not one.
func object(_ message: String?) throws -> [String: Any] {
    guard let object = try parse(try text(message)) as? [String: Any] else { throw NoMessage() }
    return object
}

/// Where `served` differs in shape from the documentation's `example`: every key of an example
/// object is in the served object with a value of the same JSON kind (string, number, bool,
/// object, array, null), recursively; arrays compare their first elements. Empty: same shape.
/// `maps` names objects keyed by the exchange's names (Kraken's pairs, `$.result`): each of
/// their served values has the shape of the example's first.
func shapeDifferences(example: Any, served: Any, maps: Set<String> = [], at path: String = "$") -> [String] {
    switch (example, served) {
    case (let e as [String: Any], let s as [String: Any]) where maps.contains(path):
        guard let first = e.keys.sorted().first.flatMap({ e[$0] }) else { return [] }
        guard !s.isEmpty else { return ["\(path) empty"] }
        return s.keys.sorted().flatMap { key in
            shapeDifferences(example: first, served: s[key]!, maps: maps, at: "\(path).\(key)")
        }
    case (let e as [String: Any], let s as [String: Any]):
        return e.keys.sorted().flatMap { key -> [String] in
            guard let value = s[key] else { return ["\(path).\(key) missing"] }
            return shapeDifferences(example: e[key]!, served: value, maps: maps, at: "\(path).\(key)")
        }
    case (let e as [Any], let s as [Any]):
        guard let first = e.first else { return [] }
        guard let served = s.first else { return ["\(path) empty"] }
        return shapeDifferences(example: first, served: served, maps: maps, at: "\(path)[0]")
    default:
        return kind(example) == kind(served) ? [] : ["\(path): \(kind(served)), documented \(kind(example))"]
    }
}

/// Expects `served` to have the shape of the documentation example `name` (see `shapeDifferences`).
func expectShape(
    of name: String, _ served: Any, maps: Set<String> = [], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let differences = shapeDifferences(example: try fixture(name), served: served, maps: maps)
    #expect(differences.isEmpty, "\(name): \(differences)", sourceLocation: sourceLocation)
}

private func kind(_ value: Any) -> String {
    switch value {
    case is String: return "string"
    case is [String: Any]: return "object"
    case is [Any]: return "array"
    case is NSNull: return "null"
    case let n as NSNumber:
        return String(cString: n.objCType) == "c" ? "bool" : "number"
    default: return "\(type(of: value))"
    }
}

/// A look-alike server for keep-alive tests: no price steps (an empty replay), the keep-alive
/// timers on `clock`, and the rules in `keepAlive`.
func quietExchange(clock: ManualClock, keepAlive: KeepAliveSettings = KeepAliveSettings()) -> ExchangeConfiguration {
    ExchangeConfiguration(port: 0, prices: .replay(ticks: [], speed: 0), clock: clock, keepAlive: keepAlive)
}

/// Moves `clock` on one second at a time up to `offset`, each time only once `sleepers` sleeps
/// wait on it: the exchange's fault timer and one keep-alive timer per open connection. A
/// connection's timer that closed it does not sleep again, so this waits (and the test times
/// out) if a connection closes before `offset`.
func advance(_ clock: ManualClock, to offset: Duration, sleepers: Int) async throws {
    while clock.now.offset < offset {
        while clock.deadlines.count < sleepers {
            try await Task.sleep(for: .milliseconds(2))
        }
        clock.advance(by: .seconds(1))
    }
}
