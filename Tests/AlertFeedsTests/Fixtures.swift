import Foundation

/// `/work/shared/fixtures` seen from this repository: `<repo>/../shared/fixtures`, with `<repo>`
/// found from this file's path (`<repo>/Tests/AlertFeedsTests/Fixtures.swift`), so it works
/// from any worktree that sits next to `shared`.
let fixturesFolder: String = {
    let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return repo.deletingLastPathComponent().appendingPathComponent("shared/fixtures").path
}()
