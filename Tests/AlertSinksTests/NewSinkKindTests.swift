import AlertModel
import AlertPolicy
import AlertRules
import AlertSinks
import Synchronization
import Testing

/// A whole new sink kind defined outside the program's modules, as a new folder in AlertSinks
/// would define it (settings, the check of its keys through the public `SinkSettingsChecker`,
/// the sink, its `sinkType`), registered in a registry of its own: rule files using it load,
/// are checked at `file:line:col`, and deliver to it.
@Suite struct NewSinkKindTests {
    /// The settings of a `memo` sink: a `label` (required), a `level` and a `timeout`.
    struct MemoSettings: SinkSettings {
        static let typeName = "memo"
        static let isDurable = true
        var label: String
        var level: String = "info"
        var timeout: Int64 = 5_000
    }

    /// Keeps every alert it is sent, prefixed by its label.
    final class MemoSink: Sink {
        let name: String
        let settings: MemoSettings
        private let received = Mutex<[String]>([])

        init(name: String, settings: MemoSettings) {
            self.name = name
            self.settings = settings
        }

        var lines: [String] { received.withLock { $0 } }

        func send(_ alert: Alert) async -> SinkResult {
            received.withLock { $0.append("\(settings.label) [\(settings.level)] \(alert.rule) \(alert.symbol)") }
            return .delivered
        }

        static let sinkType = SinkType(
            MemoSettings.self, keys: ["label", "level", "timeout"],
            read: { checker in
                let label = checker.string("label", required: true)
                let level = checker.choice("level", among: ["info", "page"])
                let timeout = checker.duration("timeout", atMost: "1m")
                if label?.contains("\n") == true { checker.error("'label' must be one line", at: "label") }
                guard let label else { return nil }
                var settings = MemoSettings(label: label)
                settings.level = level ?? settings.level
                settings.timeout = timeout ?? settings.timeout
                return settings
            },
            make: { name, settings, _ in MemoSink(name: name, settings: settings) })
    }

    /// The program's kinds and the new one: one more line.
    static let registry = SinkRegistry.all + [MemoSink.sinkType]

    /// A file whose `sinks` object is on line 2 from column 10, with a rule notifying `desk`.
    static func file(sinks: String) -> RuleSource {
        let text = """
            {"version": 1,
            "sinks": \(sinks),
            "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["desk"]}]}
            """
        return RuleSource(path: "r.json", bytes: Array(text.utf8))
    }

    static func diagnostics(_ sinks: String, types: [SinkTypeCheck] = registry.map(\.check)) -> [String] {
        switch RuleLoader.load([file(sinks: sinks)], sinkTypes: types) {
        case .success: return []
        case .failure(let errors): return errors.diagnostics.map(\.description)
        }
    }

    @Test func aRuleFileUsingTheNewKindLoadsAndDelivers() async throws {
        let sinks =
            #"{"desk": {"type": "memo", "label": "desk", "level": "page", "timeout": "30s", "retry": {"maxAge": "1h"}}}"#
        let ruleSet = try RuleLoader.load([Self.file(sinks: sinks)], sinkTypes: Self.registry.map(\.check)).get()
        let definition = try #require(ruleSet.sinks["desk"])
        #expect(definition.kind == SinkKind(MemoSettings(label: "desk", level: "page", timeout: 30_000)))
        #expect(definition.kind.isDurable)
        #expect(definition.delivery.maxAge == 3_600_000)

        let built = try SinkFactory.makeAll([definition], dependencies: .shared, types: Self.registry)
        let sink = try #require(built["desk"] as? MemoSink)
        let alert = Alert(
            rule: "btc", symbol: "BTC", time: 1_700_000_000_000, price: 2, condition: "price above 1",
            threshold: .value(1), value: 2, message: "BTC above 1", notify: ["desk"])
        #expect(await sink.send(.event(alert)) == .delivered)
        #expect(sink.lines == ["desk [page] btc BTC"])
    }

    @Test func theNewKindsKeysAreCheckedAtTheirPlaces() {
        // Its own keys, with a "did you mean" drawn from them; shared keys are its too.
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "lable": "x"}}"#) == [
                "r.json:2:19: error: missing required key 'label'",
                "r.json:2:36: error: unknown key 'lable' (did you mean 'label'?)"
            ])
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "label": "x", "level": "loud", "timeout": "2m"}}"#) == [
                #"r.json:2:59: error: 'level' must be "info" or "page", found "loud""#,
                #"r.json:2:78: error: 'timeout' must be at most 1m, found "2m""#
            ])
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "label": "a\nb"}}"#) == [
                "r.json:2:45: error: 'label' must be one line"
            ])
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "label": 3, "retry": 1}}"#) == [
                "r.json:2:45: error: 'label' must be a string, found number",
                "r.json:2:57: error: 'retry' must be an object, found number"
            ])
    }

    @Test func withoutTheRegistryLineTheTypeIsUnknown() {
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "label": "x"}}"#, types: SinkRegistry.checks) == [
                #"r.json:2:28: error: 'type' must be one of "stdout", "file", "webhook", "exec", found "memo""#,
                "r.json:2:36: error: unknown key 'label'"
            ])
        #expect(
            Self.diagnostics(#"{"desk": {"type": "memo", "label": "x"}}"#) == [])
    }
}
