import AlertTestSupport
import Operations
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The sd_notify datagram protocol, against a real AF_UNIX datagram socket.
@Suite("systemd notifications")
struct ServiceNotifierTests {
    @Test(arguments: [false, true])
    func messagesArriveAsOneDatagramOfAssignments(abstract: Bool) async throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        try notifier.ready(status: "following btse\nwith 2 rules")
        try notifier.watchdog()
        try notifier.stopping(status: "stopping")
        _ = try await socket.waitFor(line: "STOPPING=1", timeout: 60)
        #expect(
            socket.messages == [
                "READY=1\nSTATUS=following btse with 2 rules",
                "WATCHDOG=1",
                "STOPPING=1\nSTATUS=stopping"
            ])
    }

    @Test func withoutNotifySocketNothingIsSentAndNothingFails() throws {
        let notifier = ServiceNotifier(environment: ["WATCHDOG_USEC": "1000000"])
        #expect(notifier.socket == nil)
        #expect(notifier.watchdogInterval == nil)
        try notifier.ready(status: "x")
        try notifier.watchdog()
    }

    @Test func theWatchdogPingsAtHalfWatchdogUsecForThisProcessOnly() {
        let socket = ["NOTIFY_SOCKET": "/run/systemd/notify"]
        #expect(
            ServiceNotifier(environment: socket.merging(["WATCHDOG_USEC": "4000000"]) { $1 }).watchdogInterval
                == .seconds(2))
        #expect(
            ServiceNotifier(
                environment: socket.merging(["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "\(getpid())"]) { $1 }
            )
            .watchdogInterval == .seconds(2))
        #expect(
            ServiceNotifier(environment: socket.merging(["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"]) { $1 })
                .watchdogInterval == nil)
        #expect(ServiceNotifier(environment: socket.merging(["WATCHDOG_USEC": "0"]) { $1 }).watchdogInterval == nil)
        #expect(ServiceNotifier(environment: socket.merging(["WATCHDOG_USEC": "soon"]) { $1 }).watchdogInterval == nil)
    }

    /// A datagram socket queues only `net.unix.max_dgram_qlen` messages; a receiver that does not
    /// read must cost a failed notification, never a blocked thread of the daemon.
    @Test(.timeLimit(.minutes(1)))
    func aReceiverThatDoesNotReadIsAnErrorNotABlockedThread() throws {
        let socket = try NotifySocket()
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        var failure: NotifyError?
        for _ in 0..<10_000 where failure == nil {
            do { try notifier.watchdog() } catch { failure = error }
        }
        #expect(failure?.reason == String(cString: strerror(EAGAIN)))
        #expect(socket.receive().count > 0)
    }

    @Test func aSocketThatIsNotThereIsAnErrorNamingIt() {
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": "/tmp/pricealert-no-such-socket-\(getpid())"])
        let error = #expect(throws: NotifyError.self) { try notifier.watchdog() }
        #expect(error?.description.contains("pricealert-no-such-socket") == true)
        #expect(error?.description.contains("No such file") == true)
    }
}
