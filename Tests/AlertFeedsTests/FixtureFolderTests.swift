import Foundation
import Testing

/// The recorded payloads the tests read are part of the repository, so `swift test` passes in a
/// clone with nothing beside it (`.ci/run` runs the suite in such a clone).
@Suite("the fixtures are in the repository")
struct FixtureFolderTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theFixturesFolderIsInsideTheRepository() throws {
        let folder = URL(fileURLWithPath: fixturesFolder).standardizedFileURL.path
        #expect(folder.hasPrefix(Self.repo.standardizedFileURL.path + "/"), "\(folder) is outside \(Self.repo.path)")
        #expect(FileManager.default.fileExists(atPath: folder + "/README.md"))
    }

    /// Every file has a row in the README naming its source, and every row a file; a folder has a
    /// README of its own that names each of its files.
    @Test func theReadmeNamesEveryFixtureAndItsSource() throws {
        var isFolder: ObjCBool = false
        let entries = try FileManager.default.contentsOfDirectory(atPath: fixturesFolder).filter { $0 != "README.md" }
        let folders = entries.filter {
            FileManager.default.fileExists(atPath: fixturesFolder + "/" + $0, isDirectory: &isFolder)
                && isFolder.boolValue
        }
        let files = entries.filter { !folders.contains($0) }.sorted()
        let readme = try String(contentsOfFile: fixturesFolder + "/README.md", encoding: .utf8)
        let rows = readme.components(separatedBy: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| file ") }
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        #expect(files.count >= 10)
        #expect(rows.map { $0[0] }.sorted() == files)
        for row in rows {
            #expect(row.count == 4 && (row[2].contains("@") || row[2].contains("repositor")), "\(row[0]): no source")
        }
        for folder in folders {
            let path = fixturesFolder + "/" + folder
            let named = try String(contentsOfFile: path + "/README.md", encoding: .utf8)
            #expect(readme.contains("`\(folder)/`"), "the README does not point to \(folder)/")
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where file != "README.md" {
                #expect(
                    named.contains("`\(file)`") || named.contains("| \(file) |"),
                    "\(folder)/README.md does not name \(file)")
            }
        }
    }

    /// No source of the package reaches for a folder beside the repository.
    @Test func noSourceReadsAFolderBesideTheRepository() throws {
        let outside = ["..", "shared", "fixtures"].joined(separator: "/")
        var offenders: [String] = []
        for tree in ["Sources", "Tests", "Fuzz", "Benchmarks", "scripts", ".ci"] {
            let root = Self.repo.appendingPathComponent(tree)
            guard let walk = FileManager.default.enumerator(atPath: root.path) else { continue }
            for case let path as String in walk
            where [".swift", ".py", ".sh", "run", "bootstrap"].contains(where: path.hasSuffix) {
                let text = (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
                if text.contains(outside) { offenders.append(tree + "/" + path) }
            }
        }
        #expect(offenders.isEmpty, "read \(outside): \(offenders)")
    }
}
