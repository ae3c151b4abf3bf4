import Foundation

/// Resident memory of this process, from `/proc/self/status` (Linux); 0
/// where there is none.
///
/// `VmHWM` (the high-water mark) counts the pages of memory-mapped files
/// too: an LMDB store's pages are resident in the map once read or written,
/// so it grows with the store whatever the process allocates. `RssAnon` is
/// the process's own memory (heap, stacks), the part that must stay flat in
/// corpus size; Linux keeps no high-water mark of it, so ``MemorySampler``
/// samples it.
public enum ResidentMemory {
    /// `VmHWM`: the peak of all resident pages, mapped files included.
    public static func peak() -> Int { field("VmHWM:") }

    /// `RssAnon`: resident anonymous memory now (no file-backed pages).
    public static func anonymous() -> Int { field("RssAnon:") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
              // "VmHWM:\t  123456 kB": tab, padding spaces, then the number.
              let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
