import AlertFeeds
import AlertModel
import Testing

/// Every name `--source` and a rule file's `type` accept makes a source of that name, and no
/// other name does.
@Suite struct SourceRegistryTests {
    @Test(arguments: SourceRegistry.names)
    func eachNameMakesItsSource(name: String) throws {
        let source = try SourceRegistry.make(name, endpoint: nil)
        #expect(source.name == name)
    }

    @Test func anUnknownNameIsRefusedNamingTheKnownOnes() {
        #expect(throws: SourceError.self) { try SourceRegistry.make("binanse", endpoint: nil) }
    }
}
