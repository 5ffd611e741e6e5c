import Foundation
import Testing

/// The release build is one build: README.md installs it, Docs/deploy.md deploys it and the
/// benchmarks of the memory targets measure it (Docs/performance.md#the-release-build), and the
/// linker flags README.md names are those Package.swift links `pricealert` with.
@Suite("the documented release build")
struct ReleaseBuildTests {
    static let repo = PriceAlertBinary.repo
    static let command = "swift build -c release --static-swift-stdlib --product pricealert"

    static func text(_ file: String) throws -> String {
        try String(contentsOf: repo.appendingPathComponent(file), encoding: .utf8)
    }

    /// The lines of `file` that build the `pricealert` product for release.
    static func releaseBuilds(in file: String) throws -> [String] {
        try text(file).components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("swift build") && $0.contains("-c release") && $0.contains("--product pricealert") }
    }

    @Test(arguments: ["README.md", "Docs/deploy.md", "Benchmarks/Check/prepare.sh"])
    func everyReleaseBuildOfPricealertIsTheDocumentedOne(file: String) throws {
        let builds = try Self.releaseBuilds(in: file)
        #expect(!builds.isEmpty, "\(file) builds no release pricealert")
        for build in builds {
            #expect(build.hasPrefix(Self.command), "\(file): '\(build)' is not the release build '\(Self.command)'")
        }
    }

    @Test func theLinkerFlagsTheReadmeNamesAreThosePackageSwiftLinksWith() throws {
        let manifest = try Self.text("Package.swift")
        let flags = ["-no-pie", "--no-export-dynamic", "--strip-all"]
        let linked = try #require(
            manifest.range(
                of:
                    "\"-Xclang-linker\", \"-no-pie\", \"-Xlinker\", \"--no-export-dynamic\", \"-Xlinker\", \"--strip-all\""
            ),
            "Package.swift does not link pricealert with \(flags)")
        #expect(
            manifest[linked.upperBound...].prefix(120).contains(".when(platforms: [.linux], configuration: .release)"))
        let readme = try Self.text("README.md")
        for flag in flags { #expect(readme.contains("`\(flag)`"), "README.md does not name \(flag)") }
    }
}
