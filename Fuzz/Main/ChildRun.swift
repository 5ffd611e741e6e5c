import Foundation
import ParserFuzzing

#if canImport(Glibc)
import Glibc
#endif

/// One parser's batch, in this (child) process. A crash signal prints the input that caused it
/// before the process dies; a hang (the watchdog) prints it and exits 3.
enum ChildRun {
    static func run(_ target: FuzzTarget, _ options: Options) -> Never {
        let campaign: FuzzCampaign
        do {
            campaign = try FuzzCampaign(
                target: target, seed: options.seed, repository: options.repository,
                fixtures: options.fixturesPath)
        } catch {
            fail("\(error)")
        }
        let watchdog = Watchdog(budget: .milliseconds(options.budgetMilliseconds)) { index, seconds in
            let line =
                "HANG \(target.name): input \(index) ran \(Int(seconds)) s: \(options.reproduce(target.name, from: index, inputs: 1))\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
            _exit(3)
        }
        CrashReport.install(
            parser: target.name, reproduce: options.reproduce(target.name, from: 0, inputs: 1), watchdog: watchdog)
        let outcome = campaign.run(from: options.from, count: options.inputs, watchdog: watchdog)
        watchdog.stop()
        print(
            "\(target.name)\t\(outcome.inputs)\t\(campaign.seeds.count)\t\(outcome.slowestIndex)\t\(outcome.slowestSeconds)\t\(outcome.largestInputBytes)\t\(outcome.checksum)"
        )
        exit(0)
    }
}

/// Signal handlers that name the input being parsed when the process crashes (a Swift runtime
/// trap is SIGILL or SIGTRAP; a stack overflow SIGSEGV, handled on an alternate stack). They
/// write with write(2) and re-raise the signal with its default action.
enum CrashReport {
    nonisolated(unsafe) static var prefix: [UInt8] = []
    nonisolated(unsafe) static var watchdog: Watchdog?

    static func install(parser: String, reproduce: String, watchdog: Watchdog) {
        // "... --from 0 --inputs 1" with the index put in place of the 0 at crash time.
        let parts = reproduce.components(separatedBy: " --from 0 ")
        prefix = Array("CRASH \(parser): \(parts[0]) --from ".utf8)
        Self.watchdog = watchdog
        let stackSize = 1 << 20
        var stack = stack_t()
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: stackSize, alignment: 16)
        stack.ss_size = stackSize
        sigaltstack(&stack, nil)
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                CrashReport.report(signal)
                Glibc.signal(signal, SIG_DFL)
                raise(signal)
            }
            action.sa_flags = Int32(SA_ONSTACK)
            sigaction(signal, &action, nil)
        }
    }

    static func report(_ signal: Int32) {
        var line = prefix
        line += Array(String(watchdog?.currentIndex ?? -1).utf8)
        line += Array(" --inputs 1 (signal \(signal))\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
