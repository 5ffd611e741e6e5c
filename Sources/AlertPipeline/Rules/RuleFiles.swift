import AlertModel
import AlertRules
import AlertSinks
import AlertStore

#if canImport(Glibc)
import Glibc
#endif

/// Rule files as the commands load them: together (`RuleLoader`), and for `check` through the
/// rules cache of its state folder. What is wrong comes back as a `RuleLoadFailure`, which
/// `CommandInputs.rules` makes a `CommandFailure`.
public enum RuleFiles {
    /// `paths` loaded together, the rules kept in an array of their size: they grow by doubling
    /// while they are read; once the file and what checking it kept are freed, the spare
    /// capacity would be held for the whole run (see Docs/performance.md).
    public static func load(_ paths: [String]) -> Result<RuleSet, RuleLoadFailure> {
        switch RuleLoader.loadFiles(paths: paths) {
        case .success(var ruleSet):
            if ruleSet.rules.capacity > ruleSet.rules.count + ruleSet.rules.count / 8 {
                ruleSet.rules = ruleSet.rules.withUnsafeBufferPointer { Array($0) }
            }
            return .success(ruleSet)
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// `paths` loaded through the rules cache of `check` (a short run: no pages given back):
    /// rules the cache holds for these very files are taken from it (the files' sinks are still
    /// read); otherwise the files are checked, and `missedKey` is the key to store the rule set
    /// under once the state folder is open and locked.
    public static func load(
        _ paths: [String], cache: RuleCache?
    ) -> Result<(RuleSet, missedKey: [UInt8]?), RuleLoadFailure> {
        RuleLoader.readFiles(paths: paths).flatMap { sources in
            let key = cache == nil ? nil : RuleCache.key(files: sources.map(\.bytes))
            if let cache, let key, let cached = cache.entry(for: key) {
                return RuleLoader.load(sources, cachedRules: cached.rules, rulesEnds: cached.rulesEnds)
                    .mapError(RuleLoadFailure.invalid).map { ($0, nil) }
            }
            return RuleLoader.load(sources).mapError(RuleLoadFailure.invalid).map { ($0, key) }
        }
    }

    /// The rules `demo` runs, and the files a SIGHUP re-reads: `given` when any, each alert then
    /// printed on standard output too; else the `demoFiles` when every one of them exists (read
    /// together); else their built-in copies (no file to re-read). All or none come from disk, so
    /// a folder holding only some of them never mixes its copies with the built-in ones.
    public static func demo(
        given: [String], demoFiles: [(path: String, builtIn: String)]
    ) -> (rules: Result<RuleSet, RuleLoadFailure>, paths: [String]) {
        if !given.isEmpty { return (load(given).map(AlertListing.printingEveryAlert), given) }
        let paths = demoFiles.map(\.path)
        if paths.allSatisfy({ access($0, F_OK) == 0 }) { return (load(paths), paths) }
        let sources = demoFiles.map { RuleSource(path: "(built-in \($0.path))", bytes: Array($0.builtIn.utf8)) }
        return (RuleLoader.load(sources).mapError(RuleLoadFailure.invalid), [])
    }
}
