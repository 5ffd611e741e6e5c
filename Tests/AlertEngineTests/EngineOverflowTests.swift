import Testing

@testable import AlertEngine
@testable import AlertModel

/// Cooldowns and firing times at the ends of 64 bits: a rule cache, saved state or tick file
/// may hold them, so the engine saturates instead of overflowing.
@Suite struct EngineOverflowTests {
    /// The longest cooldown a duration can spell: the pair cools down for good.
    @Test func aHugeCooldownNeverEnds() {
        let r = rule(.price(.above(100)), cooldown: 106_751_991_167 * 86_400_000)
        #expect(fireTimes([r], seconds([101, 99, 101, 102, 99, 101])) == [1_000_000])
    }

    /// A cooldown that would end past the last time there is ends at that time.
    @Test func aCooldownPastTheLastTimeEndsThere() {
        let r = rule(.price(.above(100)), cooldown: 3_600_000)
        let ticks: [(Int64, Double)] = [(.max - 10, 101), (.max - 9, 99), (.max - 5, 101), (.max - 1, 102), (.max, 102)]
        #expect(fireTimes([r], ticks) == [.max - 10, .max])
    }

    @Test func aNegativeFiringTimeCoolsDownAsUsual() {
        let r = rule(.price(.above(100)), cooldown: 60_000)
        let ticks: [(Int64, Double)] = [(.min + 1, 101), (.min + 2, 99), (.min + 3, 101), (.min + 60_001, 101)]
        #expect(fireTimes([r], ticks) == [.min + 1, .min + 60_001])
    }
}
