import AlertEngine
import AlertModel
import Foundation

/// The markets a state folder knows, for `listed` rules (Docs/rules.md "New listings: the
/// event"): `listings.txt` beside the database, one upper-cased symbol a line, `+SYMBOL` for a
/// market a list added whose first tick has not come yet. A file of its own (0600), replaced
/// whole (write and rename), so a crash leaves the old list or the new one. No file: no list
/// seen yet. A symbol holding a control character is never written (it could forge a line).
public struct ListingStore: Sendable {
    public let path: String

    public init(folder: StateFolder) {
        path = folder.path + "/listings.txt"
    }

    /// The saved known and pending symbols; `known` is nil when no list was saved.
    public func load() throws -> (known: Set<String>?, pending: Set<String>) {
        guard FileManager.default.fileExists(atPath: path) else { return (nil, []) }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var known = Set<String>(), pending = Set<String>()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            if line.hasPrefix("+") {
                pending.insert(String(line.dropFirst()))
                known.insert(String(line.dropFirst()))
            } else {
                known.insert(String(line))
            }
        }
        return (known, pending)
    }

    /// Replaces the file with `listings`' known and pending symbols (sorted, so it diffs well).
    public func save(_ listings: NewListings) throws {
        guard let known = listings.known else { return }
        var text = "# pricealert: the markets of the last market list; +SYMBOL waits for its first tick\n"
        for symbol in known.sorted() where !Symbol.hasControlCharacter(symbol) {
            text += (listings.pending.contains(symbol) ? "+" : "") + symbol + "\n"
        }
        try PrivateFile.replace(path, with: Array(text.utf8))
    }
}
