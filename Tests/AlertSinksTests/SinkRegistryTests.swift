import AlertModel
import AlertPolicy
import AlertSinks
import Testing

@testable import AlertRules

/// Sink kinds are open: the stages before the sink ask a kind's settings, never which kind it
/// is, and the sinks are built from `SinkRegistry.all`.
@Suite struct SinkRegistryTests {
    /// A kind this test adds, as a new sink would: a settings type and nothing else.
    struct PagerSettings: SinkSettings {
        static let typeName = "pager"
        static let isDurable = true
        var tokenVariable: String
        var secretVariables: [String] { [tokenVariable] }
        var defaultRate: RateSpec? { RateSpec(count: 1, per: 60_000) }
    }

    @Test func eachKindIsCheckedAsTheKindItBuilds() {
        #expect(SinkRegistry.all.map(\.name) == ["stdout", "file", "webhook", "exec"])
        #expect(SinkRegistry.checks.map(\.name) == SinkRegistry.all.map(\.name))
        #expect(SinkRegistry.checks.map(\.durable) == [false, false, true, true])
    }

    @Test func aKindNotInTheRegistryIsAnErrorNamingTheSink() {
        let definition = SinkDefinition(name: "oncall", kind: SinkKind(PagerSettings(tokenVariable: "PAGER_TOKEN")))
        #expect(
            throws: SinkError(sink: "oncall", description: "sink 'oncall': type 'pager' is not in SinkRegistry.all")
        ) {
            _ = try SinkFactory.make(definition)
        }
    }

    @Test func aNewKindsSettingsAloneSetItsDurabilityRateAndWithheldSecrets() {
        let pager = SinkDefinition(name: "oncall", kind: SinkKind(PagerSettings(tokenVariable: "PAGER_TOKEN")))
        let exec = SinkDefinition(name: "notify", kind: .exec(ExecSpec(command: ["notify-send"])))
        #expect(pager.kind.isDurable && !pager.kind.printsToStandardOutput)
        #expect(PresetRates.effectiveRate(of: pager) == RateSpec(count: 1, per: 60_000))
        let withheld = RuleLoader.withholdingSecrets([pager, exec])
        #expect(withheld[1].kind == .exec(ExecSpec(command: ["notify-send"], withheldVariables: ["PAGER_TOKEN"])))
        #expect(withheld[0].kind == pager.kind)
        #expect(withheld[0].kind != SinkKind(PagerSettings(tokenVariable: "OTHER")))
        #expect(pager.kind != exec.kind)
    }
}
