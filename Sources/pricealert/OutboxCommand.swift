import AlertModel
import AlertOutbox
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore
import ArgumentParser
import Platform

/// `pricealert outbox list|flush|purge`: see and act on the durable outbox in the state folder.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "See, deliver or clear what waits in the durable outbox (webhook and exec sinks).",
        discussion: "Exit codes: 0 done, 73 the state folder cannot be used, 75 another pricealert holds it (flush, purge; list reads it all the same); flush: 74 some alerts are still pending or became dead letters.",
        subcommands: [List.self, Flush.self, Purge.self])

    /// The outbox of `store` cannot be read (or changed): says so, naming the database file for
    /// SQLite's errors, and returns the exit code (73) to throw.
    static func failed(_ store: StateStore, _ error: any Error, doing: String = "read") -> ExitCode {
        StandardError.write("pricealert: error: cannot \(doing) the outbox in \(store.folder.path): \(store.describe(error))")
        return ExitCodes.stateUnusable
    }

    struct List: AsyncParsableCommand {
        // Named here, not derived from the type's name: that takes reflection at every start.
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List pending deliveries, dead letters, and events held by quiet hours or waiting in an open digest.",
            discussion: "Reads the state folder also while a daemon uses it (read only, without its lock). Held and grouped events are not in the outbox yet: they enter it as one digest when their quiet hours end or their digest closes.")

        @OptionGroup var state: StateOption

        @Option(help: "text (an aligned line each) or json (one object per line).")
        var format: AlertOutputFormat = .text

        func run() async throws {
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
            var lines: [String] = []
            for (entry, isDead) in pending.map({ ($0, false) }) + dead.map({ ($0, true) }) {
                lines.append(format == .json ? Self.json(entry, dead: isDead) : Self.text(entry, dead: isDead))
            }
            for row in waiting {
                lines.append(format == .json ? Self.json(row) : Self.text(row))
            }
            if format == .text {
                var summary = "\(pending.count) pending, \(dead.count) dead"
                let held = waiting.filter { $0.quiet == true }.count, grouped = waiting.filter { $0.quiet == false }.count
                if held > 0 { summary += ", \(held) held by quiet hours" }
                if grouped > 0 { summary += ", \(grouped) in open digests" }
                if waiting.count > held + grouped { summary += ", \(waiting.count - held - grouped) held or in open digests" }
                lines.append(summary + " (\(store.folder.path))")
            }
            if !lines.isEmpty { StandardOutput.shared.writeLine(lines.joined(separator: "\n")) }
        }

        static func text(_ entry: OutboxEntry, dead: Bool) -> String {
            var line = dead ? "dead     " : "pending  "
            line += "\(entry.sink)  \(entry.deliveryID)  "
            if case .digest(let digest) = entry.delivery {
                line += "(digest of \(digest.events.count)\(digest.held ? ", held" : ""))  "
            }
            if entry.urgent { line += "urgent  " }
            line += "attempts \(entry.attempts)  "
            line += dead ? "died \(Timestamp.format(entry.nextAttemptAt))" : "next \(Timestamp.format(entry.nextAttemptAt))"
            if let reason = entry.deadReason { line += "  reason: \(reason)" }
            else if let error = entry.lastError { line += "  last error: \(error)" }
            return line
        }

        /// `held     SINK  EVENT-ID  quiet hours  event TIME`: an event the policy stages keep
        /// for a sink (`grouped` in an open digest; `waiting` for a row that does not say which).
        static func text(_ row: PolicyStateStore.Pending) -> String {
            let (state, why) = stage(row)
            return state + String(repeating: " ", count: max(1, 9 - state.count)) + "\(row.sink)  \(row.alert.id)  \(why)  event \(Timestamp.format(row.alert.time))"
        }

        /// `{"state":"held"|"grouped"|"waiting","sink":…,"id":…,"alert":{…}}`.
        static func json(_ row: PolicyStateStore.Pending) -> String {
            var out = "{\"state\":" + JSONString.quote(stage(row).state)
            out += ",\"sink\":" + JSONString.quote(row.sink)
            out += ",\"id\":" + JSONString.quote(row.alert.id)
            return out + ",\"alert\":" + AlertFormat.json(row.alert) + "}"
        }

        private static func stage(_ row: PolicyStateStore.Pending) -> (state: String, why: String) {
            switch row.quiet {
            case true?: return ("held", "quiet hours")
            case false?: return ("grouped", "open digest")
            case nil: return ("waiting", "quiet hours or open digest")
            }
        }

        /// An event row has `"alert"` (the event's JSON), a digest row `"digest"` (the digest's).
        static func json(_ entry: OutboxEntry, dead: Bool) -> String {
            var out = "{\"state\":" + JSONString.quote(dead ? "dead" : "pending")
            out += ",\"sink\":" + JSONString.quote(entry.sink)
            out += ",\"id\":" + JSONString.quote(entry.deliveryID)
            out += ",\"urgent\":" + (entry.urgent ? "true" : "false")
            out += ",\"attempts\":\(entry.attempts)"
            out += ",\"created\":" + JSONString.quote(Timestamp.format(entry.createdAt))
            out += (dead ? ",\"died\":" : ",\"next\":") + JSONString.quote(Timestamp.format(entry.nextAttemptAt))
            out += ",\"lastError\":" + (entry.lastError.map(JSONString.quote) ?? "null")
            if dead { out += ",\"reason\":" + JSONString.quote(entry.deadReason ?? "") }
            switch entry.delivery {
            case .event(let alert): out += ",\"alert\":" + AlertFormat.json(alert) + "}"
            case .digest(let digest): out += ",\"digest\":" + DigestFormat.json(digest) + "}"
            }
            return out
        }
    }

    struct Flush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "flush",
            abstract: "Deliver everything pending now through the rules' sinks, then exit.",
            discussion: "Exit codes: 0 all delivered, 74 some still pending or dead-lettered, 65/66 rule file errors, 73 a sink or the state folder cannot be set up, 75 the state folder is in use.")

        @OptionGroup var rules: RulesOption
        @OptionGroup var state: StateOption

        @Option(help: "How long to keep trying before leaving the rest in the outbox.")
        var timeout: DurationArgument = DurationArgument(.seconds(30))

        func run() async throws {
            Logs.bootstrap()
            let ruleSet = try rules.load()
            let store = try state.open()
            defer { store.close() }
            let waiting: [String]
            do {
                waiting = Array(Set(try store.outbox.pending().map(\.sink))).sorted()
                try store.outbox.makeAllDue(now: Wallclock.millis())
            } catch {
                throw OutboxCommand.failed(store, error)
            }
            let missing = waiting.filter { ruleSet.sinks[$0] == nil }
            for name in missing {
                StandardError.write("pricealert: warning: the outbox holds alerts for sink \(UserText.single(name)), which the rule files do not define; they stay pending")
            }
            let sinks: [String: any Sink]
            do {
                sinks = try SinkFactory.makeAll(ruleSet.withFallbacks(waiting).compactMap { ruleSet.sinks[$0] })
            } catch {
                StandardError.write("pricealert: error: \(error)")
                throw ExitCodes.cannotCreate
            }
            let dispatcher = ReliableDispatcher(sinks: sinks, durable: ruleSet.durableSinks(among: sinks.keys),
                                                outbox: store.outbox,
                                                configuration: .init(definitions: ruleSet.sinks.values))
            do {
                try await dispatcher.start()
            } catch {
                throw OutboxCommand.failed(store, error)
            }
            await dispatcher.drain(timeout: timeout.duration)
            let counts = await dispatcher.counts()
            let delivered = counts.values.reduce(0) { $0 + $1.delivered }
            let dead = counts.values.reduce(0) { $0 + $1.dead }
            let pending = await dispatcher.outboxDepth()
            StandardError.write("outbox: \(delivered) delivered, \(dead) dead-lettered, \(pending) still pending")
            if dead > 0 || pending > 0 { throw ExitCodes.deliveryFailed }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge",
            abstract: "Delete dead letters (--dead), or dead letters and every pending delivery (--all).")

        @OptionGroup var state: StateOption

        @Flag(help: "Delete the dead letters.")
        var dead = false

        @Flag(help: "Delete the dead letters and everything pending (those alerts are never delivered).")
        var all = false

        func validate() throws {
            if dead == all { throw ValidationError("give exactly one of --dead or --all") }
        }

        func run() async throws {
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
