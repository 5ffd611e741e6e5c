import AlertPostgres
import Testing

@Suite struct PostgresURLTests {
    @Test func readsEveryPartAndPrintsNoPassword() throws {
        let url = try PostgresURL(
            "postgres://alice:s%40cret@db.example:6543/alerts?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(url.user == "alice")
        #expect(url.password == "s@cret")
        #expect(url.host == "db.example")
        #expect(url.port == 6543)
        #expect(url.database == "alerts")
        #expect(url.sslMode == .verifyFull)
        #expect(url.sslRootCert == "/etc/ca.pem")
        #expect(
            url.description == "postgres://alice:***@db.example:6543/alerts?sslmode=verify-full&sslrootcert=/etc/ca.pem"
        )
    }

    @Test func fillsLibpqDefaults() throws {
        let url = try PostgresURL("postgresql://bob@localhost")
        #expect(url.port == 5432)
        #expect(url.database == "bob")
        #expect(url.sslMode == .prefer)
        #expect(url.password == nil)
    }

    @Test func refusesBadURLsWithoutShowingThePassword() {
        for (text, reason) in [
            ("postgres://alice:hunter2@host/db?sslmode=allow", "sslmode allow is not one of"),
            ("postgres://alice:hunter2@host/db?sslmod=require", "unknown parameter sslmod"),
            ("postgres://:hunter2@host/db", "no user"),
            ("postgres://alice:hunter2@10.0.0.7/db?sslmode=verify-full", "verify-full needs the host's name"),
            ("mysql://alice:hunter2@host/db", "not a postgres://")
        ] {
            #expect {
                try PostgresURL(text)
            } throws: { error in
                let message = "\(error)"
                return message.contains(reason) && !message.contains("hunter2") && message.contains("***")
            }
        }
    }
}
