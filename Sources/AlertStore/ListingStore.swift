import AlertEngine
import AlertModel
import Foundation

/// The markets a state folder knows, for `listed` rules (Docs/rules.md "New listings: the
/// event"), one file per market list: `listings.txt` for the list of ticks without a source,
/// `listings-NAME.txt` for rule-file source NAME's (rules v3 §3). Each holds one upper-cased
/// symbol a line, `+SYMBOL` for a market a list added whose first tick has not come yet. Files
/// of their own (0600), each replaced whole (write and rename), so a crash leaves the old list
/// or the new one. No file: no list seen yet. A symbol holding a control character is never
/// written (it could forge a line).
public struct ListingStore: Sendable {
    public let folder: String

    public init(folder: StateFolder) {
        self.folder = folder.path
    }

    /// The file of `source`'s list (nil: ticks without a source). Source names are
    /// `[a-z0-9-]{1,32}` (rules v3 §2): safe in a file name.
    public func path(of source: String?) -> String {
        folder + "/" + (source.map { "listings-\($0).txt" } ?? "listings.txt")
    }

    /// The file of the list of ticks without a source.
    public var path: String { path(of: nil) }

    /// The saved known and pending symbols of the list of ticks without a source and of each
    /// `sources` list (a source without a file is left out).
    public func load(sources: [String] = []) throws -> [SavedListings] {
        var saved: [SavedListings] = []
        for source in [nil] + sources.map(Optional.some) {
            let path = path(of: source)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ListingStoreError(path: path, reason: "\(error)")
            }
            var known = Set<String>(), pending = Set<String>()
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                if line.hasPrefix("+") {
                    pending.insert(String(line.dropFirst()))
                    known.insert(String(line.dropFirst()))
                } else {
                    known.insert(String(line))
                }
            }
            saved.append(SavedListings(source: source, known: known, pending: pending))
        }
        return saved
    }

    /// Replaces each list's file with its known and pending symbols (sorted, so it diffs well).
    public func save(_ lists: [NewListings]) throws {
        for listings in lists {
            guard let known = listings.known else { continue }
            var text = "# pricealert: the markets of the last market list; +SYMBOL waits for its first tick\n"
            for symbol in known.sorted() where !Symbol.hasControlCharacter(symbol) {
                text += (listings.pending.contains(symbol) ? "+" : "") + symbol + "\n"
            }
            try PrivateFile.replace(path(of: listings.source), with: Array(text.utf8))
        }
    }
}

/// A listings file that cannot be read, naming it.
public struct ListingStoreError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot read \(path): \(reason)" }
}
