/// One point of a chart: epoch milliseconds and a price.
struct PricePoint: Equatable {
    var time: Int64
    var price: Double
}

/// An event drawn on a chart.
struct EventMarker {
    var point: PricePoint
    var kind: ReportKind
    var rule: String
    /// Cut to `ReplayReport.Limits.messageCharacters`.
    var message: String
}

/// A symbol's prices and events over the replay, in a fixed number of time slots whatever the
/// stream's length: when a tick falls past the last slot, slots are merged two by two and
/// their width doubles. A slot keeps its first, lowest, highest and last price, so a spike
/// survives downsampling, and its first `markersPerSlot` events with the number of the others.
struct SymbolTrack {
    struct Slot {
        var first: PricePoint
        var low: PricePoint
        var high: PricePoint
        var last: PricePoint
        var markers: [EventMarker] = []
        /// Events of this slot beyond `markers`.
        var unmarked = 0

        init(_ point: PricePoint) {
            first = point
            low = point
            high = point
            last = point
        }

        /// A slot holding only events has no price of its own until a tick comes.
        static func merged(_ a: Slot, _ b: Slot, markersPerSlot: Int) -> Slot {
            var slot = a
            slot.add(b.first)
            slot.add(b.low)
            slot.add(b.high)
            slot.add(b.last)
            let markers = a.markers + b.markers
            slot.markers = Array(markers.prefix(markersPerSlot))
            slot.unmarked = a.unmarked + b.unmarked + markers.count - slot.markers.count
            return slot
        }

        mutating func add(_ point: PricePoint) {
            if point.time < first.time { first = point }
            if point.time >= last.time { last = point }
            if point.price < low.price { low = point }
            if point.price > high.price { high = point }
        }
    }

    let slotCount: Int
    let markersPerSlot: Int
    private(set) var origin: Int64?
    private(set) var width: Int64 = 1
    private(set) var slots: [Slot?]
    private(set) var ticks = 0
    private(set) var events = 0

    init(slotCount: Int, markersPerSlot: Int) {
        self.slotCount = slotCount
        self.markersPerSlot = markersPerSlot
        slots = Array(repeating: nil, count: slotCount)
    }

    mutating func add(tick point: PricePoint) {
        ticks += 1
        let index = slotIndex(point.time)
        if slots[index] == nil { slots[index] = Slot(point) } else { slots[index]!.add(point) }
    }

    /// The event's own point joins the slot's prices, so the line passes through its marker.
    mutating func add(event marker: EventMarker) {
        events += 1
        let index = slotIndex(marker.point.time)
        if slots[index] == nil { slots[index] = Slot(marker.point) } else { slots[index]!.add(marker.point) }
        if slots[index]!.markers.count < markersPerSlot {
            slots[index]!.markers.append(marker)
        } else {
            slots[index]!.unmarked += 1
        }
    }

    /// The slot of `time`, widening the slots until it fits. A time before the first one seen
    /// (events of a symbol without ticks can come in any order) goes to the first slot.
    private mutating func slotIndex(_ time: Int64) -> Int {
        guard let origin else {
            origin = time
            return 0
        }
        guard time > origin else { return 0 }
        let offset = UInt64(time - origin)
        while offset / UInt64(width) >= UInt64(slotCount) {
            for i in 0..<(slotCount / 2) {
                switch (slots[2 * i], slots[2 * i + 1]) {
                case (let a?, let b?): slots[i] = Slot.merged(a, b, markersPerSlot: markersPerSlot)
                case (let a?, nil): slots[i] = a
                case (nil, let b): slots[i] = b
                }
            }
            for i in (slotCount / 2)..<slotCount { slots[i] = nil }
            width *= 2
        }
        return Int(offset / UInt64(width))
    }

    /// The line to draw: each slot's kept prices and its markers' points, in time order.
    var line: [PricePoint] {
        var points: [PricePoint] = []
        for case let slot? in slots {
            var inSlot = [slot.first, slot.low, slot.high, slot.last] + slot.markers.map(\.point)
            inSlot.sort { $0.time < $1.time }
            for point in inSlot where points.last != point { points.append(point) }
        }
        return points
    }

    var markers: [(marker: EventMarker, othersInSlot: Int)] {
        slots.compactMap { $0 }.flatMap { slot in
            slot.markers.enumerated().map { i, marker in (marker, i == slot.markers.count - 1 ? slot.unmarked : 0) }
        }
    }
}
