import AlertPolicy
import AlertStore

/// The silences of a state folder cannot be read; `description` names the folder or the file
/// and says why.
public struct SilencesUnreadable: Error, CustomStringConvertible {
    public var description: String
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
            throw SilencesUnreadable(description: "\(store.path): \(StateStore.reason(error))")
        }
    }
}
