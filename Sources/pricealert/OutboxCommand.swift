import AlertModel
import AlertPipeline
import AlertStore
import ArgumentParser
import Platform

/// `pricealert outbox list|flush|purge`: see and act on the durable outbox in the state folder.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "See, deliver or clear what waits in the durable outbox (webhook and exec sinks).",
        discussion:
            "Exit codes: 0 done, 73 the state folder cannot be used, 75 another pricealert holds it (flush, purge; list reads it all the same); flush: 74 some alerts are still pending or became dead letters.",
        subcommands: [List.self, Flush.self, Purge.self])

    /// The outbox of `store` cannot be read (or changed): says so, naming the database file for
    /// SQLite's errors, and returns the exit code (73) to throw.
    static func failed(_ store: StateStore, _ error: any Error, doing: String = "read") -> ExitCode {
        StandardError.write(
            "pricealert: error: cannot \(doing) the outbox in \(store.folder.path): \(store.describe(error))")
        return ExitCodes.stateUnusable
    }

    /// Says what a flush did; exit 74 when something is still pending or died.
    static func flushed(_ outcome: OutboxFlush.Outcome) throws {
        let (delivered, dead, pending) = (outcome.delivered, outcome.dead, outcome.pending)
        StandardError.write("outbox: \(delivered) delivered, \(dead) dead-lettered, \(pending) still pending")
        if dead > 0 || pending > 0 { throw ExitCodes.deliveryFailed }
    }

    struct List: AsyncParsableCommand {
        // Named here, not derived from the type's name: that takes reflection at every start.
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract:
                "List pending deliveries, dead letters, and events held by quiet hours or waiting in an open digest.",
            discussion:
                "Reads the state folder also while a daemon uses it (read only, without its lock). Held and grouped events are not in the outbox yet: they enter it as one digest when their quiet hours end or their digest closes."
        )

        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption

        @Option(help: "text (an aligned line each) or json (one object per line).")
        var format: AlertOutputFormat = .text

        func run() async throws {
            if let url = try postgres.url(besides: state) {
                return try await StoreCommand.listOutbox(url, json: format == .json)
            }
            let store: StateStore
            switch StateOption.open(state.path) {
            case .success(let opened):
                store = opened
            case .failure(let error) where error.lockedBy != nil:
                // Another pricealert holds the folder: read what it has committed, leave it be.
                guard let reader = try state.openForReading() else {
                    if format == .text { StandardOutput.shared.writeLine("0 pending, 0 dead (\(error.path))") }
                    return
                }
                store = reader
            case .failure(let error):
                store = try StateOption.opened(.failure(error))
            }
            defer { store.close() }
            let pending: [OutboxEntry]
            let dead: [OutboxEntry]
            let waiting: [PolicyStateStore.Pending]
            do {
                pending = try store.outbox.pending()
                dead = try store.outbox.dead()
                waiting = try store.policyState.list()
            } catch {
                throw OutboxCommand.failed(store, error)
            }
            let lines = OutboxListing.lines(
                pending: pending, dead: dead, waiting: waiting, json: format == .json,
                folder: store.folder.path)
            if !lines.isEmpty { StandardOutput.shared.writeLine(lines.joined(separator: "\n")) }
        }
    }

    struct Flush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "flush",
            abstract: "Deliver everything pending now through the rules' sinks, then exit.",
            discussion:
                "Exit codes: 0 all delivered, 74 some still pending or dead-lettered, 65/66 rule file errors, 73 a sink or the state folder cannot be set up, 75 the state folder is in use."
        )

        @OptionGroup var rules: RulesOption
        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption

        @Option(help: "How long to keep trying before leaving the rest in the outbox.")
        var timeout: DurationArgument = DurationArgument(.seconds(30))

        func run() async throws {
            Logs.bootstrap()
            let ruleSet = try rules.load()
            if let url = try postgres.url(besides: state) {
                return try await StoreCommand.flushOutbox(url, ruleSet: ruleSet, timeout: timeout.duration)
            }
            let store = try state.open()
            defer { store.close() }
            let outcome: OutboxFlush.Outcome
            do {
                outcome = try await OutboxFlush.run(
                    ruleSet: ruleSet, store: store, timeout: timeout.duration, now: Wallclock.millis())
            } catch .outbox(let error) {
                throw OutboxCommand.failed(store, error)
            } catch .sink(let error) {
                StandardError.write("pricealert: error: \(error)")
                throw ExitCodes.cannotCreate
            }
            try OutboxCommand.flushed(outcome)
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge",
            abstract: "Delete dead letters (--dead), or dead letters and every pending delivery (--all).")

        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption

        @Flag(help: "Delete the dead letters.")
        var dead = false

        @Flag(help: "Delete the dead letters and everything pending (those alerts are never delivered).")
        var all = false

        func validate() throws {
            if dead == all { throw ValidationError("give exactly one of --dead or --all") }
        }

        func run() async throws {
            if let url = try postgres.url(besides: state) {
                return try await StoreCommand.purgeOutbox(url, dead: dead, all: all)
            }
            let store = try state.open()
            defer { store.close() }
            do {
                let count = try store.outbox.purge(dead: dead, all: all)
                StandardError.write("outbox: \(count) deleted")
            } catch {
                throw OutboxCommand.failed(store, error, doing: "change")
            }
        }
    }
}
