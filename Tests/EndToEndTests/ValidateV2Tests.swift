import AlertTestSupport
import Foundation
import Testing

/// `validate` with version 2 files, through the built binary: expired rules are warnings at
/// their place (exit 0), errors still fail, and version 1 and 2 files validate together.
@Suite("end to end: validate, version 2", .programs)
struct ValidateV2Tests {
    /// `pricealert validate` over `files` (name, text), written to a fresh folder, in that order.
    func validate(_ files: [(String, String)]) async throws -> PriceAlertBinary.Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-validate-v2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, text) in files {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return try await PriceAlertBinary.run(["validate"] + files.map(\.0), in: dir)
    }

    static let expired =
        #"{"id": "old", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2020-01-01T00:00:00Z"}"#

    @Test func anExpiredRuleIsAWarningAndValidateSucceeds() async throws {
        let result = try await validate([
            (
                "r.json",
                """
                {"version": 2, "rules": [
                \(Self.expired),
                {"id": "new", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2999-01-01T00:00:00Z"}
                ]}
                """
            )
        ])
        #expect(result.status == 0)
        #expect(
            result.stderr
                == "r.json:2:76: warning: rule 'old' expired at 2020-01-01T00:00:00.000Z; it will never fire\n")
        #expect(result.stdout == "ok: 1 file, 2 rules, 1 sink\n")
    }

    @Test func anErrorBesideAnExpiredRuleFails() async throws {
        let result = try await validate([
            (
                "r.json",
                """
                {"version": 2, "rules": [
                \(Self.expired),
                {"id": "bad", "symbol": "BTC", "when": {"move": {"percent": 1}}, "for": "1m"}
                ]}
                """
            )
        ])
        #expect(result.status == 65)
        #expect(result.stderr == "r.json:3:73: error: 'for' is not allowed on 'move' rules\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func versionOneAndTwoFilesTogether() async throws {
        let v2 = """
            {"version": 2, "portfolios": {"main": {"holdings": {"BTC": 1}, "cost": 10}},
             "rules": [{"id": "b", "portfolio": "main", "when": {"pnl": {"below": -10}}}]}
            """
        let v1 = #"{"version": 1, "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
        let together = try await validate([("v1.json", v1), ("v2.json", v2)])
        #expect(together.status == 0, "\(together.stderr)")
        #expect(together.stdout == "ok: 2 files, 2 rules, 1 sink\n")
        // A version 2 key in the version 1 file names the version it needs.
        let portfolioInV1 =
            #"{"version": 1, "rules": [{"id": "a", "portfolio": "main", "when": {"price": {"above": 1}}}]}"#
        let mixed = try await validate([("v1.json", portfolioInV1), ("v2.json", v2)])
        #expect(mixed.status == 65)
        #expect(mixed.stderr == "v1.json:1:38: error: 'portfolio' needs \"version\": 2\n")
    }
}
