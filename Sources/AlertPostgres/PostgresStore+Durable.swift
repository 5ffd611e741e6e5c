import AlertStore

/// The PostgreSQL store as `run` and `check` use it: everything a state folder keeps, in the
/// database; nothing in local files.
extension PostgresStore: DurableStore {
    public var place: String { "store \(url)" }
    public var deliveries: any FlushableOutbox { outbox }
    public var engine: any EngineStateKeeper { engineState }
    public var journal: any PolicyJournal { policyJournal }
    public var ledger: any BackfillRecorder { backfill }
    public var listings: any ListingKeeper { knownMarkets }
    public var sourceMarkets: any SourceMarketKeeper { sourceMarketLists }
    public var localFolder: StateFolder? { nil }

    public func silenceRecords() async throws -> [SilenceRecord] {
        try await silences.all()
    }

    public func describe(_ error: any Error) -> String {
        if let error = error as? PostgresStoreError { return "\(error.doing): \(error.reason)" }
        return PostgresStoreError.reason(error, password: url.password)
    }

    public func stopping() {
        queue.stopping()
    }

    public func lost() async -> String? {
        session.lost
    }
}

extension PostgresBackfillLedger: BackfillRecorder {}
