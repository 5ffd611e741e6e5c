import AlertTestSupport
import Foundation
import Testing

/// `validate` with version 2 files, through the built binary: expired rules are warnings at
/// their place (exit 0), errors still fail, and version 1 and 2 files validate together.
@Suite("end to end: validate, version 2")
struct ValidateV2Tests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-validate-v2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func write(_ text: String, to name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    @Test func anExpiredRuleIsAWarningAndValidateSucceeds() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write("""
            {"version": 2, "rules": [
            {"id": "old", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2020-01-01T00:00:00Z"},
            {"id": "new", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2999-01-01T00:00:00Z"}
            ]}
            """, to: "r.json", in: dir)
        let result = try await PriceAlertBinary.run(["validate", "r.json"], in: dir)
        #expect(result.status == 0)
        #expect(result.stderr == "r.json:2:76: warning: rule 'old' expired at 2020-01-01T00:00:00.000Z; it will never fire\n")
        #expect(result.stdout == "ok: 1 file, 2 rules, 1 sink\n")
    }

    @Test func anErrorBesideAnExpiredRuleFails() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write("""
            {"version": 2, "rules": [
            {"id": "old", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2020-01-01T00:00:00Z"},
            {"id": "bad", "symbol": "BTC", "when": {"move": {"percent": 1}}, "for": "1m"}
            ]}
            """, to: "r.json", in: dir)
        let result = try await PriceAlertBinary.run(["validate", "r.json"], in: dir)
        #expect(result.status == 65)
        #expect(result.stderr == "r.json:3:73: error: 'for' is not allowed on 'move' rules\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func versionOneAndTwoFilesTogether() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(#"{"version": 1, "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#, to: "v1.json", in: dir)
        try write("""
            {"version": 2, "portfolios": {"main": {"holdings": {"BTC": 1}, "cost": 10}},
             "rules": [{"id": "b", "portfolio": "main", "when": {"pnl": {"below": -10}}}]}
            """, to: "v2.json", in: dir)
        let result = try await PriceAlertBinary.run(["validate", "v1.json", "v2.json"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok: 2 files, 2 rules, 1 sink\n")
        // The same v2 key in the version 1 file names the version it needs.
        try write(#"{"version": 1, "rules": [{"id": "a", "portfolio": "main", "when": {"price": {"above": 1}}}]}"#, to: "v1.json", in: dir)
        let mixed = try await PriceAlertBinary.run(["validate", "v1.json", "v2.json"], in: dir)
        #expect(mixed.status == 65)
        #expect(mixed.stderr == "v1.json:1:38: error: 'portfolio' needs \"version\": 2\n")
    }
}
