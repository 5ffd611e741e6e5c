import AlertModel
import JSONTokens

/// The outer object of BTSE and Poloniex v3 websocket frames: a name member (`topic` or
/// `channel`), maybe an `event`, and `data` holding the entries. Both sources decide the same
/// way: any `event` frame is `.control` (acks, pongs, errors), a frame named otherwise is
/// `.control` (another subscription, not ours), and a frame of ours needs `data` of the
/// expected type.
struct FrameEnvelope {
    /// nil: no name member; false: named, but not the name we parse.
    var isOurs: Bool?
    var hasEvent = false
    /// The JSON type of `data` as found (`an object`, `null`, …); nil when absent.
    var dataType: String?

    /// The frame's meaning, given the ticks read from `data` (when it had the expected type).
    func result(_ context: String, nameKey: String, expectedData: String, ticks: [Tick], skipped: Int) -> ParsedFrame {
        if hasEvent { return ParsedFrame(.control) }
        switch isOurs {
        case nil: return ParsedFrame(.invalid(#"\#(context): no "\#(nameKey)" and no "event""#))
        case false?: return ParsedFrame(.control)
        case true?: break
        }
        guard let dataType else { return ParsedFrame(.invalid(#"\#(context): no "data""#)) }
        guard dataType == expectedData else { return ParsedFrame(.invalid(#"\#(context): "data" is \#(dataType)"#)) }
        return ParsedFrame(.ticks(ticks), skipped: skipped)
    }
}

extension JSONTokenizer {
    /// Reads a whole frame object (and checks nothing follows it). `readData` is called with
    /// the cursor on `data`'s opening byte when that byte is `dataOpen`, and must consume the
    /// value; other `data` values are skipped and reported through `dataType`.
    mutating func frameEnvelope(
        nameKey: StaticString, name: StaticString, dataOpen: UInt8,
        readData: (inout JSONTokenizer) throws(TickLineError) -> Void
    )
        throws(TickLineError) -> FrameEnvelope
    {
        var envelope = FrameEnvelope()
        skipWhitespace()
        if try enterContainer(0x7B, close: 0x7D) {
            repeat {
                let (key, _) = try memberKey()
                if matches(key, nameKey) {
                    if peek == 0x22 {
                        let (value, _) = try scanString()
                        envelope.isOurs = matches(value, name)
                    } else {
                        try skipValue()
                        envelope.isOurs = false
                    }
                } else if matches(key, "event") {
                    envelope.hasEvent = true
                    try skipValue()
                } else if matches(key, "data") {
                    envelope.dataType = typeNameAtCursor
                    if peek == dataOpen {
                        try readData(&self)
                    } else {
                        try skipValue()
                    }
                } else {
                    try skipValue()
                }
            } while try nextInContainer(close: 0x7D)
        }
        skipWhitespace()
        guard atEnd else { throw .syntax("unexpected text after the object", at: offset) }
        return envelope
    }

    /// The JSON type of the value starting at the cursor, as reasons name it.
    var typeNameAtCursor: String {
        switch peek {
        case 0x7B: "an object"
        case 0x5B: "an array"
        case 0x22: "a string"
        case 0x74, 0x66: "a boolean"
        case 0x6E: "null"
        default: "a number"
        }
    }
}
