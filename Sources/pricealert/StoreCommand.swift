import AlertModel
import AlertPipeline
import AlertPostgres
import AlertRules
import AlertStore
import ArgumentParser
import Foundation
import Platform

/// `pricealert store status|copy`: the PostgreSQL store (Docs/postgres.md).
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "See a PostgreSQL store, or copy a state folder into one.",
        discussion:
            "Exit codes: 0 done, 64 a bad URL, 73 the store or the state folder cannot be used, 75 another pricealert holds the state folder.",
        subcommands: [Status.self, Copy.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract:
                "Print the store's schema version, whether the connection is encrypted, its rows per table, and each source's leader and standbys."
        )

        @OptionGroup var store: StoreOption

        func validate() throws {
            if store.text == nil { throw ValidationError("give --store postgres://…") }
        }

        func run() async throws {
            guard let url = try store.url() else { return }
            let opened = try await StoreOption.open(url)
            let status: PostgresStore.Status
            let encrypted: Bool
            let roles: (now: Int64, [PostgresLeadership.SourceRoles])
            let instances: [PostgresLeadership.Instance]
            do {
                status = try await opened.status()
                encrypted = try await opened.usesTLS()
                roles = try await opened.leadership.roles()
                instances = try await opened.leadership.instances()
            } catch {
                await opened.close()
                StandardError.write("pricealert: error: \(error)")
                throw ExitCodes.stateUnusable
            }
            await opened.close()
            var lines = [
                "store \(url)",
                "schema \(status.schemaVersion) (this pricealert knows \(PostgresStore.schemaVersion))",
                "connection \(encrypted ? "encrypted (TLS)" : "not encrypted")"
            ]
            lines += status.counts.map { "\($0.0) \($0.1)" }
            lines += Self.roleLines(now: roles.now, roles.1, instances)
            StandardOutput.shared.writeLine(lines.joined(separator: "\n"))
        }

        /// A line per source (its leader, epoch and lease, or none, and its standbys) and per
        /// instance (where it runs, when it was last heard from), at the store's clock `now`.
        static func roleLines(
            now: Int64, _ roles: [PostgresLeadership.SourceRoles], _ instances: [PostgresLeadership.Instance]
        ) -> [String] {
            guard !roles.isEmpty || !instances.isEmpty else { return [] }
            func ago(_ millis: Int64) -> String { DurationText.format(max(0, now - millis)) + " ago" }
            var lines = ["store clock \(Timestamp.format(now))"]
            for role in roles {
                var line = "source \(UserText.double(role.source)) "
                if let lease = role.lease, lease.until > now {
                    line +=
                        "leader \(UserText.double(lease.holder)) epoch \(lease.epoch) since \(Timestamp.format(lease.acquiredAt)), lease until \(Timestamp.format(lease.until)) (in \(DurationText.format(lease.until - now)))"
                } else if let lease = role.lease {
                    line +=
                        "no leader (epoch \(lease.epoch) of \(UserText.double(lease.holder)) ended \(ago(lease.until)))"
                } else {
                    line += "no leader (never led)"
                }
                line +=
                    "; standbys: "
                    + (role.standbys.isEmpty ? "none" : role.standbys.map(UserText.double).joined(separator: ", "))
                lines.append(line)
            }
            for instance in instances {
                lines.append(
                    "instance \(UserText.double(instance.id)) host \(UserText.double(instance.host)) pid \(instance.pid) started \(Timestamp.format(instance.startedAt)), seen \(ago(instance.seenAt)), follows "
                        + (instance.sources.isEmpty
                            ? "no source" : instance.sources.map(UserText.double).joined(separator: ", ")))
            }
            return lines
        }
    }

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "copy",
            abstract:
                "Copy a state folder's outbox, dead letters, silences, backfill ledger, engine state, market lists, held events and known markets into a PostgreSQL store.",
            discussion:
                "Holds the folder's lock while it reads (stop the daemon first), writes everything in one transaction, and says what it copied. Copying again adds nothing twice: what the store has already is kept (Docs/postgres.md)."
        )

        @Option(help: ArgumentHelp("The state folder to copy.", valueName: "dir"))
        var from: String

        @Option(
            help: ArgumentHelp("The store: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE.", valueName: "url")
        )
        var to: String

        func run() async throws {
            guard let url = try StoreOption(text: to).url() else { return }
            let folder = try StateOption.opened(StateOption.open(from))
            var contents: PostgresStore.Folder
            do {
                let silences = try SilenceStore.openIfPresent(folder.folder)
                defer { silences?.close() }
                contents = PostgresStore.Folder(
                    pending: try folder.outbox.pending(), dead: try folder.outbox.dead(),
                    silences: try silences?.all() ?? [], backfill: try folder.backfill.all())
                contents.engine = try folder.engineState.load()
                contents.markets = try folder.engineState.loadMarkets()
                contents.held = try folder.policyState.list()
                // The lists of ticks without a source and of each rule-file source the folder
                // keeps a file for (`listings-NAME.txt`, `markets-NAME.json`).
                let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.folder.path)) ?? []
                func names(_ prefix: String, _ suffix: String) -> [String] {
                    files.filter {
                        $0.hasPrefix(prefix) && $0.hasSuffix(suffix) && $0.count > prefix.count + suffix.count
                    }
                    .map { String($0.dropFirst(prefix.count).dropLast(suffix.count)) }.sorted()
                }
                let lists = try ListingStore(folder: folder.folder).load(sources: names("listings-", ".txt"))
                let plain = lists.first { $0.source == nil }
                contents.listings = (plain?.known, plain?.pending ?? [])
                contents.sourceListings = lists.filter { $0.source != nil }
                contents.sourceMarkets = try names("markets-", ".json").compactMap {
                    try SourceMarketStore(folder: folder.folder).load($0)
                }
            } catch {
                throw StateOption.unusable(folder, error, doing: "cannot read it")
            }
            defer { folder.close() }
            let store = try await StoreOption.open(url)
            let copied: PostgresStore.Copied
            do {
                copied = try await store.copy(contents)
            } catch {
                await store.close()
                StandardError.write("pricealert: error: \(error)")
                throw ExitCodes.stateUnusable
            }
            await store.close()
            func said(_ counts: (written: Int, present: Int), _ what: String) -> String {
                "\(counts.written) \(what)" + (counts.present > 0 ? " (\(counts.present) there already)" : "")
            }
            StandardError.write(
                "store copy: \(folder.folder.path) to \(url): "
                    + [
                        said(copied.pending, "pending"), said(copied.dead, "dead letters"),
                        said(copied.silences, "silences"), said(copied.backfill, "backfill ledger entries"),
                        said(copied.engine, "symbols' engine state"), said(copied.markets, "market lists"),
                        said(copied.held, "held or grouped events"), said(copied.listings, "known-market lists")
                    ].joined(separator: ", "))
        }
    }
}

extension StoreOption {
    init(text: String?) {
        self.init()
        self.text = text
    }
}

/// `outbox` and `silence` on a PostgreSQL store (`--store URL`): each opens it, does its one
/// thing and closes it; a failure exits 73 naming the URL without its password.
extension StoreCommand {
    /// Runs `body` on the store at `url`, then closes it.
    static func with<T: Sendable>(
        _ url: PostgresURL, doing: String, _ body: (PostgresStore) async throws -> T
    ) async throws -> T {
        let store = try await StoreOption.open(url)
        do {
            let value = try await body(store)
            await store.close()
            return value
        } catch {
            await store.close()
            throw StoreOption.failed(store, error, doing: doing)
        }
    }

    static func listOutbox(_ url: PostgresURL, json: Bool) async throws {
        let (pending, dead) = try await with(url, doing: "cannot read the outbox") { store in
            (try await store.outbox.pending(), try await store.outbox.dead())
        }
        let lines = OutboxListing.lines(pending: pending, dead: dead, waiting: [], json: json, folder: url.description)
        if !lines.isEmpty { StandardOutput.shared.writeLine(lines.joined(separator: "\n")) }
    }

    static func flushOutbox(_ url: PostgresURL, ruleSet: RuleSet, timeout: Duration) async throws {
        let store = try await StoreOption.open(url)
        let outcome: OutboxFlush.Outcome
        do {
            outcome = try await OutboxFlush.run(
                ruleSet: ruleSet, outbox: store.outbox, timeout: timeout, now: Wallclock.millis())
        } catch .outbox(let error) {
            await store.close()
            throw StoreOption.failed(store, error, doing: "cannot flush the outbox")
        } catch .sink(let error) {
            await store.close()
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.cannotCreate
        }
        await store.outbox.commit()
        await store.close()
        try OutboxCommand.flushed(outcome)
    }

    static func purgeOutbox(_ url: PostgresURL, dead: Bool, all: Bool) async throws {
        let count = try await with(url, doing: "cannot change the outbox") { store in
            try await store.outbox.purge(dead: dead, all: all)
        }
        StandardError.write("outbox: \(count) deleted")
    }

    static func addSilence(
        _ url: PostgresURL, rule: String, symbol: String, from: Int64, until: Int64, comment: String, now: Int64
    ) async throws -> SilenceRecord {
        try await with(url, doing: "cannot add the silence") { store in
            try await store.silences.add(
                rule: rule, symbol: symbol, from: from, until: until, comment: comment, now: now)
        }
    }

    static func silences(_ url: PostgresURL) async throws -> [SilenceRecord] {
        try await with(url, doing: "cannot read the silences") { store in try await store.silences.all() }
    }

    static func expireSilence(_ url: PostgresURL, id: String, now: Int64) async throws {
        let record = try await with(url, doing: "cannot expire the silence") { store in
            try await store.silences.expire(id: id, now: now)
        }
        guard let record else {
            throw SilenceCommand.usage("no silence \(UserText.double(id)) in \(url) (see pricealert silence list)")
        }
        StandardError.write("silence \(record.id) expired at \(Timestamp.format(record.until))")
    }
}
