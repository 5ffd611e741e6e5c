/// Where two event lists first differ, in words, or nil when they are equal: what a test that
/// compares the engine with a reference says, so that a failure names the first wrong event
/// rather than two lists of thousands.
public func firstDifference<T: Equatable>(
    _ ours: [T], _ theirs: [T], ours ourName: String = "engine", theirs theirName: String = "reference"
) -> String? {
    guard ours != theirs else { return nil }
    let k =
        zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(ours.count, theirs.count)
    let mine = k < ours.count ? "\(ours[k])" : "-"
    let other = k < theirs.count ? "\(theirs[k])" : "-"
    return "first difference at \(k): \(ourName) \(mine) vs \(theirName) \(other)"
}
