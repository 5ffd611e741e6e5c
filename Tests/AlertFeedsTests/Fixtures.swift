import AlertFeeds
import AlertModel
import Foundation

/// `Tests/Fixtures` of this repository (its README names each file's source), found from this
/// file's path (`<repo>/Tests/AlertFeedsTests/Fixtures.swift`): a clone needs nothing beside it.
let fixturesFolder: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures").path

/// The bytes of one fixture file.
func fixtureBytes(_ name: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: fixturesFolder).appendingPathComponent(name)
    return Array(try Data(contentsOf: url))
}

/// The non-empty lines of a JSON Lines fixture, as bytes.
func fixtureLines(_ name: String) throws -> [[UInt8]] {
    try fixtureBytes(name).split(separator: 0x0A).map(Array.init).filter { !$0.isEmpty }
}

/// `text` as the bytes of a frame.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The ticks of a frame, or nil when it is not `.ticks`.
func ticks(_ frame: FeedFrame) -> [Tick]? {
    if case .ticks(let t) = frame { return t }
    return nil
}

/// The reason of an `.invalid` frame, or nil.
func invalidReason(_ frame: FeedFrame) -> String? {
    if case .invalid(let reason) = frame { return reason }
    return nil
}
