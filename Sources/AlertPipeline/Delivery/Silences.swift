import AlertPolicy
import AlertStore

/// The silences of a state folder cannot be read; `description` names the folder or the file
/// and says why.
public struct SilencesUnreadable: Error, CustomStringConvertible {
    public var description: String

    init(description: String) {
        self.description = description
    }

    /// `store`'s file failed with `error`: its path and the reason (`StateStore.reason`). The
    /// one wording for a silences file that cannot be read or written, in every command.
    public init(_ store: SilenceStore, _ error: any Error) {
        description = "\(store.path): \(StateStore.reason(error))"
    }
}

extension SilenceSet {
    /// The silences of `folder` (a failure: the folder cannot be named, and why) for
    /// evaluation; none when the folder has no silences file.
    public static func load(_ folder: Result<StateFolder, StateError>) throws(SilencesUnreadable) -> SilenceSet {
        let opened: SilenceStore?
        do {
            opened = try SilenceStore.openIfPresent(folder.get())
        } catch {
            throw SilencesUnreadable(description: "\(error)")
        }
        guard let store = opened else { return SilenceSet() }
        defer { store.close() }
        do {
            return SilenceSet(records: try store.all())
        } catch {
            throw SilencesUnreadable(store, error)
        }
    }
}
