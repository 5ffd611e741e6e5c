import AlertModel
import AlertSinks

@testable import AlertRules

/// Loads `files` (path, text) together and returns the diagnostics as printed.
func diagnostics(_ files: [(String, String)]) -> [String] {
    switch RuleLoader.load(files.map { RuleSource(path: $0.0, bytes: Array($0.1.utf8)) }) {
    case .success: return []
    case .failure(let errors): return errors.diagnostics.map(\.description)
    }
}

/// Diagnostics of `r.json` holding `rule` as its only rule, on line 4, so a column in the
/// expectation is the column in `rule` itself.
func ruleDiagnostics(_ rule: String, sinks: String = "{}", version: Int = 1) -> [String] {
    diagnostics([("r.json", ruleFile(rule, sinks: sinks, version: version))])
}

/// A file whose one rule sits on line 4 from column 1. `sinks` goes on line 2.
func ruleFile(_ rule: String, sinks: String = "{}", version: Int = 1) -> String {
    "{\"version\": \(version),\n\"sinks\": \(sinks),\n\"rules\": [\n\(rule)\n]}"
}

/// The rule set of valid `files`, or nil (and the diagnostics recorded) when they are not valid.
func ruleSet(_ files: [(String, String)]) -> RuleSet? {
    try? RuleLoader.load(files.map { RuleSource(path: $0.0, bytes: Array($0.1.utf8)) }).get()
}

/// The one rule of a valid rule file built by `ruleFile`.
func onlyRule(_ rule: String, sinks: String = "{}") -> Rule? {
    ruleSet([("r.json", ruleFile(rule, sinks: sinks))])?.rules.first
}

/// The portfolio `ruleFileV2` defines unless told otherwise.
let defaultPortfolios = #"{"pf": {"holdings": {"BTC": 0.5, "eth": 4}, "cost": 40000}}"#

/// A `"version": 2` file whose one rule sits on line 4 from column 1. `portfolios` goes on line 2.
func ruleFileV2(_ rule: String, portfolios: String = defaultPortfolios) -> String {
    "{\"version\": 2,\n\"portfolios\": \(portfolios),\n\"rules\": [\n\(rule)\n]}"
}

/// Diagnostics of `r.json` built by `ruleFileV2`.
func ruleDiagnosticsV2(_ rule: String, portfolios: String = defaultPortfolios) -> [String] {
    diagnostics([("r.json", ruleFileV2(rule, portfolios: portfolios))])
}

/// The one rule of a valid file built by `ruleFileV2`.
func onlyRuleV2(_ rule: String, portfolios: String = defaultPortfolios) -> Rule? {
    ruleSet([("r.json", ruleFileV2(rule, portfolios: portfolios))])?.rules.first
}

/// The sources `ruleFileV3` defines unless told otherwise.
let defaultSources =
    #"{"binance": {"type": "binance"}, "kraken": {"type": "kraken", "endpoint": "http://127.0.0.1:9001"}}"#

/// The series `ruleFileV3` defines unless told otherwise.
let defaultSeries =
    #"{"btc-usd": {"median": ["binance:BTC/USDT", "kraken:btc/usd", "btc"], "maxAge": "30s", "quorum": 2}, "btc-gap": {"spread": ["kraken:BTC/USD", "binance:BTC/USDT"]}}"#

/// A `"version": 3` file whose one rule sits on line 5 from column 1: `sources` on line 2,
/// `series` on line 3.
func ruleFileV3(_ rule: String, sources: String = defaultSources, series: String = defaultSeries) -> String {
    "{\"version\": 3,\n\"sources\": \(sources),\n\"series\": \(series),\n\"rules\": [\n\(rule)\n]}"
}

/// Diagnostics of `r.json` built by `ruleFileV3`.
func ruleDiagnosticsV3(_ rule: String, sources: String = defaultSources, series: String = defaultSeries) -> [String] {
    diagnostics([("r.json", ruleFileV3(rule, sources: sources, series: series))])
}

/// The rule set of a valid file built by `ruleFileV3`.
func ruleSetV3(_ rule: String, sources: String = defaultSources, series: String = defaultSeries) -> RuleSet? {
    ruleSet([("r.json", ruleFileV3(rule, sources: sources, series: series))])
}
