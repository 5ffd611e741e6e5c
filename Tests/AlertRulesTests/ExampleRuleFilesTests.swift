import AlertModel
import AlertSinks
import Foundation
import Testing

@testable import AlertRules

/// Every file shipped in `Rules/` must validate, alone and all together.
@Suite struct ExampleRuleFilesTests {
    /// `Rules/` at the package root, found from this file's own path.
    static let rulesFolder: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // ExampleRuleFilesTests.swift, AlertRulesTests, Tests
        return parts.joined(separator: "/") + "/Rules"
    }()

    /// Every `.json` file in the folder, so a newly added example is checked too.
    static let paths: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: rulesFolder)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { rulesFolder + "/" + $0 }
    }()

    @Test func folderHoldsTheDocumentedExamples() {
        let names = Set(Self.paths.map { $0.split(separator: "/").last.map(String.init) ?? "" })
        #expect(
            names.isSuperset(of: [
                "starter.json", "thresholds.json", "moves-24h.json", "market-wide.json",
                "demo.json", "sinks.json", "v2-combined.json", "v2-moves.json",
                "v2-portfolio.json", "v2-long-windows.json", "v3-exchanges.json", "v3-consensus.json",
                "v3-spread-ratio.json"
            ]))
    }

    /// The version 2 examples together show every key version 2 adds.
    @Test func versionTwoExamplesShowEveryNewKey() throws {
        let paths = Self.paths.filter { $0.split(separator: "/").last?.hasPrefix("v2-") == true }
        let set = try RuleLoader.loadFiles(paths: paths).get()
        #expect(set.rules.allSatisfy { $0.fileVersion == 2 })
        var shown: Set<String> = []
        func visit(_ condition: Condition) {
            switch condition {
            case .all(let members): shown.insert("all"); members.forEach(visit)
            case .any(let members): shown.insert("any"); members.forEach(visit)
            case .fromHigh(let window, _):
                shown.insert("fromHigh"); if window > 86_400_000 { shown.insert("long window") }
            case .fromLow(let window, _):
                shown.insert("fromLow"); if window > 86_400_000 { shown.insert("long window") }
            case .change(let window, _): if window > 86_400_000 { shown.insert("long window") }
            case .move(.percent): shown.insert("percent")
            case .move(.step): shown.insert("step")
            case .pnl: shown.insert("pnl")
            case .listed: shown.insert("listed")
            default: break
            }
        }
        for rule in set.rules {
            visit(rule.condition)
            if case .portfolio = rule.scope { shown.insert("portfolio") }
            if rule.extras?.sustain != nil { shown.insert("for") }
            if rule.extras?.remindEvery != nil { shown.insert("every") }
            if rule.extras?.expires != nil { shown.insert("expires") }
            if rule.extras?.resolve == true { shown.insert("resolve") }
            if rule.extras?.highPriority == true { shown.insert("priority") }
        }
        #expect(
            shown == [
                "all", "any", "fromHigh", "fromLow", "long window", "percent", "step", "pnl", "listed",
                "portfolio", "for", "every", "expires", "resolve", "priority"
            ])
        #expect(!set.portfolios.isEmpty)
    }

    /// The version 3 example that defines the sources the others use: they are given with it,
    /// as a user would (`validate Rules/v3-exchanges.json Rules/v3-consensus.json`).
    static let sourcesFile = rulesFolder + "/v3-exchanges.json"

    /// The version 3 examples together show every key version 3 adds, and every kind of series.
    @Test func versionThreeExamplesShowEveryNewKey() throws {
        let paths = Self.paths.filter { $0.split(separator: "/").last?.hasPrefix("v3-") == true }
        let set = try RuleLoader.loadFiles(paths: paths).get()
        #expect(set.rules.allSatisfy { $0.fileVersion == 3 })
        #expect(Set(set.sources.map(\.type)) == ["binance", "coinbase", "kraken", "bybit", "okx"])
        #expect(Set(set.series.map(\.kind)) == Set(SeriesDefinition.Kind.allCases))
        #expect(set.series.contains { $0.quorum > 1 && !$0.kind.isPair } && set.series.contains { $0.maxAge != 60_000 })
        var shown: Set<String> = []
        func visit(_ condition: Condition) {
            switch condition {
            case .all(let members), .any(let members): members.forEach(visit)
            case .volume(.above): shown.insert("volume above")
            case .volume(.below): shown.insert("volume below")
            default: break
            }
        }
        for rule in set.rules {
            visit(rule.condition)
            switch rule.scope {
            case .series: shown.insert("series")
            case .match(let filter) where filter.sources != nil: shown.insert("match.source")
            case .symbols(let symbols):
                shown.insert(symbols.contains { $0.contains(":") } ? "qualified" : "unqualified")
            default: break
            }
        }
        if set.portfolios.contains(where: { $0.holdings.contains { $0.symbol.contains(":") } }) {
            shown.insert("qualified holding")
        }
        #expect(
            shown == [
                "volume above", "volume below", "series", "match.source", "qualified", "unqualified",
                "qualified holding"
            ])
    }

    @Test(arguments: paths)
    func exampleFileIsValid(path: String) throws {
        let usesSources = path.split(separator: "/").last?.hasPrefix("v3-") == true && path != Self.sourcesFile
        let result = RuleLoader.loadFiles(paths: usesSources ? [Self.sourcesFile, path] : [path])
        #expect(result.failureValue == nil)
        #expect(try !result.get().rules.isEmpty)
    }

    @Test func allExampleFilesLoadTogether() {
        #expect(RuleLoader.loadFiles(paths: Self.paths).failureValue == nil)
    }
}
