import AlertPolicy
import AlertStore
import Logging
import Platform
import ServiceLifecycle

// Written here: a poll of the silences file's size and modification time (stat, twice a
// second's worth of syscalls), since no package in use watches files and the file is changed by
// other processes (`pricealert silence add|expire`).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the silences of a state folder or store to the policy stages whenever they change (a
/// silence added or expired by another process), within `every` of the change. In a state
/// folder nothing is read while `silences.sqlite` and its write-ahead log keep their size and
/// time; a PostgreSQL store's table is read every `every`. The first look reads them, so a change
/// made while the daemon started is not missed.
public struct SilenceWatcher: Service {
    let store: any DurableStore
    let logger: Logger
    /// Receives the silences in force after each change.
    let apply: @Sendable (SilenceSet) -> Void
    var every: Duration = .seconds(1)

    public init(store: any DurableStore, logger: Logger, apply: @escaping @Sendable (SilenceSet) -> Void) {
        self.store = store
        self.logger = logger
        self.apply = apply
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var seen: [FileStamp?]?
            var looked = false
            var current: SilenceSet?
            while !Task.isCancelled {
                let stamp = store.localFolder.map { folder in
                    [".sqlite", ".sqlite-wal"].map { FileStamp(folder.path + "/silences" + $0) }
                }
                if !looked || stamp == nil || stamp != seen {
                    (seen, looked) = (stamp, true)
                    if let silences = await read(), silences != current {
                        if current != nil || !silences.silences.isEmpty {
                            let now = Wallclock.millis()
                            let inForce = silences.silences.filter { $0.from <= now && now < $0.until }.count
                            let place = store.localFolder.map { "\($0.path)/silences.sqlite" } ?? store.place
                            logger.info("silences changed: \(inForce) in force (\(place))")
                        }
                        current = silences
                        apply(silences)
                    }
                }
                do { try await Task.sleep(for: every) } catch { return }
            }
        }
    }

    /// Nil when the silences cannot be read now (logged; the silences in force stay).
    private func read() async -> SilenceSet? {
        do {
            return SilenceSet(records: try await store.silenceRecords())
        } catch {
            let place = store.localFolder?.path ?? store.place
            logger.warning(
                "cannot read the silences in \(place): \(store.describe(error)); the ones read before stay in force")
            return nil
        }
    }
}

/// What changes when a file is written: its inode, size and modification time.
private struct FileStamp: Equatable {
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    /// Nil when there is no such file.
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
    }
}

extension SilenceSet {
    /// The stored silences for evaluation. Patterns were checked by `silence add`; a row that is
    /// not one silences nothing.
    public init(records: [SilenceRecord]) {
        self.init(
            records.compactMap { record in
                guard let rule = try? Glob(record.rule), let symbol = try? Glob(record.symbol) else { return nil }
                return Silence(id: record.id, rule: rule, symbol: symbol, from: record.from, until: record.until)
            })
    }
}
