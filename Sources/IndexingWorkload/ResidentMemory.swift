import Foundation

/// The process's resident memory high-water mark: `VmHWM` of
/// `/proc/self/status` (Linux); 0 where there is none.
public enum ResidentMemory {
    public static func peak() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              // "VmHWM:\t  123456 kB": tab, padding spaces, then the number.
              let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
