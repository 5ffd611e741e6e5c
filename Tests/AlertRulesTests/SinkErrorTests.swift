import Testing

@testable import AlertRules

/// One test case per kind of mistake in a sink. The `sinks` object is on line 2 of `r.json`
/// after `"sinks": `, so it starts at column 10.
@Suite struct SinkErrorTests {
    static let cases: [(sinks: String, expected: [String])] = [
        // sink not an object
        (#"{"ops": "https://x"}"#, [#"r.json:2:18: error: sink 'ops' must be an object, found string"#]),
        // sink without type
        (#"{"ops": {"url": "https://x"}}"#, [#"r.json:2:18: error: missing required key 'type'"#]),
        // sink type misspelled as a key
        (#"{"ops": {"typ": "file", "path": "a"}}"#, [#"r.json:2:19: error: unknown key 'typ' (did you mean 'type'?)"#]),
        // unknown sink type
        (
            #"{"ops": {"type": "slack"}}"#,
            [#"r.json:2:27: error: 'type' must be one of "stdout", "file", "webhook", "exec", found "slack""#]
        ),
        // unknown key in a sink
        (
            #"{"out": {"type": "stdout", "formt": "json"}}"#,
            [#"r.json:2:37: error: unknown key 'formt' (did you mean 'format'?)"#]
        ),
        // key of another sink type
        (
            #"{"out": {"type": "file", "path": "a.jsonl", "url": "https://x"}}"#,
            [#"r.json:2:54: error: unknown key 'url'"#]
        ),
        // stdout format
        (
            #"{"out": {"type": "stdout", "format": "xml"}}"#,
            [#"r.json:2:47: error: 'format' must be "text" or "json", found "xml""#]
        ),
        // file without path
        (#"{"log": {"type": "file"}}"#, [#"r.json:2:18: error: missing required key 'path'"#]),
        // file with empty path
        (#"{"log": {"type": "file", "path": ""}}"#, [#"r.json:2:43: error: 'path' must not be empty"#]),
        // webhook without url
        (#"{"ops": {"type": "webhook"}}"#, [#"r.json:2:18: error: webhook needs one of 'url', 'urlEnv' or 'urlFile'"#]),
        // webhook with two urls
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "urlEnv": "HOOK"}}"#,
            [#"r.json:2:58: error: webhook takes only one of 'url', 'urlEnv' or 'urlFile'"#]
        ),
        // webhook url not http(s)
        (
            #"{"ops": {"type": "webhook", "url": "ftp://hooks.example.com"}}"#,
            [#"r.json:2:45: error: webhook url must be http or https"#]
        ),
        // webhook url without host
        (
            #"{"ops": {"type": "webhook", "url": "https://"}}"#,
            [#"r.json:2:45: error: webhook url must be http or https"#]
        ),
        // webhook urlEnv empty
        (#"{"ops": {"type": "webhook", "urlEnv": ""}}"#, [#"r.json:2:48: error: 'urlEnv' must not be empty"#]),
        // webhook method
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "method": "post"}}"#,
            [
                #"r.json:2:68: error: 'method' must be one of "POST", "PUT", "PATCH", "GET", found "post" (did you mean 'POST'?)"#
            ]
        ),
        // webhook headers not an object
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "headers": ["a"]}}"#,
            [#"r.json:2:69: error: 'headers' must be an object of strings, found array"#]
        ),
        // webhook header not a string
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "headers": {"X-Id": 1}}}"#,
            [#"r.json:2:78: error: header 'X-Id' must be a string, found number"#]
        ),
        // webhook timeout bad
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "timeout": "soon"}}"#,
            [#"r.json:2:69: error: 'timeout' is not a valid duration: "soon" (use e.g. "90s", "10m", "1h30m", "1d")"#]
        ),
        // webhook timeout zero
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "timeout": "0s"}}"#,
            [#"r.json:2:69: error: 'timeout' must be longer than 0s"#]
        ),
        // webhook preset
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "preset": "teams"}}"#,
            [
                #"r.json:2:68: error: 'preset' must be one of "json", "slack", "discord", "ntfy", "telegram", "alertmanager", "alertmanager-webhook", found "teams""#
            ]
        ),
        // webhook two secrets
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "secretEnv": "S", "secretFile": "/s"}}"#,
            [#"r.json:2:76: error: webhook takes only one of 'secretEnv' or 'secretFile'"#]
        ),
        // webhook template not a string
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "template": {}}}"#,
            [#"r.json:2:70: error: 'template' must be a string, found object"#]
        ),
        // exec without command
        (#"{"page": {"type": "exec"}}"#, [#"r.json:2:19: error: missing required key 'command'"#]),
        // exec command empty
        (#"{"page": {"type": "exec", "command": []}}"#, [#"r.json:2:47: error: exec command must not be empty"#]),
        // exec command a string
        (
            #"{"page": {"type": "exec", "command": "page-oncall --team x"}}"#,
            [#"r.json:2:47: error: 'command' must be an array of strings (program and arguments), found string"#]
        ),
        // exec command with an empty argument
        (
            #"{"page": {"type": "exec", "command": ["page", ""]}}"#,
            [#"r.json:2:56: error: each argument in 'command' must not be empty"#]
        ),
        // exec timeout a number
        (
            #"{"page": {"type": "exec", "command": ["page"], "timeout": 5}}"#,
            [#"r.json:2:68: error: 'timeout' must be a duration string like "10m", found number"#]
        ),
        // concurrency zero
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "concurrency": 0}}"#,
            [#"r.json:2:73: error: 'concurrency' must be a whole number from 1 to 64"#]
        ),
        // concurrency a string
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "concurrency": "8"}}"#,
            [#"r.json:2:73: error: 'concurrency' must be a number, found string"#]
        ),
        // concurrency not whole
        (
            #"{"page": {"type": "exec", "command": ["page"], "concurrency": 2.5}}"#,
            [#"r.json:2:72: error: 'concurrency' must be a whole number from 1 to 64"#]
        ),
        // retry not an object
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "retry": "24h"}}"#,
            [#"r.json:2:67: error: 'retry' must be an object, found string"#]
        ),
        // retry key misspelled
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "retry": {"maxage": "1h"}}}"#,
            [#"r.json:2:68: error: unknown key 'maxage' (did you mean 'maxAge'?)"#]
        ),
        // retry maxAge zero
        (
            #"{"page": {"type": "exec", "command": ["page"], "retry": {"maxAge": "0s"}}}"#,
            [#"r.json:2:77: error: 'maxAge' must be longer than 0s"#]
        ),
        // retry backoff not a duration
        (
            #"{"page": {"type": "exec", "command": ["page"], "retry": {"backoff": "soon"}}}"#,
            [#"r.json:2:78: error: 'backoff' is not a valid duration: "soon" (use e.g. "90s", "10m", "1h30m", "1d")"#]
        ),
        // retry maxBackoff below backoff
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "retry": {"backoff": "10s", "maxBackoff": "1s"}}}"#,
            [#"r.json:2:100: error: 'maxBackoff' must not be shorter than 'backoff'"#]
        ),
        // delivery keys only on webhook and exec sinks
        (#"{"out": {"type": "stdout", "concurrency": 2}}"#, [#"r.json:2:37: error: unknown key 'concurrency'"#])
    ]

    @Test(arguments: cases)
    func reportsTheMistakeAtItsPlace(sinks: String, expected: [String]) {
        let rule = #"{"id": "r1", "symbol": "BTC", "when": {"price": {"above": 1}}}"#
        #expect(ruleDiagnostics(rule, sinks: sinks) == expected)
    }
}
