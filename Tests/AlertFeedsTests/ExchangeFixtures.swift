import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

/// The bytes of one file in `Tests/Fixtures/exchanges/` (sources in `Tests/Fixtures/README.md`).
/// `.jsonc` files keep their documentation comments; `exchangeFixture` strips `//` comments
/// (none of them has `//` inside a string), so the rest is the exchange's JSON as published.
func exchangeFixture(_ name: String) throws -> [UInt8] {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/exchanges")
    let data = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    guard name.hasSuffix(".jsonc") else { return data }
    let text = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map {
        line in
        line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
    }.joined(separator: "\n")
    return Array(text.utf8)
}

/// The ticks of an exchange frame and its skipped count, or nil when it is not `.ticks`.
func exchangeTicks(_ frame: ExchangeFrame) -> (ticks: [ExchangeTick], skipped: Int)? {
    if case .ticks(let ticks, let skipped) = frame { return (ticks, skipped) }
    return nil
}

/// The reason of a `.dropped` frame, or nil.
func droppedReason(_ frame: ExchangeFrame) -> String? {
    if case .dropped(let reason) = frame { return reason }
    return nil
}

/// `(a - b)/b` within 1e-12, for figures computed from decimal strings.
func close(_ a: Double?, _ b: Double) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= 1e-12 * max(1, abs(b))
}

/// The subscribe messages parse as JSON objects (our own messages go through our reader too).
func isJSONObject(_ text: String) -> Bool {
    if case .success(let json) = FeedJSON.parse(Array(text.utf8)), json.members != nil { return true }
    return false
}
