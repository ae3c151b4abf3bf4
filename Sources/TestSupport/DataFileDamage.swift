import Foundation

/// Damage done to an LMDB data file on purpose, the way a disk or an
/// operator would, for the tests of SPEC §2's "damaged files are errors".
///
/// ```swift
/// let places = try DataFileDamage.replaceLogKey(in: store + "/data.mdb", position: 63, with: 65_087)
/// ```
public enum DataFileDamage {
    /// Overwrites, in place (`pwrite`, so that a process that has the file
    /// open sees it through its map), every 8-byte node key equal to
    /// `position` (big-endian, as the log's keys are; its size, 8, just
    /// before it) with `replacement`: the live page's, and stale copies of
    /// it in free pages, which LMDB leaves as they were. Returns how many
    /// it overwrote.
    @discardableResult
    public static func replaceLogKey(in dataFile: String, position: UInt64, with replacement: UInt64) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dataFile)))
        let key = withUnsafeBytes(of: position.bigEndian) { Array($0) }
        var replaced = 0
        var from = 2
        while let found = bytes[from...].firstRange(of: key) {
            if bytes[found.lowerBound - 2] == 8 && bytes[found.lowerBound - 1] == 0 {
                withUnsafeBytes(of: replacement.bigEndian) { bytes.replaceSubrange(found, with: $0) }
                replaced += 1
            }
            from = found.lowerBound + 1
        }
        let fd = open(dataFile, O_WRONLY)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return replaced
    }
}
