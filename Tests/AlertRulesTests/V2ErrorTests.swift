import Testing

@testable import AlertRules

/// Every error a version 2 file can have (Docs/rules.md#version-2-errors), at its place. A rule
/// sits on line 4 of `r.json` and the file's `portfolios` on line 2 (see `ruleFileV2`); each
/// expected column was found from the text it points at.
@Suite struct V2ErrorTests {
    static let ruleCases: [(rule: String, expected: [String])] = [
        // all with one member
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": [{"price": {"above": 1}}]}}"#,
            [#"r.json:4:46: error: 'all' needs 2 to 8 conditions, found 1"#]
        ),
        // any with nine members
        (
            #"{"id": "a", "symbol": "BTC", "when": {"any": [{"price": {"above": 0}}, {"price": {"above": 1}}, {"price": {"above": 2}}, {"price": {"above": 3}}, {"price": {"above": 4}}, {"price": {"above": 5}}, {"price": {"above": 6}}, {"price": {"above": 7}}, {"price": {"above": 8}}]}}"#,
            [#"r.json:4:46: error: 'any' needs 2 to 8 conditions, found 9"#]
        ),
        // all not an array
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": {"price": {"above": 1}}}}"#,
            [#"r.json:4:46: error: 'all' must be an array of 2 to 8 conditions, found object"#]
        ),
        // nested four levels
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": [{"any": [{"all": [{"any": [{"price": {"above": 1}}, {"price": {"above": 2}}]}, {"price": {"above": 3}}]}, {"price": {"above": 4}}]}, {"price": {"above": 5}}]}}"#,
            [#"r.json:4:66: error: 'any' is nested 4 levels deep; at most 3 levels of 'all'/'any' are allowed"#]
        ),
        // empty member
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": [{"price": {"above": 1}}, {}]}}"#,
            [
                #"r.json:4:72: error: each member of 'all' needs exactly one condition: 'price', 'change', 'fromHigh', 'fromLow', 'move', 'pnl', 'all', 'any' or 'listed'"#
            ]
        ),
        // member not an object
        (
            #"{"id": "a", "symbol": "BTC", "when": {"any": [{"price": {"above": 1}}, "x"]}}"#,
            [#"r.json:4:72: error: each member of 'any' must be an object, found string"#]
        ),
        // two conditions in when
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}, "fromLow": {"window": "1h", "above": 5}}}"#,
            [
                #"r.json:4:62: error: 'when' has more than one condition ('price' and 'fromLow'); combine them with 'all' or 'any'"#
            ]
        ),
        // empty when
        (
            #"{"id": "a", "symbol": "BTC", "when": {}}"#,
            [
                #"r.json:4:38: error: 'when' needs exactly one condition: 'price', 'change', 'fromHigh', 'fromLow', 'move', 'pnl', 'all', 'any' or 'listed'"#
            ]
        ),
        // move inside all
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": [{"price": {"above": 1}}, {"move": {"step": 5}}]}}"#,
            [
                #"r.json:4:73: error: 'move' cannot be inside 'all' or 'any': a move alerts against its own reference price"#
            ]
        ),
        // move without percent or step
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {}}}"#,
            [#"r.json:4:47: error: 'move' needs one of 'percent' or 'step'"#]
        ),
        // move with both
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percent": 1, "step": 5}}}"#,
            [#"r.json:4:62: error: 'move' takes only one of 'percent' or 'step'"#]
        ),
        // move percent zero
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percent": 0}}}"#,
            [#"r.json:4:59: error: 'percent' must be more than 0, found 0"#]
        ),
        // move step negative
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"step": -5}}}"#,
            [#"r.json:4:56: error: 'step' must be more than 0, found -5"#]
        ),
        // move step not a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"step": "5"}}}"#,
            [#"r.json:4:56: error: 'step' must be a number, found string"#]
        ),
        // move percent too large
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percent": 1e7}}}"#,
            [#"r.json:4:59: error: 'percent' must be at most 1e6, found 1e7"#]
        ),
        // move key misspelled
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percnt": 5}}}"#,
            [#"r.json:4:48: error: unknown key 'percnt' (did you mean 'percent'?)"#]
        ),
        // move with repeat
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"step": 5}}, "repeat": "once"}"#,
            [#"r.json:4:71: error: 'repeat' is not allowed on 'move' rules: a move re-arms at each alert"#]
        ),
        // move with for
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"step": 5}}, "for": "1m"}"#,
            [#"r.json:4:68: error: 'for' is not allowed on 'move' rules"#]
        ),
        // percent move with hysteresis
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percent": 5}}, "hysteresis": 0}"#,
            [#"r.json:4:78: error: 'hysteresis' is not allowed on 'percent' moves (a 'step' move takes one)"#]
        ),
        // move with resolve
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"step": 5}}, "resolve": true}"#,
            [#"r.json:4:72: error: 'resolve' is not allowed on 'move' rules: they never re-arm, so nothing resolves"#]
        ),
        // for with a crossing
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"crossesAbove": 1}}, "for": "1m"}"#,
            [
                #"r.json:4:77: error: 'for' is not allowed with a crossing ('crossesAbove'): a crossing holds for one tick only"#
            ]
        ),
        // for with a crossing inside any
        (
            #"{"id": "a", "symbol": "BTC", "when": {"any": [{"price": {"above": 9}}, {"price": {"crossesBelow": 1}}]}, "for": "1m"}"#,
            [
                #"r.json:4:113: error: 'for' is not allowed with a crossing ('crossesBelow'): a crossing holds for one tick only"#
            ]
        ),
        // for of zero
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "for": "0s"}"#,
            [#"r.json:4:70: error: 'for' must be longer than 0s"#]
        ),
        // for not a duration
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "for": "5 minutes"}"#,
            [#"r.json:4:70: error: 'for' is not a valid duration: "5 minutes" (use e.g. "90s", "10m", "1h30m", "1d")"#]
        ),
        // for too long
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "for": "366d"}"#,
            [#"r.json:4:70: error: 'for' must be at most 365d, found "366d""#]
        ),
        // long window not whole hours
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "25h30m", "above": 1}}}"#,
            [#"r.json:4:60: error: 'window' over 24h must be a whole number of hours, found "25h30m""#]
        ),
        // window over 400d
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromHigh": {"window": "401d", "below": -10}}}"#,
            [#"r.json:4:62: error: 'window' must be at most 400d, found "401d""#]
        ),
        // short window not whole minutes
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromLow": {"window": "90s", "above": 1}}}"#,
            [#"r.json:4:61: error: 'window' must be a whole number of minutes, found "90s""#]
        ),
        // fromHigh without a side
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromHigh": {"window": "7d"}}}"#,
            [#"r.json:4:51: error: 'fromHigh' needs one of 'above' or 'below'"#]
        ),
        // fromLow without a window
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromLow": {"above": 3}}}"#,
            [#"r.json:4:50: error: missing required key 'window'"#]
        ),
        // fromHigh misspelled
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromHihg": {"window": "7d", "below": -10}}}"#,
            [#"r.json:4:39: error: unknown key 'fromHihg' (did you mean 'fromHigh'?)"#]
        ),
        // expires without a zone
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2026-12-31T00:00:00"}"#,
            [
                #"r.json:4:74: error: 'expires' must be an RFC 3339 time with a zone, like "2026-12-31T00:00:00Z", found "2026-12-31T00:00:00""#
            ]
        ),
        // expires a date
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2026-12-31"}"#,
            [
                #"r.json:4:74: error: 'expires' must be an RFC 3339 time with a zone, like "2026-12-31T00:00:00Z", found "2026-12-31""#
            ]
        ),
        // expires a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": 1798675200000}"#,
            [#"r.json:4:74: error: 'expires' must be a string, found number"#]
        ),
        // repeat object without every
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {}}"#,
            [#"r.json:4:73: error: missing required key 'every'"#]
        ),
        // repeat every zero
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "0m"}}"#,
            [#"r.json:4:83: error: 'every' must be longer than 0s"#]
        ),
        // repeat every misspelled
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"evry": "1h"}}"#,
            [#"r.json:4:74: error: unknown key 'evry' (did you mean 'every'?)"#]
        ),
        // repeat a boolean
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": true}"#,
            [#"r.json:4:73: error: 'repeat' must be "rearm", "once" or an object {"every": D}, found boolean"#]
        ),
        // repeat every on listed
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"listed": true}, "repeat": {"every": "1h"}}"#,
            [#"r.json:4:76: error: 'repeat' {"every": …} is not allowed on 'listed' rules"#]
        ),
        // resolve with repeat once
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": "once", "resolve": true}"#,
            [#"r.json:4:92: error: 'resolve' needs a rule that re-arms, but 'repeat' is "once""#]
        ),
        // resolve not a boolean
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "resolve": "yes"}"#,
            [#"r.json:4:74: error: 'resolve' must be true or false, found string"#]
        ),
        // priority unknown
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "priority": "urgent"}"#,
            [#"r.json:4:75: error: 'priority' must be "high" or "normal", found "urgent""#]
        ),
        // priority capitalised
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "priority": "High"}"#,
            [#"r.json:4:75: error: 'priority' must be "high" or "normal", found "High" (did you mean 'high'?)"#]
        ),
        // priority misspelled key
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "priorty": "high"}"#,
            [#"r.json:4:63: error: unknown key 'priorty' (did you mean 'priority'?)"#]
        ),
        // unknown portfolio close to one
        (
            #"{"id": "a", "portfolio": "pff", "when": {"pnl": {"below": -10}}}"#,
            [#"r.json:4:26: error: unknown portfolio 'pff' (did you mean 'pf'?)"#]
        ),
        // unknown portfolio
        (
            #"{"id": "a", "portfolio": "savings", "when": {"price": {"below": 10}}}"#,
            [#"r.json:4:26: error: unknown portfolio 'savings'"#]
        ),
        // portfolio misspelled key
        (
            #"{"id": "a", "portfolo": "pf", "when": {"price": {"below": 10}}}"#,
            [#"r.json:4:13: error: unknown key 'portfolo' (did you mean 'portfolio'?)"#]
        ),
        // portfolio empty name
        (
            #"{"id": "a", "portfolio": "", "when": {"price": {"below": 10}}}"#,
            [#"r.json:4:26: error: 'portfolio' must not be empty"#]
        ),
        // portfolio and symbol
        (
            #"{"id": "a", "portfolio": "pf", "symbol": "BTC", "when": {"price": {"below": 10}}}"#,
            [#"r.json:4:32: error: rule has more than one scope ('portfolio' and 'symbol'); give exactly one"#]
        ),
        // no scope
        (
            #"{"id": "a", "when": {"price": {"below": 10}}}"#,
            [#"r.json:4:1: error: rule needs a scope: one of 'symbol', 'symbols', 'match' or 'portfolio'"#]
        ),
        // pnl outside a portfolio rule
        (
            #"{"id": "a", "symbol": "BTC", "when": {"pnl": {"below": -10}}}"#,
            [
                #"r.json:4:39: error: 'pnl' needs a portfolio rule ("portfolio": NAME): it compares a portfolio's value with its cost"#
            ]
        ),
        // pnl without a side
        (
            #"{"id": "a", "portfolio": "pf", "when": {"pnl": {"window": "1h"}}}"#,
            [
                #"r.json:4:48: error: 'pnl' needs one of 'above' or 'below'"#,
                #"r.json:4:49: error: unknown key 'window'"#
            ]
        ),
        // listed on a symbol rule
        (
            #"{"id": "a", "symbol": "BTC", "when": {"listed": true}}"#,
            [#"r.json:4:39: error: 'listed' needs a 'match' rule: it fires for each new market the market list adds"#]
        ),
        // listed false
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"listed": false}}"#,
            [#"r.json:4:59: error: 'listed' must be true, found false"#]
        ),
        // listed inside any
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"any": [{"listed": true}, {"price": {"above": 1}}]}}"#,
            [#"r.json:4:58: error: 'listed' cannot be inside 'all' or 'any'"#]
        ),
        // for on listed
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"listed": true}, "for": "1m"}"#,
            [#"r.json:4:73: error: 'for' is not allowed on 'listed' rules"#]
        ),
        // hysteresis on listed
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"listed": true}, "hysteresis": 1}"#,
            [#"r.json:4:80: error: 'hysteresis' is not allowed on 'listed' rules"#]
        ),
        // hysteresis on a range, alone
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": [1, 2]}}, "hysteresis": 1}"#,
            [#"r.json:4:83: error: 'hysteresis' is not allowed on 'inside' conditions"#]
        ),
        // a portfolio's symbol in a symbol rule
        (
            #"{"id": "a", "symbol": "@pf", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:23: error: symbol "@pf" is a portfolio's value: only a rule with "portfolio": NAME sees it"#]
        ),
        (
            #"{"id": "a", "symbols": ["BTC", "@PF"], "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:32: error: symbol "@PF" is a portfolio's value: only a rule with "portfolio": NAME sees it"#]
        )
    ]

    static let portfolioCases: [(portfolios: String, expected: [String])] = [
        // empty holdings
        (
            #"{"pf": {"holdings": {}}}"#,
            [#"r.json:2:35: error: 'holdings' must not be empty: give each symbol held and its amount"#]
        ),
        // amount zero
        (#"{"pf": {"holdings": {"BTC": 0}}}"#, [#"r.json:2:43: error: amount of 'BTC' must be more than 0, found 0"#]),
        // amount negative
        (
            #"{"pf": {"holdings": {"BTC": 1, "ETH": -2}}}"#,
            [#"r.json:2:53: error: amount of 'ETH' must be more than 0, found -2"#]
        ),
        // amount a string
        (
            #"{"pf": {"holdings": {"BTC": "1"}}}"#,
            [#"r.json:2:43: error: amount of 'BTC' must be a number, found string"#]
        ),
        // cost zero
        (
            #"{"pf": {"holdings": {"BTC": 1}, "cost": 0}}"#,
            [#"r.json:2:55: error: 'cost' must be more than 0, found 0"#]
        ),
        // missing holdings
        (#"{"pf": {"cost": 10}}"#, [#"r.json:2:22: error: missing required key 'holdings'"#]),
        // holdings misspelled
        (
            #"{"pf": {"holding": {"BTC": 1}}}"#,
            [#"r.json:2:23: error: unknown key 'holding' (did you mean 'holdings'?)"#]
        ),
        // bad name
        (
            #"{"my pf": {"holdings": {"BTC": 1}}}"#,
            [#"r.json:2:16: error: portfolio name must be 1 to 64 letters, digits, '.', '_' or '-', found "my pf""#]
        ),
        // portfolio not an object
        (#"{"pf": ["BTC"]}"#, [#"r.json:2:22: error: portfolio 'pf' must be an object, found array"#]),
        // holding twice
        (
            #"{"pf": {"holdings": {"BTC": 1, "btc": 2}}}"#,
            [#"r.json:2:46: error: holding 'BTC' is given twice (symbols ignore case) (first at line 2, column 36)"#]
        ),
        // holding of a portfolio symbol
        (
            #"{"pf": {"holdings": {"@X": 1}}}"#,
            [
                #"r.json:2:36: error: a holding's symbol must not start with '@' (those are portfolio values), found "@X""#
            ]
        ),
        // portfolios not an object
        (#"[]"#, [#"r.json:2:15: error: 'portfolios' must be an object, found array"#]),
        // names differing only in case
        (
            #"{"pf": {"holdings": {"A": 1}}, "PF": {"holdings": {"B": 1}}}"#,
            [
                #"r.json:2:46: error: portfolio 'PF' has the same symbol '@PF' as portfolio 'pf' (first defined at r.json:2:16)"#
            ]
        ),
        // name equal to a rule id
        (#"{"a": {"holdings": {"A": 1}}}"#, [#"r.json:4:8: error: duplicate id 'a' (first defined at r.json:2:16)"#])
    ]
    static let versionOneCases: [(rule: String, expected: [String])] = [
        // all
        (
            #"{"id": "a", "symbol": "BTC", "when": {"all": [{"price": {"above": 1}}, {"price": {"below": 2}}]}}"#,
            [#"r.json:4:39: error: 'all' needs "version": 2"#]
        ),
        // any
        (
            #"{"id": "a", "symbol": "BTC", "when": {"any": [{"price": {"above": 1}}, {"price": {"below": 2}}]}}"#,
            [#"r.json:4:39: error: 'any' needs "version": 2"#]
        ),
        // fromHigh
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromHigh": {"window": "7d", "below": -10}}}"#,
            [#"r.json:4:39: error: 'fromHigh' needs "version": 2"#]
        ),
        // fromLow
        (
            #"{"id": "a", "symbol": "BTC", "when": {"fromLow": {"window": "7d", "above": 10}}}"#,
            [#"r.json:4:39: error: 'fromLow' needs "version": 2"#]
        ),
        // move
        (
            #"{"id": "a", "symbol": "BTC", "when": {"move": {"percent": 5}}}"#,
            [#"r.json:4:39: error: 'move' needs "version": 2"#]
        ),
        // pnl
        (
            #"{"id": "a", "symbol": "BTC", "when": {"pnl": {"below": -10}}}"#,
            [#"r.json:4:39: error: 'pnl' needs "version": 2"#]
        ),
        // listed
        (
            #"{"id": "a", "match": {"quote": "USD"}, "when": {"listed": true}}"#,
            [#"r.json:4:49: error: 'listed' needs "version": 2"#]
        ),
        // for
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "for": "1m"}"#,
            [#"r.json:4:63: error: 'for' needs "version": 2"#]
        ),
        // expires
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2030-01-01T00:00:00Z"}"#,
            [#"r.json:4:63: error: 'expires' needs "version": 2"#]
        ),
        // resolve
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "resolve": true}"#,
            [#"r.json:4:63: error: 'resolve' needs "version": 2"#]
        ),
        // priority
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "priority": "high"}"#,
            [#"r.json:4:63: error: 'priority' needs "version": 2"#]
        ),
        // repeat every
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1h"}}"#,
            [#"r.json:4:63: error: 'repeat' {"every": …} needs "version": 2"#]
        ),
        // portfolio scope
        (
            #"{"id": "a", "portfolio": "pf", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:13: error: 'portfolio' needs "version": 2"#]
        ),
        // a window over 30d
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "31d", "above": 1}}}"#,
            [#"r.json:4:60: error: 'window' must be at most 30d, found "31d""#]
        ),
        // repeat a boolean, as before
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": true}"#,
            [#"r.json:4:73: error: 'repeat' must be "rearm" or "once", found boolean"#]
        )
    ]

    @Test(arguments: ruleCases)
    func reportsTheMistakeAtItsPlace(rule: String, expected: [String]) {
        #expect(ruleDiagnosticsV2(rule) == expected)
    }

    @Test(arguments: portfolioCases)
    func reportsThePortfolioMistakeAtItsPlace(portfolios: String, expected: [String]) {
        #expect(
            ruleDiagnosticsV2(#"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}}"#, portfolios: portfolios)
                == expected)
    }

    /// A version 2 key in a version 1 file names the version it needs.
    @Test(arguments: versionOneCases)
    func versionTwoKeysInAVersionOneFile(rule: String, expected: [String]) {
        #expect(ruleDiagnostics(rule) == expected)
    }

    @Test func portfoliosInAVersionOneFile() {
        let text = #"{"version": 1, "portfolios": {"pf": {"holdings": {"BTC": 1}}}, "rules": []}"#
        #expect(diagnostics([("r.json", text)]) == [#"r.json:1:16: error: 'portfolios' needs "version": 2"#])
    }

    @Test func defaultsRepeatEveryInAVersionOneFile() {
        let text = #"{"version": 1, "defaults": {"repeat": {"every": "1h"}}, "rules": []}"#
        #expect(diagnostics([("r.json", text)]) == [#"r.json:1:29: error: 'repeat' {"every": …} needs "version": 2"#])
    }

    /// `repeat: "once"` from `defaults` with `resolve` says where the `once` comes from.
    @Test func resolveWithADefaultOnce() {
        let text = """
            {"version": 2, "defaults": {"repeat": "once"},
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "resolve": true},
                       {"id": "b", "symbol": "BTC", "when": {"price": {"above": 1}}, "resolve": true, "repeat": "rearm"}]}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                #"r.json:2:85: error: 'resolve' needs a rule that re-arms, but 'repeat' is "once" (from 'defaults'; set "repeat": "rearm" on this rule)"#
            ])
    }

    /// The portfolio a `pnl` rule names may be in another file, and so may its missing `cost`.
    @Test func pnlNeedsACostAcrossFiles() {
        let portfolios = #"{"version": 2, "portfolios": {"nc": {"holdings": {"BTC": 1}}}, "rules": []}"#
        let rules =
            #"{"version": 2, "rules": [{"id": "a", "portfolio": "nc", "when": {"any": [{"pnl": {"below": -10}}, {"price": {"below": 5}}]}}]}"#
        #expect(
            diagnostics([("p.json", portfolios), ("r.json", rules)]) == [
                "r.json:1:75: error: 'pnl' needs portfolio 'nc' to have a 'cost'"
            ])
        #expect(
            diagnostics([("r.json", rules)]) == [
                "r.json:1:51: error: unknown portfolio 'nc' (no file defines 'portfolios')"
            ])
    }

    @Test func versionMustBeOneTwoOrThree() {
        #expect(
            diagnostics([("r.json", #"{"version": 4, "rules": []}"#)]) == [
                "r.json:1:13: error: 'version' must be 1, 2 or 3, found 4"
            ])
        #expect(
            diagnostics([("r.json", #"{"version": "2", "rules": []}"#)])
                == ["r.json:1:13: error: 'version' must be the number 1, 2 or 3, found string"])
    }
}
