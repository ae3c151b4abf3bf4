import Foundation

/// The process's resident memory high-water mark: `VmHWM` of
/// `/proc/self/status` (Linux); 0 where there is none.
public enum ResidentMemory {
    public static func peak() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes * 1024
    }
}

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
