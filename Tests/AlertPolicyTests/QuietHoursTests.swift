import AlertModel
import Testing

@testable import AlertPolicy

/// Europe/Berlin is UTC+1 in winter (CET) and UTC+2 in summer (CEST); in 2026 the clocks go
/// forward at 02:00 CET on Sunday 29 March (01:00Z) and back at 03:00 CEST on Sunday
/// 25 October (01:00Z). Expected instants below are local times minus the offset in force.
@Suite struct QuietHoursTests {
    static let night = QuietWindowSpec(from: 22 * 60, to: 7 * 60, zone: "Europe/Berlin")

    @Test func aNightWindowAcrossSpringForwardIsSevenHoursLong() throws {
        let hours = try QuietHours([Self.night])
        // Saturday 22:00 CET = 21:00Z; Sunday 07:00 CEST = 05:00Z.
        let expected = QuietInterval(start: utc("2026-03-28T21:00:00.000Z"), end: utc("2026-03-29T05:00:00.000Z"))
        #expect(hours.interval(containing: utc("2026-03-28T21:00:00.000Z")) == expected)
        #expect(hours.interval(containing: utc("2026-03-29T04:30:00.000Z")) == expected, "06:30 CEST is quiet")
        #expect(hours.interval(containing: utc("2026-03-29T05:00:00.000Z")) == nil, "07:00 CEST is the end")
        #expect(hours.interval(containing: utc("2026-03-29T05:30:00.000Z")) == nil, "07:30 CEST, though 06:30 in CET")
        #expect(hours.interval(containing: utc("2026-03-28T20:59:59.999Z")) == nil)
    }

    @Test func aNightWindowAcrossFallBackIsNineHoursLong() throws {
        let hours = try QuietHours([Self.night])
        // Saturday 22:00 CEST = 20:00Z; Sunday 07:00 CET = 06:00Z.
        let expected = QuietInterval(start: utc("2026-10-24T20:00:00.000Z"), end: utc("2026-10-25T06:00:00.000Z"))
        #expect(
            hours.interval(containing: utc("2026-10-25T05:30:00.000Z")) == expected, "06:30 CET, though 07:30 in CEST")
        #expect(hours.interval(containing: utc("2026-10-25T06:00:00.000Z")) == nil)
    }

    @Test func aWindowStartingInTheSkippedHourStartsWhenTheClocksJump() throws {
        // 02:30 does not exist on 29 March in Berlin: the window starts at the jump, 01:00Z.
        let hours = try QuietHours([QuietWindowSpec(from: 2 * 60 + 30, to: 3 * 60 + 30, zone: "Europe/Berlin")])
        let interval = hours.interval(containing: utc("2026-03-29T01:10:00.000Z"))
        #expect(interval == QuietInterval(start: utc("2026-03-29T01:00:00.000Z"), end: utc("2026-03-29T01:30:00.000Z")))
        #expect(hours.interval(containing: utc("2026-03-29T00:59:00.000Z")) == nil)
    }

    @Test func aRepeatedLocalTimeIsItsFirstPass() throws {
        // 02:30 happens twice on 25 October: at 00:30Z (CEST) and 01:30Z (CET); 02:15–02:45 is the first.
        let hours = try QuietHours([QuietWindowSpec(from: 2 * 60 + 15, to: 2 * 60 + 45, zone: "Europe/Berlin")])
        #expect(
            hours.interval(containing: utc("2026-10-25T00:30:00.000Z"))
                == QuietInterval(start: utc("2026-10-25T00:15:00.000Z"), end: utc("2026-10-25T00:45:00.000Z")))
    }

    @Test func theDayIsTheDayTheWindowStarts() throws {
        // Friday nights only: Saturday 03:00 is in Friday's window, Sunday 03:00 is in none.
        let hours = try QuietHours([QuietWindowSpec(days: [.fri], from: 22 * 60, to: 7 * 60, zone: "UTC")])
        #expect(hours.interval(containing: utc("2026-11-21T03:00:00.000Z")) != nil) // Saturday
        #expect(hours.interval(containing: utc("2026-11-22T03:00:00.000Z")) == nil) // Sunday
        #expect(hours.interval(containing: utc("2026-11-20T23:00:00.000Z")) != nil) // Friday
        #expect(hours.interval(containing: utc("2026-11-20T21:59:00.000Z")) == nil)
    }

    @Test func equalTimesMakeAWholeDay() throws {
        let hours = try QuietHours([QuietWindowSpec(days: [.sun], from: 0, to: 0, zone: "UTC")])
        #expect(
            hours.interval(containing: utc("2026-11-22T12:00:00.000Z"))
                == QuietInterval(start: utc("2026-11-22T00:00:00.000Z"), end: utc("2026-11-23T00:00:00.000Z")))
        #expect(hours.interval(containing: utc("2026-11-23T00:00:00.000Z")) == nil)
    }

    @Test func unknownZonesAreRefused() {
        #expect(QuietHours.zone(named: "Europe/Berlin") != nil)
        #expect(QuietHours.zone(named: "UTC") != nil)
        #expect(QuietHours.zone(named: "Europe/Berlln") == nil)
        #expect(QuietHours.zone(named: "+02:00") == nil)
        #expect(throws: UnknownZone(name: "Mars/Olympus")) {
            try QuietHours([QuietWindowSpec(from: 0, to: 60, zone: "Mars/Olympus")])
        }
    }

    /// Hold: everything in one night leaves as one held digest at the first event after it;
    /// drop: it is dropped and counted; what is outside passes.
    @Test(arguments: [QuietAction.hold, .drop])
    func holdAndDropAcrossSpringForward(action: QuietAction) throws {
        let sink = SinkDefinition(
            name: "chat", kind: .stdout(format: .json),
            policy: SinkPolicy(quiet: [Self.night], quietAction: action))
        var pipeline = try PolicyPipeline(sinks: [sink])
        let times = [
            "2026-03-28T20:59:00.000Z", "2026-03-28T21:00:00.000Z", "2026-03-29T01:30:00.000Z",
            "2026-03-29T04:59:59.999Z", "2026-03-29T05:00:00.000Z", "2026-03-29T06:00:00.000Z"
        ].map(utc)
        let events = times.enumerated().map { alert("r\($0.offset)", at: $0.element) }
        let hours = try QuietHours([Self.night])
        let quiet = events.filter { hours.interval(containing: $0.time) != nil }.map(\.id)
        #expect(quiet.count == 3)
        var decisions: [PolicyDecision] = []
        for event in events { decisions += pipeline.receive(PolicyEvent(alert: event)) }
        decisions += pipeline.finish()
        let loud = events.map(\.id).filter { !quiet.contains($0) }
        switch action {
        case .hold:
            let out = deliveries(decisions)
            // Before the window, then the held digest (released by the 05:00Z event), then the rest.
            #expect(ids(out) == [[loud[0]], quiet, [loud[1]], [loud[2]]])
            #expect(out[1].held)
            #expect(out[1].id == "digest:chat:\(quiet[0])")
            #expect(decisions.filter { if case .held = $0 { return true } else { return false } }.count == 3)
        case .drop:
            #expect(ids(deliveries(decisions)) == loud.map { [$0] })
            #expect(
                decisions.compactMap { if case .quietDropped(_, let id) = $0 { return id } else { return nil } }
                    == quiet)
        }
    }

    @Test func theWallClockEndsAHeldWindowThatNoEventEnds() throws {
        let sink = SinkDefinition(name: "chat", kind: .stdout(format: .json), policy: SinkPolicy(quiet: [Self.night]))
        var pipeline = try PolicyPipeline(sinks: [sink])
        for time in ["2026-03-28T22:00:00.000Z", "2026-03-28T23:00:00.000Z"].map(utc) {
            #expect(deliveries(pipeline.receive(PolicyEvent(alert: alert("r", at: time)))).isEmpty)
        }
        #expect(pipeline.close(wallTime: utc("2026-03-29T04:59:59.999Z")).isEmpty)
        let out = deliveries(pipeline.close(wallTime: utc("2026-03-29T05:00:00.000Z")))
        #expect(out.count == 1 && out[0].events.count == 2 && out[0].held)
        #expect(pipeline.finish().isEmpty)
    }
}
