// swift-tools-version:6.0
// pricealert: feed ──ticks──▶ engine ──alerts──▶ policy ──▶ outbox ──▶ sinks (Docs/architecture.md)
import PackageDescription

let package = Package(
    name: "pricealert",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pricealert", targets: ["pricealert"]),
        .library(name: "AlertModel", targets: ["AlertModel"]),
        .library(name: "AlertEngine", targets: ["AlertEngine"]),
        .library(name: "AlertPolicy", targets: ["AlertPolicy"]),
        .library(name: "AlertSinks", targets: ["AlertSinks"]),
        // Sinks for tests of code that delivers alerts: `InMemorySink`.
        .library(name: "AlertSinksTesting", targets: ["AlertSinksTesting"])
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
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2")
    ],
    targets: [
        // ── Below everything ───────────────────────────────────────────────────────────────
        // The process's ground: the time of day and the monotonic clock, standard output and
        // standard error (locked, unbuffered lines), signals, and child processes. No domain types.
        .target(name: "Platform"),
        // SplitMix64, seeded: the generator for inputs that must repeat (benchmarks, the fuzzer,
        // the demo, tests that generate data).
        .target(name: "SeededRandom", linkerSettings: [.linkedLibrary("m")]),
        // The one JSON tokenizer (bytes in, tokens with byte offsets out; line:column on demand),
        // under rule files, tick files and exchange payloads alike. Depends on nothing.
        .target(name: "JSONTokens"),
        // The values every stage passes on: ticks, markets, candles, rules, alerts, sinks'
        // definitions, deliveries and outbox rows, and their text forms. No I/O, no clock.
        .target(name: "AlertModel", linkerSettings: [.linkedLibrary("m")]),
        // libcurl, loaded on first use (dlopen), through non-variadic wrappers (Swift cannot call
        // curl_easy_setopt). Builds against libcurl4-openssl-dev's headers; links only libdl.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        // HTTP clients: the feeds' REST requests over SwiftNIO, webhooks over libcurl's multi interface.
        .target(
            name: "AlertHTTP",
            dependencies: [
                "CCurl", "Platform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // ── The data path, in order: feed → rules and engine → policy → outbox → sinks ─────────
        // 1. Where ticks and market lists come from: one folder per exchange (REST + websocket),
        //    recorded tick files, candles for history.
        .target(
            name: "AlertFeeds",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertHTTP", "JSONTokens", "Platform",
                .product(name: "WSClient", package: "swift-websocket"),
                // The websocket connection is set up on SwiftNIO itself, so every attempt has a deadline,
                // can be cancelled and is closed on any failure (see FeedSocket.swift).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // 2. Rule files: a JSON reader that keeps line/column, and validation into AlertModel rules.
        .target(name: "AlertRules", dependencies: ["AlertModel", "AlertPolicy", "JSONTokens"]),
        // 3. The engine: ticks and rules in, alerts out; its state and snapshots. Reads no clock.
        .target(name: "AlertEngine", dependencies: ["AlertModel"], linkerSettings: [.linkedLibrary("m")]),
        // 4. Between "a rule fired" and "the outbox": silences, priority, quiet hours, groups, each
        //    a `Stage` in one ordered list, and the rate and fallback rules the outbox applies
        //    (Docs/sinks.md#notification-policy). Plain values, no clock.
        .target(name: "AlertPolicy", dependencies: ["AlertModel"]),
        // 5. The durable outbox: its contract (`DeliveryOutbox`) and the delivery from it to the
        //    sinks, paced, retried and failed over per sink.
        .target(
            name: "AlertOutbox",
            dependencies: [
                "AlertModel", "AlertPolicy", "AlertSinks", "Platform",
                .product(name: "Logging", package: "swift-log")
            ]),
        //    The outbox, engine state, market list and silences in SQLite (implements `DeliveryOutbox`).
        .target(
            name: "AlertStore",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertPolicy", "AlertOutbox",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log")
            ]),
        //    The same stores in PostgreSQL (Docs/postgres.md): the outbox (`DeliveryOutbox`, rows
        //    claimed with `FOR UPDATE SKIP LOCKED` and a lease), silences and the backfill ledger,
        //    leadership per source with a fencing epoch, under versioned migrations; TLS by `sslmode`.
        .target(
            name: "AlertPostgres",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertPolicy", "AlertOutbox", "AlertStore", "Platform",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                // The watchers several instances run beside the pipeline: leadership, silences.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]),
        // 6. Where alerts go: one Sink protocol, a folder per kind (stdout, file, webhook, exec),
        //    each kind's rule-file check and builder registered in `SinkRegistry.all`, and the
        //    direct dispatcher.
        .target(
            name: "AlertSinks",
            dependencies: [
                "AlertModel", "AlertPolicy", "AlertRules", "AlertHTTP", "Platform",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics")
            ]),
        // A sink that keeps what it receives and can be told to fail, for tests; not in the binary.
        .target(name: "AlertSinksTesting", dependencies: ["AlertModel", "AlertPolicy", "AlertSinks"]),
        // ── Beside the data path ────────────────────────────────────────────────────────────
        // Beside the pipeline, never under it: metrics, /metrics and /healthz on HTTP, systemd
        // notifications (READY, WATCHDOG, STOPPING), journald-friendly logs. Knows no feed or sink.
        .target(
            name: "Operations",
            dependencies: [
                "AlertModel", "Platform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // `replay --report`: what rules would have sent, as one self-contained HTML page.
        .target(name: "AlertReport", dependencies: ["AlertModel"]),
        // ── Putting it together ─────────────────────────────────────────────────────────────
        // The pipeline: the Evaluator (ticks in, events out, drops reported one way) that
        // `replay`, `check` and `run` share, delivery through the policy and the outbox, and
        // `run`'s services in one ServiceGroup in data order (`LivePipeline`).
        .target(
            name: "AlertPipeline",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertPolicy", "AlertRules", "AlertFeeds", "AlertHTTP", "AlertOutbox",
                "AlertStore", "AlertSinks", "Operations", "AlertReport", "Platform",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // The embedded exchange on 127.0.0.1, for the demo, tests and users: BTSE-compatible, and
        // look-alikes of Binance, Coinbase, Kraken, Bybit and OKX from the same prices.
        .target(
            name: "DemoExchange",
            dependencies: [
                "AlertModel", "AlertFeeds", "SeededRandom", "Platform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // Raw NIO for what Hummingbird's websocket API hides: pong frames (Binance's
                // keep-alive), a TCP reset, and the server's TLS configuration.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // The command line: parses arguments and wires the modules above, one file per command.
        .executableTarget(
            name: "pricealert",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertPolicy", "AlertRules", "AlertFeeds", "AlertPipeline", "AlertOutbox",
                "AlertSinks",
                "AlertHTTP", "AlertStore", "AlertPostgres", "DemoExchange", "Operations", "Platform", "AlertReport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ],
            linkerSettings: [
                // Linked position-dependent (no pages written by relocation at start) and exporting no
                // symbols (no symbol tables read at start): what keeps a cron `check` within its memory
                // target (Docs/performance.md#the-release-build). Stripped (`--strip-all`): the
                // debug info and symbol tables of the static Swift runtime and Foundation are more
                // than half the file, and nothing reads them at run time.
                .unsafeFlags(
                    ["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic", "-Xlinker", "--strip-all"],
                    .when(platforms: [.linux], configuration: .release))
            ]),
        // Benchmarks are executables, never tests: `swift run -c release replay-benchmark`.
        .executableTarget(
            name: "replay-benchmark", dependencies: ["AlertModel", "AlertEngine", "SeededRandom", "Platform"],
            path: "Benchmarks/ReplayBenchmark"),
        .executableTarget(
            name: "window-memory-benchmark", dependencies: ["AlertModel", "AlertEngine", "SeededRandom"],
            path: "Benchmarks/WindowMemory"),
        .executableTarget(
            name: "delivery-benchmark",
            dependencies: [
                "AlertModel", "AlertHTTP", "AlertOutbox", "AlertSinks", "AlertStore", "AlertTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log")
            ], path: "Benchmarks/DeliveryBenchmark"),
        .executableTarget(
            name: "postgres-delivery-benchmark",
            dependencies: [
                "AlertModel", "AlertHTTP", "AlertOutbox", "AlertPostgres", "AlertSinks", "AlertTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log")
            ], path: "Benchmarks/PostgresDeliveryBenchmark"),
        .executableTarget(
            name: "encode-benchmark", dependencies: ["AlertModel", "AlertSinks", "SeededRandom", "Platform"],
            path: "Benchmarks/EncodeBenchmark"),
        .executableTarget(
            name: "parse-benchmark", dependencies: ["AlertModel", "AlertFeeds", "DemoExchange"],
            path: "Benchmarks/ParseBenchmark"),
        .executableTarget(
            name: "http-benchmark",
            dependencies: [
                "AlertHTTP", .product(name: "Hummingbird", package: "hummingbird")
            ], path: "Benchmarks/HTTPBenchmark"),
        // The live path on loopback: websocket → parse → engine → sink, one process.
        .executableTarget(
            name: "live-benchmark",
            dependencies: [
                "AlertModel", "AlertEngine", "AlertFeeds", "AlertHTTP", "SeededRandom",
                "AlertPipeline", "AlertPolicy", "AlertRules", "AlertSinks", "DemoExchange", "Operations",
                "AlertPostgres", "AlertStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio")
            ], path: "Benchmarks/LiveBenchmark"),
        // A naive reading of Docs/rules.md that tests compare the engine and the binary with.
        .target(
            name: "AlertTestSupport",
            dependencies: [
                "AlertModel", "AlertHTTP", "SeededRandom",
                // The hostile exchange misbehaves below HTTP, where only raw SwiftNIO lets it; so does
                // the TLS receiver, below TLS.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ], path: "Tests/AlertTestSupport"),
        // Seeded mutations of real inputs for every parser (Docs/fuzzing.md); `pricealert-fuzz`
        // runs them by the million, FuzzTests a few thousand.
        .target(
            name: "ParserFuzzing",
            dependencies: ["AlertModel", "AlertRules", "AlertSinks", "AlertFeeds", "SeededRandom", "Platform"],
            path: "Fuzz/ParserFuzzing"),
        .executableTarget(name: "pricealert-fuzz", dependencies: ["ParserFuzzing"], path: "Fuzz/Main"),
        .testTarget(name: "FuzzTests", dependencies: ["ParserFuzzing", "AlertTestSupport"]),
        .testTarget(
            name: "AlertEngineTests",
            dependencies: ["AlertEngine", "AlertModel", "AlertRules", "AlertSinks", "AlertTestSupport", "SeededRandom"]),
        .testTarget(name: "JSONTokensTests", dependencies: ["JSONTokens"]),
        .testTarget(name: "AlertReportTests", dependencies: ["AlertReport", "AlertModel"]),
        .testTarget(
            name: "AlertRulesTests",
            dependencies: [
                "AlertRules", "AlertSinks", "AlertModel", "AlertEngine", "AlertTestSupport", "JSONTokens",
                "SeededRandom"
            ]),
        .testTarget(
            name: "AlertPipelineTests",
            dependencies: [
                "AlertPipeline", "AlertPolicy", "AlertModel", "AlertEngine", "AlertRules", "AlertFeeds", "AlertHTTP",
                "AlertOutbox", "AlertSinks", "AlertStore",
                "Operations", "DemoExchange", "Platform",
                "AlertTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus")
            ]),
        .testTarget(name: "AlertPolicyTests", dependencies: ["AlertPolicy", "AlertModel", "SeededRandom"]),
        .testTarget(
            name: "AlertFeedsTests",
            dependencies: [
                "AlertFeeds", "AlertModel", "AlertHTTP", "DemoExchange", "AlertTestSupport", "JSONTokens",
                "SeededRandom",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird")
            ], exclude: ["CandleFixtures"]),
        .testTarget(
            name: "AlertHTTPTests",
            dependencies: [
                "AlertHTTP", "AlertTestSupport",
                .product(name: "Hummingbird", package: "hummingbird")
            ]),
        .testTarget(
            name: "DemoExchangeTests",
            dependencies: [
                "DemoExchange", "AlertFeeds", "AlertTestSupport",
                .product(name: "WSClient", package: "swift-websocket")
            ]),
        .testTarget(
            name: "AlertSinksTests",
            dependencies: [
                "AlertSinks", "AlertSinksTesting", "AlertModel", "AlertPolicy", "AlertRules", "AlertHTTP",
                "AlertOutbox", "AlertStore",
                "AlertTestSupport", "Platform",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto")
            ]),
        .testTarget(
            name: "AlertStoreTests",
            dependencies: [
                "AlertStore", "AlertModel", "AlertEngine", "AlertPolicy", "AlertOutbox", "AlertTestSupport",
                "SeededRandom",
                .product(name: "GRDB", package: "GRDB.swift")
            ]),
        .testTarget(
            name: "AlertPostgresTests",
            dependencies: [
                "AlertPostgres", "AlertStore", "AlertModel", "AlertOutbox", "AlertPolicy", "AlertTestSupport",
                "AlertSinks", "AlertHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]),
        .testTarget(
            name: "OperationsTests",
            dependencies: [
                "Operations", "AlertModel", "AlertFeeds", "AlertHTTP", "AlertPipeline", "AlertTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus")
            ]),
        // Runs the built `pricealert` binary and compares its output with expected files.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "pricealert", "AlertTestSupport", "AlertModel", "AlertPolicy", "AlertRules", "AlertSinks", "AlertFeeds",
                "AlertHTTP", "AlertStore", "AlertPipeline", "DemoExchange", "AlertPostgres",
                "SeededRandom",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift")
            ],
            resources: [.copy("Cases")])
    ]
)
