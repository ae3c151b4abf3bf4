import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file (or standard input) one line at a time with `getline`, so
/// that `apply` holds one line in memory however long the file is.
final class LineReader {
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    /// `-` reads standard input.
    init(path: String) throws {
        if path == "-" {
            // fdopen rather than the `stdin` global, which Swift 6 treats as
            // shared mutable state; not closed, standard input stays open.
            guard let input = fdopen(STDIN_FILENO, "r") else {
                throw CLIError("open standard input: \(String(cString: strerror(errno)))")
            }
            file = input
            ownsFile = false
        } else {
            guard let opened = fopen(path, "r") else {
                throw CLIError("open \(path): \(String(cString: strerror(errno)))")
            }
            file = opened
            ownsFile = true
        }
    }

    deinit {
        free(buffer)
        if ownsFile { fclose(file) }
    }

    /// The next line's bytes without its line break; nil at the end.
    func next() -> [UInt8]? {
        let count = getline(&buffer, &capacity, file)
        guard count >= 0, let buffer else { return nil }
        var length = count
        while length > 0, buffer[length - 1] == 0x0A || buffer[length - 1] == 0x0D { length -= 1 }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}
