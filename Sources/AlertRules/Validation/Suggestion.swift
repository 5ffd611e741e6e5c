/// "Did you mean" hints: unknown keys are almost always typos of a known one (Docs/rules.md#file-structure).
enum Suggestion {
    /// The candidate `word` most likely meant: one equal to it ignoring case, else the
    /// nearest within an edit distance of 2 (the first one listed wins a tie). Nil when none
    /// is that close. A word much longer than every candidate costs nothing to compare.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let longest = candidates.lazy.map(\.unicodeScalars.count).max() ?? 0
        guard word.unicodeScalars.count <= longest + 2 else { return nil }
        if let sameLetters = candidates.first(where: { $0.lowercased() == word.lowercased() }) {
            return sameLetters
        }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// ` (did you mean 'x'?)` for a close candidate, else an empty string.
    static func hint(for word: String, among candidates: [String]) -> String {
        closest(to: word, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
