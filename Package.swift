// swift-tools-version:6.0
// pricealert: Feed ──ticks──▶ Evaluator ──alerts──▶ Dispatcher ──▶ Sinks
import PackageDescription

let package = Package(
    name: "pricealert",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pricealert", targets: ["pricealert"]),
        .library(name: "AlertCore", targets: ["AlertCore"]),
        .library(name: "AlertPolicy", targets: ["AlertPolicy"]),
        .library(name: "AlertSinks", targets: ["AlertSinks"]),
        // Sinks for tests of code that delivers alerts: `InMemorySink`.
        .library(name: "AlertSinksTesting", targets: ["AlertSinksTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Pure domain: ticks, markets, rules, alerts, the engine. No I/O, no clock, no Foundation.
        .target(name: "AlertCore", linkerSettings: [.linkedLibrary("m")]),
        // Between "a rule fired" and "a sink is handed it": silences, priority, quiet hours, groups,
        // rate and fallback, each a small stage of plain values (Docs/sinks.md#notification-policy).
        .target(name: "AlertPolicy", dependencies: ["AlertCore"]),
        // The time of day in epoch milliseconds and the monotonic clock: the one place feeds, sinks,
        // commands, benchmarks and the fuzzer read a system clock.
        .target(name: "Wallclock"),
        // SplitMix64, seeded: the one generator benchmarks, tests, the fuzzer and the demo use.
        .target(name: "SeededRandom", linkerSettings: [.linkedLibrary("m")]),
        // Rule files: a JSON reader that keeps line/column, and validation into AlertCore rules.
        .target(name: "AlertRules", dependencies: ["AlertCore", "AlertPolicy"]),
        // libcurl, loaded on first use (dlopen), through non-variadic wrappers (Swift cannot call
        // curl_easy_setopt). Builds against libcurl4-openssl-dev's headers; links only libdl.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        // HTTP clients: the feeds' REST requests over SwiftNIO, webhooks over libcurl's multi interface.
        .target(name: "AlertHTTP", dependencies: [
            "CCurl",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Where ticks and market lists come from: exchanges (REST + websocket), recorded tick files.
        .target(name: "AlertFeeds", dependencies: [
            "AlertCore", "AlertHTTP", "Wallclock",
            .product(name: "WSClient", package: "swift-websocket"),
            // The websocket connection is set up on SwiftNIO itself, so every attempt has a deadline,
            // can be cancelled and is closed on any failure (see FeedSocket.swift).
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The embedded BTSE-compatible exchange on 127.0.0.1, for the demo, tests and users.
        .target(name: "DemoExchange", dependencies: [
            "AlertCore", "AlertFeeds", "SeededRandom", "Wallclock",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // State that outlives a process: the durable outbox, engine state and market list, in SQLite.
        .target(name: "AlertStore", dependencies: [
            "AlertCore", "AlertPolicy",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Where alerts go: one Sink protocol, one file per sink, and the dispatcher.
        .target(name: "AlertSinks", dependencies: [
            "AlertCore", "AlertPolicy", "AlertHTTP", "AlertStore", "Wallclock",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
        ]),
        // The data path, in order: the Evaluator (ticks in, events out, drops reported one way)
        // that `replay`, `check` and `run` share, delivery, and `run`'s services in one ServiceGroup.
        .target(name: "AlertPipeline", dependencies: [
            "AlertCore", "AlertPolicy", "AlertRules", "AlertFeeds", "AlertHTTP", "AlertStore", "AlertSinks", "Daemon", "Wallclock",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // A sink that keeps what it receives and can be told to fail, for tests; not in the binary.
        .target(name: "AlertSinksTesting", dependencies: ["AlertCore", "AlertPolicy", "AlertSinks"]),
        // `replay --report`: what rules would have sent, as one self-contained HTML page.
        .target(name: "AlertReport", dependencies: ["AlertCore"]),
        // What a daemon needs beside the pipeline: systemd notifications (READY, WATCHDOG,
        // STOPPING), /metrics and /healthz on HTTP, journald-friendly logs.
        .target(name: "Daemon", dependencies: [
            "AlertCore", "AlertFeeds", "AlertSinks", "Wallclock",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The command line: one file per command, thin.
        .executableTarget(name: "pricealert", dependencies: [
            "AlertCore", "AlertPolicy", "AlertRules", "AlertFeeds", "AlertPipeline", "AlertSinks", "AlertHTTP", "AlertStore", "DemoExchange", "Daemon", "Wallclock",
            "AlertReport",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: [
            // Linked position-dependent (no pages written by relocation at start) and exporting no
            // symbols (no symbol tables read at start): what keeps a cron `check` within its memory
            // target (Docs/performance.md#the-release-build). Stripped (`--strip-all`): the
            // debug info and symbol tables of the static Swift runtime and Foundation are more
            // than half the file, and nothing reads them at run time.
            .unsafeFlags(["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic", "-Xlinker", "--strip-all"],
                         .when(platforms: [.linux], configuration: .release)),
        ]),
        // Benchmarks are executables, never tests: `swift run -c release replay-benchmark`.
        .executableTarget(name: "replay-benchmark", dependencies: ["AlertCore", "AlertFeeds", "SeededRandom", "Wallclock"],
                          path: "Benchmarks/ReplayBenchmark"),
        .executableTarget(name: "window-memory-benchmark", dependencies: ["AlertCore", "SeededRandom"],
                          path: "Benchmarks/WindowMemory"),
        .executableTarget(name: "delivery-benchmark", dependencies: [
            "AlertCore", "AlertHTTP", "AlertSinks", "AlertStore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Benchmarks/DeliveryBenchmark"),
        .executableTarget(name: "encode-benchmark", dependencies: ["AlertCore", "AlertSinks", "SeededRandom", "Wallclock"],
                          path: "Benchmarks/EncodeBenchmark"),
        .executableTarget(name: "parse-benchmark", dependencies: ["AlertCore", "AlertFeeds"],
                          path: "Benchmarks/ParseBenchmark"),
        .executableTarget(name: "http-benchmark", dependencies: [
            "AlertHTTP", .product(name: "Hummingbird", package: "hummingbird"),
        ], path: "Benchmarks/HTTPBenchmark"),
        // The live path on loopback: websocket → parse → engine → sink, one process.
        .executableTarget(name: "live-benchmark", dependencies: [
            "AlertCore", "AlertFeeds", "AlertHTTP", "SeededRandom",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Benchmarks/LiveBenchmark"),
        // A naive reading of Docs/rules.md that tests compare the engine and the binary with.
        .target(name: "AlertTestSupport", dependencies: [
            "AlertCore", "SeededRandom",
            // The hostile exchange misbehaves below HTTP, where only raw SwiftNIO lets it; so does
            // the TLS receiver, below TLS.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], path: "Tests/AlertTestSupport"),
        // Seeded mutations of real inputs for every parser (Docs/fuzzing.md); `pricealert-fuzz`
        // runs them by the million, FuzzTests a few thousand.
        .target(name: "ParserFuzzing", dependencies: ["AlertCore", "AlertRules", "AlertFeeds", "SeededRandom", "Wallclock"],
                path: "Fuzz/ParserFuzzing"),
        .executableTarget(name: "pricealert-fuzz", dependencies: ["ParserFuzzing"], path: "Fuzz/Main"),
        .testTarget(name: "FuzzTests", dependencies: ["ParserFuzzing", "AlertTestSupport"]),
        .testTarget(name: "AlertCoreTests", dependencies: ["AlertCore", "AlertRules", "AlertTestSupport", "SeededRandom"]),
        .testTarget(name: "AlertReportTests", dependencies: ["AlertReport", "AlertCore"]),
        .testTarget(name: "AlertRulesTests", dependencies: ["AlertRules", "AlertCore", "AlertTestSupport", "SeededRandom"]),
        .testTarget(name: "AlertPipelineTests", dependencies: [
            "AlertPipeline", "AlertPolicy", "AlertCore", "AlertRules", "AlertFeeds", "AlertHTTP", "AlertSinks", "AlertStore", "Daemon", "DemoExchange", "Wallclock",
            "AlertTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        .testTarget(name: "AlertPolicyTests", dependencies: ["AlertPolicy", "AlertCore", "SeededRandom"]),
        .testTarget(name: "AlertFeedsTests", dependencies: [
            "AlertFeeds", "AlertCore", "AlertHTTP", "DemoExchange", "AlertTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
        ], exclude: ["CandleFixtures"]),
        .testTarget(name: "AlertHTTPTests", dependencies: [
            "AlertHTTP", "AlertTestSupport",
            .product(name: "Hummingbird", package: "hummingbird"),
        ]),
        .testTarget(name: "DemoExchangeTests", dependencies: [
            "DemoExchange", "AlertFeeds", "AlertTestSupport",
            .product(name: "WSClient", package: "swift-websocket"),
        ]),
        .testTarget(name: "AlertSinksTests", dependencies: [
            "AlertSinks", "AlertSinksTesting", "AlertCore", "AlertPolicy", "AlertRules", "AlertHTTP", "AlertStore", "AlertTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "AlertStoreTests", dependencies: ["AlertStore", "AlertCore", "AlertPolicy", "AlertTestSupport", "SeededRandom"]),
        .testTarget(name: "DaemonTests", dependencies: [
            "Daemon", "AlertCore", "AlertFeeds", "AlertHTTP", "AlertTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        // Runs the built `pricealert` binary and compares its output with expected files.
        .testTarget(name: "EndToEndTests", dependencies: [
            "pricealert", "AlertTestSupport", "AlertCore", "AlertPolicy", "AlertRules", "AlertFeeds", "AlertHTTP", "AlertStore", "AlertPipeline", "DemoExchange",
            "SeededRandom",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ],
                    resources: [.copy("Cases")]),
    ]
)
