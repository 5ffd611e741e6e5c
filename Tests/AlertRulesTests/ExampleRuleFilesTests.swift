import Foundation
import Testing
@testable import AlertRules

/// Every file shipped in `Rules/` must validate, alone and all together.
@Suite struct ExampleRuleFilesTests {
    /// `Rules/` at the package root, found from this file's own path.
    static let rulesFolder: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // ExampleRuleFilesTests.swift, AlertRulesTests, Tests
        return parts.joined(separator: "/") + "/Rules"
    }()

    /// Every `.json` file in the folder, so a newly added example is checked too.
    static let paths: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: rulesFolder)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { rulesFolder + "/" + $0 }
    }()

    @Test func folderHoldsTheDocumentedExamples() {
        let names = Set(Self.paths.map { $0.split(separator: "/").last.map(String.init) ?? "" })
        #expect(names.isSuperset(of: ["starter.json", "thresholds.json", "moves-24h.json", "market-wide.json",
                                      "demo.json", "sinks.json"]))
    }

    @Test(arguments: paths)
    func exampleFileIsValid(path: String) throws {
        let result = RuleLoader.loadFiles(paths: [path])
        #expect(result.failureValue == nil)
        #expect(try !result.get().rules.isEmpty)
    }

    @Test func allExampleFilesLoadTogether() {
        #expect(RuleLoader.loadFiles(paths: Self.paths).failureValue == nil)
    }
}
