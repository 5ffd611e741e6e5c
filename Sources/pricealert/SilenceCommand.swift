import AlertModel
import AlertPipeline
import AlertPolicy
import AlertSinks
import AlertStore
import ArgumentParser
import Platform

/// `pricealert silence add|list|expire`: silences in the state folder (Docs/sinks.md#silences).
struct SilenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silence",
        abstract: "Add, list or expire silences: events they match go to no sink.",
        discussion:
            "Silences live in the state folder's silences.sqlite and can be changed while a daemon runs. Exit codes: 0 done, 64 a bad pattern, time or id, 73 the state folder cannot be used.",
        subcommands: [Add.self, List.self, Expire.self])

    /// `TIME` as RFC 3339 (`2026-11-24T22:00:00Z`, `…+01:00`), or a usage error naming `option`.
    static func time(_ text: String, _ option: String) throws -> Int64 {
        guard let millis = Timestamp.parse(Array(text.utf8)) else {
            throw usage(
                "\(option) \(UserText.double(text)) is not a time: write it as RFC 3339, e.g. 2026-11-24T22:00:00Z or 2026-11-24T23:00:00+01:00"
            )
        }
        return millis
    }

    static func usage(_ message: String) -> ExitCode {
        StandardError.write("pricealert: error: \(message)")
        return ExitCodes.usage
    }

    static func open(_ state: StateOption) throws -> SilenceStore {
        do {
            return try SilenceStore.open(StateOption.folder(state.path))
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.stateUnusable
        }
    }

    static func failed(_ store: SilenceStore, _ error: any Error) -> ExitCode {
        StandardError.write("pricealert: error: \(SilencesUnreadable(store, error))")
        return ExitCodes.stateUnusable
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a silence and print its id.",
            discussion:
                "Give --for or --until. Patterns use * (any run of characters) and ? (one character); the symbol is matched upper-cased. Silences match events by their time, so one that ended in the past is added too (with a note): it silences a replay --dispatch of that time."
        )

        @Option(help: ArgumentHelp("Rule ids to silence.", valueName: "glob"))
        var rule = "*"
        @Option(help: ArgumentHelp("Symbols to silence (upper-cased before matching).", valueName: "glob"))
        var symbol = "*"
        @Option(
            name: .customLong("for"),
            help: ArgumentHelp("How long from --from, e.g. 2h, 30m, 1d.", valueName: "duration"))
        var length: String?
        @Option(help: ArgumentHelp("When it ends (RFC 3339, e.g. 2026-11-25T07:00:00Z).", valueName: "time"))
        var until: String?
        @Option(help: ArgumentHelp("When it starts (RFC 3339); default now.", valueName: "time"))
        var from: String?
        @Option(help: "Why, for whoever lists it later.")
        var comment = ""
        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption

        func run() async throws {
            let now = Wallclock.millis()
            let rule: Glob, symbol: Glob
            do {
                rule = try Glob(self.rule)
            } catch {
                throw SilenceCommand.usage("--rule: \(error)")
            }
            do {
                // Upper-casing a valid pattern cannot make it invalid: no letter becomes a
                // space, a control character or a bracket.
                symbol = try Glob(try Glob(self.symbol).pattern.uppercased())
            } catch {
                throw SilenceCommand.usage("--symbol: \(error)")
            }
            let start = try from.map { try SilenceCommand.time($0, "--from") } ?? now
            let end: Int64
            switch (length, until) {
            case (let length?, nil):
                guard let millis = DurationText.parse(length), millis > 0 else {
                    throw SilenceCommand.usage(
                        "--for \(UserText.double(length)) is not a duration longer than 0s (use e.g. \"90m\", \"2h\", \"1d\")"
                    )
                }
                end = start + millis
            case (nil, let until?):
                end = try SilenceCommand.time(until, "--until")
            default:
                throw SilenceCommand.usage("give exactly one of --for or --until")
            }
            guard end > start else {
                throw SilenceCommand.usage(
                    "the silence ends (\(Timestamp.format(end))) before it starts (\(Timestamp.format(start)))")
            }
            if let url = try postgres.url(besides: state) {
                let record = try await StoreCommand.addSilence(
                    url, rule: rule.pattern, symbol: symbol.pattern, from: start, until: end, comment: comment, now: now
                )
                return SilenceCommand.added(record, now: now)
            }
            let store = try SilenceCommand.open(state)
            defer { store.close() }
            do {
                let record = try store.add(
                    rule: rule.pattern, symbol: symbol.pattern, from: start, until: end,
                    comment: comment, now: now)
                SilenceCommand.added(record, now: now)
            } catch {
                throw SilenceCommand.failed(store, error)
            }
        }
    }

    /// Prints the new silence's id, and a note when it is over already.
    static func added(_ record: SilenceRecord, now: Int64) {
        StandardOutput.shared.writeLine(record.id)
        // Silences match by event time, so one that is over still silences a replay of its time
        // (`replay --dispatch` of last week); it says so, as nothing live can match.
        if record.until <= now {
            StandardError.write(
                "pricealert: note: silence \(record.id) ended in the past (\(Timestamp.format(record.until))): it matches only events before then, as in a replay --dispatch of that time, and no live alert"
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List silences: active, pending (starting later) and expired.")

        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption
        @Option(help: "text (a line each) or json (one object per line).")
        var format: AlertOutputFormat = .text

        func run() async throws {
            let records: [SilenceRecord]
            if let url = try postgres.url(besides: state) {
                records = try await StoreCommand.silences(url)
            } else {
                let store = try SilenceCommand.open(state)
                defer { store.close() }
                do {
                    records = try store.all()
                } catch {
                    throw SilenceCommand.failed(store, error)
                }
            }
            let lines = SilenceListing.lines(records, json: format == .json, now: Wallclock.millis())
            if !lines.isEmpty { StandardOutput.shared.writeLine(lines.joined(separator: "\n")) }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "expire",
            abstract: "End a silence now.")

        @Argument(help: "The id `silence add` printed.")
        var id: String
        @OptionGroup var state: StateOption
        @OptionGroup var postgres: StoreOption

        func run() async throws {
            if let url = try postgres.url(besides: state) {
                return try await StoreCommand.expireSilence(url, id: id, now: Wallclock.millis())
            }
            let store = try SilenceCommand.open(state)
            defer { store.close() }
            let record: SilenceRecord?
            do {
                record = try store.expire(id: id, now: Wallclock.millis())
            } catch {
                throw SilenceCommand.failed(store, error)
            }
            guard let record else {
                throw SilenceCommand.usage(
                    "no silence \(UserText.double(id)) in \(store.path) (see pricealert silence list)")
            }
            StandardError.write("silence \(record.id) expired at \(Timestamp.format(record.until))")
        }
    }
}
