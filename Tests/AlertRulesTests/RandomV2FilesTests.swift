import AlertModel
import AlertSinks
import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertRules

/// Every file the v2 test streams use (`RandomRulesV2`) is valid, and each of its rules reads
/// as the reference reads it: the engine comparisons then test the engine, not the reader.
@Suite struct RandomV2FilesTests {
    @Test(arguments: [1, 2, 3, 5, 8, 13, 21, 34] as [UInt64])
    func generatedFilesParseAsTheReferenceReadsThem(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let text = RandomRulesV2.file(&rng, count: 60, expiresAt: 1_700_000_600_000)
        let loaded = RuleLoader.load([RuleSource(path: "random.json", bytes: Array(text.utf8))])
        #expect(loaded.failureValue == nil, "\(loaded.failureValue?.description ?? "")")
        let rules = try loaded.get().rules
        let reference = try RefRuleSet(files: [text])
        try #require(rules.count == reference.rules.count)
        for (rule, ref) in zip(rules, reference.rules) {
            #expect(rule.id == ref.id)
            #expect(rule.condition == Self.condition(ref.condition), "\(rule.id)")
            #expect(rule.cooldown == ref.cooldown, "\(rule.id)")
            #expect(rule.hysteresis == ref.hysteresis, "\(rule.id)")
            #expect(rule.extras?.sustain == ref.sustain, "\(rule.id)")
            #expect(rule.extras?.expires == ref.expires, "\(rule.id)")
            #expect(rule.extras?.resolve ?? false == ref.resolve, "\(rule.id)")
            switch ref.repeatMode {
            case .rearm: #expect(rule.repeatMode == .rearm && rule.extras?.remindEvery == nil, "\(rule.id)")
            case .once: #expect(rule.repeatMode == .once, "\(rule.id)")
            case .every(let every):
                #expect(rule.repeatMode == .rearm && rule.extras?.remindEvery == every, "\(rule.id)")
            }
            switch ref.scope {
            case .portfolio(let name): #expect(rule.scope == .portfolio(name))
            case .symbols(let symbols): #expect(rule.scope == .symbols(symbols))
            case .match: Issue.record("the generator writes no match rules")
            case .series: Issue.record("the generator writes no series rules")
            }
        }
        #expect(try loaded.get().portfolios.map(\.name) == reference.portfolios.map(\.name))
    }

    /// The reference's condition as the model writes it.
    static func condition(_ ref: RefRule.Condition) -> Condition {
        func side(_ s: RefRule.Side, _ c: Double) -> ChangeCondition { s == .above ? .above(c) : .below(c) }
        switch ref {
        case .above(let x): return .price(.above(x))
        case .below(let x): return .price(.below(x))
        case .crossesAbove(let x): return .price(.crossesAbove(x))
        case .crossesBelow(let x): return .price(.crossesBelow(x))
        case .inside(let l, let h): return .price(.inside(l, h))
        case .outside(let l, let h): return .price(.outside(l, h))
        case .change(let w, let s, let c): return .change(window: w, side(s, c))
        case .fromHigh(let w, let s, let c): return .fromHigh(window: w, side(s, c))
        case .fromLow(let w, let s, let c): return .fromLow(window: w, side(s, c))
        case .pnl(let s, let c): return .pnl(side(s, c))
        case .movePercent(let p): return .move(.percent(p))
        case .moveStep(let s): return .move(.step(s))
        case .volume(let s, let v): return .volume(s == .above ? .above(v) : .below(v))
        case .all(let members): return .all(members.map(condition))
        case .any(let members): return .any(members.map(condition))
        }
    }
}
