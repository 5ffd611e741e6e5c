import Testing

@testable import AlertEngine
@testable import AlertModel

/// A key's minute `Buckets` keep what the longest change window needs and little more: a 24 h
/// history holds its 1 441 minutes and at most one trim batch beside them, in arrays grown a
/// batch (or an eighth) at a time, not doubled (a daemon keeps one such history per symbol).
@Suite struct MinuteHistoryTests {
    static let day: Int64 = 1440
    /// Entries a full history may hold, and the room its arrays may have for them.
    static let most = Int(day) + 2 + Buckets.trimBatch
    static let room = most + most / 8 + Buckets.trimBatch

    @Test func aLiveHistoryStaysNearItsWindow() {
        var history = Buckets()
        for minute in Int64(0)..<10_000 {
            history.record(key: minute, price: Double(minute), latest: true, keep: Self.day)
            #expect(history.keys.count <= Self.most)
        }
        #expect(history.keys.capacity <= Self.room)
        #expect(history.last.capacity <= Self.room)
        // Every minute a window can ask for is still there, and nothing older is.
        #expect(history.price(atOrBefore: 9_999 - Self.day) == Double(9_999 - Self.day))
        #expect(history.price(atOrBefore: 9_998) == 9_998)
        #expect(history.price(atOrBefore: 9_999) == 9_999)
        #expect(history.price(atOrBefore: 9_999 - Self.day - 300) == nil)
    }

    /// A restored history (arrays of their exact size) grows by a batch for the minutes after
    /// it, not to twice its size.
    @Test func aRestoredHistoryDoesNotDouble() {
        var minutes = Array(Int64(0)...Self.day)
        var prices = minutes.map(Double.init)
        var none: [Double] = []
        var alsoNone: [Double] = []
        var history = Buckets(taking: &minutes, last: &prices, high: &none, low: &alsoNone, keepsExtremes: false)
        for minute in (Self.day + 1)..<(Self.day + 2_000) {
            history.record(key: minute, price: Double(minute), latest: true, keep: Self.day)
        }
        #expect(history.keys.capacity <= Self.room)
        #expect(history.price(atOrBefore: Self.day + 1_999 - Self.day) == Double(Self.day + 1_999 - Self.day))
        #expect(history.entries.keys.count == Int(Self.day) + 1)
    }
}
