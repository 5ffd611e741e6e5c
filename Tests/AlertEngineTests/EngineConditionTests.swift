import Testing

@testable import AlertEngine
@testable import AlertModel

/// One test per row of the table in Docs/rules.md#conditions: when it fires, and when it re-arms (with and
/// without hysteresis). Ticks are one second apart from t = 1 000 000 ms.
@Suite("Price conditions")
struct EngineConditionTests {
    let t = seconds([0]).first!.0

    @Test func aboveFiresWhenStrictlyAboveAndRearmsAtOrBelow() {
        let r = rule(.price(.above(100)))
        // 100 is not above; 101 fires; 102 stays fired; 100 re-arms (p ≤ X); 101 fires again.
        #expect(fireTimes([r], seconds([100, 101, 102, 100, 101])) == [t + 1000, t + 4000])
    }

    @Test func aboveLevelAlreadyTrueAtFirstTickFiresAtOnce() {
        #expect(fireTimes([rule(.price(.above(100)))], seconds([150])) == [t])
    }

    @Test func aboveHysteresisNeedsPriceBelowXTimesOneMinusH() {
        let r = rule(.price(.above(100)), hysteresis: 2)
        // After firing at 101: 98.5 > 98 does not re-arm, 98 (= 100·0.98) re-arms, 101 fires.
        #expect(fireTimes([r], seconds([101, 98.5, 101, 98, 101])) == [t, t + 4000])
    }

    @Test func belowFiresWhenStrictlyBelowAndRearmsAtOrAbove() {
        let r = rule(.price(.below(100)))
        #expect(fireTimes([r], seconds([100, 99, 98, 100, 99])) == [t + 1000, t + 4000])
    }

    @Test func belowHysteresisNeedsPriceAboveXTimesOnePlusH() {
        let r = rule(.price(.below(100)), hysteresis: 1)
        #expect(fireTimes([r], seconds([99, 100.5, 99, 101, 99])) == [t, t + 4000])
    }

    @Test func crossesAboveNeedsAPreviousPriceAtOrBelow() {
        let r = rule(.price(.crossesAbove(100)))
        // First tick 105 has no previous price: no fire. 99 re-arms nothing (armed). 100 → 101 crosses.
        #expect(fireTimes([r], seconds([105, 99, 100, 101])) == [t + 3000])
    }

    @Test func crossesAboveFromExactlyXFires() {
        #expect(fireTimes([rule(.price(.crossesAbove(100)))], seconds([100, 100.01])) == [t + 1000])
    }

    @Test func crossesAboveRearmsWithHysteresis() {
        let r = rule(.price(.crossesAbove(100)), hysteresis: 5)
        // Fires 99→101; 96 > 95 keeps it disarmed; 99→101 again does not fire; 95 re-arms; 95→101 fires.
        #expect(fireTimes([r], seconds([99, 101, 96, 99, 101, 95, 101])) == [t + 1000, t + 6000])
    }

    @Test func crossesBelowNeedsAPreviousPriceAtOrAbove() {
        let r = rule(.price(.crossesBelow(100)))
        #expect(fireTimes([r], seconds([95, 101, 100, 99.5, 101, 99])) == [t + 3000, t + 5000])
    }

    @Test func crossesBelowRearmsWithHysteresis() {
        let r = rule(.price(.crossesBelow(100)), hysteresis: 10)
        // After the cross at 99: 105 < 110 does not re-arm, so 105 → 99 is silent; 111 re-arms.
        #expect(fireTimes([r], seconds([101, 99, 105, 99, 111, 99])) == [t + 1000, t + 5000])
    }

    @Test func insideIsInclusiveAndRearmsOutside() {
        let r = rule(.price(.inside(10, 20)))
        // 10 fires (L ≤ p), 20 stays, 21 re-arms, 20 fires (p ≤ H), 9 re-arms, 15 fires.
        #expect(fireTimes([r], seconds([10, 20, 21, 20, 9, 15])) == [t, t + 3000, t + 5000])
    }

    @Test func outsideIsStrictAndRearmsInside() {
        let r = rule(.price(.outside(10, 20)))
        // 10 and 20 are not outside; 21 fires; 25 stays; 20 re-arms; 9.99 fires.
        #expect(fireTimes([r], seconds([10, 20, 21, 25, 20, 9.99])) == [t + 2000, t + 5000])
    }
}
