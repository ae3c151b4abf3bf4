import Foundation

/// Bytes that files under a directory occupy (allocated blocks, as `du` counts).
public enum DiskUsage {
    public static func bytes(under path: String) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        for case let name as String in walker {
            var info = stat()
            if stat((path as NSString).appendingPathComponent(name), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                total += Int(info.st_blocks) * 512
            }
        }
        return total
    }
}
