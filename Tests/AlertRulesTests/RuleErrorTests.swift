import Testing

@testable import AlertRules

/// One test case per kind of mistake inside a rule: the rule sits on line 4 of `r.json`, so the
/// columns below are columns in the rule text.
@Suite struct RuleErrorTests {
    static let cases: [(rule: String, expected: [String])] = [
        // unknown key, close to a known one
        (
            #"{"id": "a", "symbl": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:13: error: unknown key 'symbl' (did you mean 'symbol'?)"#]
        ),
        // unknown key differing only in case
        (
            #"{"id": "a", "symbol": "BTC", "When": {"price": {"above": 1}}}"#,
            [#"r.json:4:30: error: unknown key 'When' (did you mean 'when'?)"#]
        ),
        // unknown key, nothing close
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "colour": "red"}"#,
            [#"r.json:4:63: error: unknown key 'colour'"#]
        ),
        // missing id
        (#"{"symbol": "BTC", "when": {"price": {"above": 1}}}"#, [#"r.json:4:1: error: missing required key 'id'"#]),
        // missing when
        (#"{"id": "a", "symbol": "BTC"}"#, [#"r.json:4:1: error: missing required key 'when'"#]),
        // id not a string
        (
            #"{"id": 7, "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:8: error: 'id' must be a string, found number"#]
        ),
        // id with a space
        (
            #"{"id": "btc 100k", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:8: error: 'id' must be 1 to 64 letters, digits, '.', '_' or '-', found "btc 100k""#]
        ),
        // id empty
        (
            #"{"id": "", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:8: error: 'id' must be 1 to 64 letters, digits, '.', '_' or '-', found """#]
        ),
        // id longer than 64
        (
            #"{"id": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:4:8: error: 'id' must be 1 to 64 letters, digits, '.', '_' or '-', found "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""#
            ]
        ),
        // no scope
        (
            #"{"id": "a", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:1: error: rule needs a scope: one of 'symbol', 'symbols' or 'match'"#]
        ),
        // two scopes
        (
            #"{"id": "a", "symbol": "BTC", "match": {"future": true}, "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:30: error: rule has more than one scope ('symbol' and 'match'); give exactly one"#]
        ),
        // symbol not a string
        (
            #"{"id": "a", "symbol": ["BTC"], "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:23: error: 'symbol' must be a string, found array"#]
        ),
        // empty symbol
        (
            #"{"id": "a", "symbol": "", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:23: error: 'symbol' must not be empty"#]
        ),
        // symbols not an array
        (
            #"{"id": "a", "symbols": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:24: error: 'symbols' must be an array of strings, found string"#]
        ),
        // symbols empty
        (
            #"{"id": "a", "symbols": [], "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:24: error: 'symbols' must not be empty"#]
        ),
        // symbols with a non-string and an empty string
        (
            #"{"id": "a", "symbols": ["BTC", 1, ""], "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:4:32: error: each symbol in 'symbols' must be a string, found number"#,
                #"r.json:4:35: error: each symbol in 'symbols' must not be empty"#
            ]
        ),
        // when not an object
        (
            #"{"id": "a", "symbol": "BTC", "when": "price > 1"}"#,
            [#"r.json:4:38: error: 'when' must be an object, found string"#]
        ),
        // when without a condition
        (
            #"{"id": "a", "symbol": "BTC", "when": {}}"#,
            [#"r.json:4:38: error: 'when' needs exactly one condition: 'price' or 'change'"#]
        ),
        // when with two conditions
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}, "change": {"window": "1h", "above": 5}}}"#,
            [#"r.json:4:62: error: 'when' has more than one condition ('price' and 'change'); use one rule for each"#]
        ),
        // unknown key in when
        (
            #"{"id": "a", "symbol": "BTC", "when": {"prices": {"above": 1}}}"#,
            [#"r.json:4:39: error: unknown key 'prices' (did you mean 'price'?)"#]
        ),
        // price without an operator
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {}}}"#,
            [
                #"r.json:4:48: error: 'price' needs exactly one operator: above, below, crossesAbove, crossesBelow, inside or outside"#
            ]
        ),
        // price with two operators
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1, "below": 2}}}"#,
            [#"r.json:4:61: error: 'price' has more than one operator ('above' and 'below'); use one rule for each"#]
        ),
        // unknown operator, close
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"crossAbove": 1}}}"#,
            [#"r.json:4:49: error: unknown operator 'crossAbove' (did you mean 'crossesAbove'?)"#]
        ),
        // unknown operator, nothing close
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"greaterThan": 1}}}"#,
            [
                #"r.json:4:48: error: 'price' needs exactly one operator: above, below, crossesAbove, crossesBelow, inside or outside"#,
                #"r.json:4:49: error: unknown operator 'greaterThan'"#
            ]
        ),
        // threshold not a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"crossesBelow": "100"}}}"#,
            [#"r.json:4:65: error: 'crossesBelow' must be a number, found string"#]
        ),
        // threshold not finite
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1e999}}}"#,
            [#"r.json:4:58: error: 'above' must be a finite number, found 1e999"#]
        ),
        // range not an array
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": 5}}}"#,
            [#"r.json:4:59: error: 'inside' must be an array of two numbers [low, high], found number"#]
        ),
        // range with three numbers
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"outside": [1, 2, 3]}}}"#,
            [#"r.json:4:60: error: 'outside' must have exactly two numbers [low, high], found 3"#]
        ),
        // range bound not a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": [1, "2"]}}}"#,
            [#"r.json:4:63: error: 'inside' high bound must be a number, found string"#]
        ),
        // range with L = H
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": [5, 5]}}}"#,
            [#"r.json:4:59: error: 'inside' low bound must be less than high bound, found [5, 5]"#]
        ),
        // range with L > H
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"outside": [6, 5.5]}}}"#,
            [#"r.json:4:60: error: 'outside' low bound must be less than high bound, found [6, 5.5]"#]
        ),
        // change without window
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"above": 5}}}"#,
            [#"r.json:4:49: error: missing required key 'window'"#]
        ),
        // change without above or below
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "1h"}}}"#,
            [#"r.json:4:49: error: 'change' needs one of 'above' or 'below'"#]
        ),
        // change with above and below
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "1h", "above": 5, "below": -5}}}"#,
            [#"r.json:4:78: error: 'change' takes only one of 'above' or 'below'"#]
        ),
        // unknown key in change
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"windw": "1h", "above": 5}}}"#,
            [#"r.json:4:50: error: unknown key 'windw' (did you mean 'window'?)"#]
        ),
        // window not whole minutes
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "90s", "above": 5}}}"#,
            [#"r.json:4:60: error: 'window' must be a whole number of minutes, found "90s""#]
        ),
        // window under a minute
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "30s", "above": 5}}}"#,
            [#"r.json:4:60: error: 'window' must be at least 1 minute, found "30s""#]
        ),
        // window of zero
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "0m", "above": 5}}}"#,
            [#"r.json:4:60: error: 'window' must be at least 1 minute, found "0m""#]
        ),
        // window not a duration
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "1 hour", "below": -5}}}"#,
            [#"r.json:4:60: error: 'window' is not a valid duration: "1 hour" (use e.g. "90s", "10m", "1h30m", "1d")"#]
        ),
        // window a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": 60, "below": -5}}}"#,
            [#"r.json:4:60: error: 'window' must be a duration string like "10m", found number"#]
        ),
        // change threshold not finite
        (
            #"{"id": "a", "symbol": "BTC", "when": {"change": {"window": "1h", "below": -1e400}}}"#,
            [#"r.json:4:75: error: 'below' must be a finite number, found -1e400"#]
        ),
        // cooldown a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "cooldown": 600}"#,
            [#"r.json:4:75: error: 'cooldown' must be a duration string like "10m", found number"#]
        ),
        // cooldown not a duration
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "cooldown": "10 min"}"#,
            [
                #"r.json:4:75: error: 'cooldown' is not a valid duration: "10 min" (use e.g. "90s", "10m", "1h30m", "1d")"#
            ]
        ),
        // repeat not rearm/once
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": "always"}"#,
            [#"r.json:4:73: error: 'repeat' must be "rearm" or "once", found "always""#]
        ),
        // repeat not a string
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": true}"#,
            [#"r.json:4:73: error: 'repeat' must be "rearm" or "once", found boolean"#]
        ),
        // hysteresis negative
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "hysteresis": -0.5}"#,
            [#"r.json:4:77: error: 'hysteresis' must be 0 or more, found -0.5"#]
        ),
        // hysteresis not a number
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "hysteresis": "1%"}"#,
            [#"r.json:4:77: error: 'hysteresis' must be a number, found string"#]
        ),
        // hysteresis on inside
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": [1, 2]}}, "hysteresis": 1}"#,
            [#"r.json:4:83: error: 'hysteresis' is not allowed on 'inside' conditions"#]
        ),
        // hysteresis 0 on outside
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"outside": [1, 2]}}, "hysteresis": 0}"#,
            [#"r.json:4:84: error: 'hysteresis' is not allowed on 'outside' conditions"#]
        ),
        // notify not an array
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": "stdout"}"#,
            [#"r.json:4:73: error: 'notify' must be an array of sink names, found string"#]
        ),
        // notify with a non-string
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["stdout", null]}"#,
            [#"r.json:4:84: error: each sink name in 'notify' must be a string, found null"#]
        ),
        // notify naming an unknown sink
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["stdut", "pager"]}"#,
            [
                #"r.json:4:74: error: unknown sink 'stdut' in 'notify' (did you mean 'stdout'?)"#,
                #"r.json:4:83: error: unknown sink 'pager' in 'notify'"#
            ]
        ),
        // message with unknown placeholders
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "message": "{{symbol}} at {{prce}} {{ bidding }}"}"#,
            [
                #"r.json:4:89: error: unknown placeholder '{{prce}}' in 'message' (did you mean '{{price}}'?)"#,
                #"r.json:4:98: error: unknown placeholder '{{bidding}}' in 'message' (known: {{rule}} {{symbol}} {{price}} {{value}} {{threshold}} {{condition}} {{time}} {{kind}} {{reminder}})"#
            ]
        ),
        // message not a string
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "message": ["hi"]}"#,
            [#"r.json:4:74: error: 'message' must be a string, found array"#]
        ),
        // enabled not a boolean
        (
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "enabled": "no"}"#,
            [#"r.json:4:74: error: 'enabled' must be true or false, found string"#]
        ),
        // match not an object
        (
            #"{"id": "a", "match": "USD", "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:22: error: 'match' must be an object, found string"#]
        ),
        // empty match
        (
            #"{"id": "a", "match": {}, "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:4:22: error: 'match' is empty and would match every market; give at least one of 'future', 'quote', 'base' or 'active'"#
            ]
        ),
        // match with bad values
        (
            #"{"id": "a", "match": {"future": "no", "quote": "", "base": 5, "active": 1}, "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:4:33: error: 'future' must be true or false, found string"#,
                #"r.json:4:48: error: 'quote' must not be empty"#,
                #"r.json:4:60: error: 'base' must be a string, found number"#,
                #"r.json:4:73: error: 'active' must be true or false, found number"#
            ]
        ),
        // unknown key in match
        (
            #"{"id": "a", "match": {"quot": "USD"}, "when": {"price": {"above": 1}}}"#,
            [#"r.json:4:23: error: unknown key 'quot' (did you mean 'quote'?)"#]
        ),
        // rule not an object
        (#""btc-above""#, [#"r.json:4:1: error: each rule must be an object, found string"#])
    ]

    @Test(arguments: cases)
    func reportsTheMistakeAtItsPlace(rule: String, expected: [String]) {
        #expect(ruleDiagnostics(rule) == expected)
    }
}
