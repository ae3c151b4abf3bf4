import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file (or standard input) one line at a time, holding at most
/// ``maxLineBytes`` of a line in memory however long the line or the file:
/// a longer line is skipped as it streams past (only its length is
/// counted) and reported as ``Line/tooLong(bytes:)``, so that an endless
/// line without a newline cannot run the machine out of memory.
///
/// ```swift
/// let reader = try LineReader(path: "-")
/// while let line = try reader.next() {
///     switch line {
///     case .bytes(let bytes): …                // without its line break
///     case .tooLong(let count): …              // count bytes, skipped
///     }
/// }
/// ```
final class LineReader {
    enum Line: Equatable {
        case bytes([UInt8])
        case tooLong(bytes: Int)
    }

    /// The longest line `apply` reads, in bytes: an operation of SPEC §6
    /// with hundreds of items fits many times over.
    static let maxLineBytes = 16 << 20

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let limit: Int
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    private var chunkStart = 0, chunkEnd = 0
    private var atEnd = false
    private let name: String

    /// `-` reads standard input.
    init(path: String, limit: Int = LineReader.maxLineBytes) throws {
        self.limit = limit
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            name = "standard input"
        } else {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw CLIError("open \(path): \(String(cString: strerror(errno)))") }
            descriptor = fd
            ownsDescriptor = true
            name = path
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// The next line, without its line break (`\n`, and any `\r` before
    /// it); nil at the end of the input.
    func next() throws -> Line? {
        var line: [UInt8] = []
        var length = 0
        var sawAny = false
        while true {
            if chunkStart == chunkEnd {
                if try atEnd || !fill() {
                    guard sawAny else { return nil }
                    return finish(line, length: length)
                }
            }
            sawAny = true
            let end = chunk.withUnsafeBytes { buffer -> Int? in
                let start = buffer.baseAddress! + chunkStart
                guard let found = memchr(start, 0x0A, chunkEnd - chunkStart) else { return nil }
                return chunkStart + (UnsafeRawPointer(found) - start)
            }
            let stop = end ?? chunkEnd
            let count = stop - chunkStart
            if length + count <= limit {
                line.append(contentsOf: chunk[chunkStart..<stop])
            } else if !line.isEmpty {
                line = []   // past the limit: only the length is kept from here on
            }
            length += count
            chunkStart = end.map { $0 + 1 } ?? chunkEnd
            if end != nil { return finish(line, length: length) }
        }
    }

    private func finish(_ line: [UInt8], length: Int) -> Line {
        guard length <= limit else { return .tooLong(bytes: length) }
        var line = line
        while line.last == 0x0D || line.last == 0x0A { line.removeLast() }
        return .bytes(line)
    }

    /// Reads the next chunk (`read(2)`, again after `EINTR`); false at the end.
    private func fill() throws -> Bool {
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                chunkStart = 0
                chunkEnd = count
                return true
            }
            if count == 0 {
                atEnd = true
                return false
            }
            if errno == EINTR { continue }
            throw CLIError("read \(name): \(String(cString: strerror(errno)))")
        }
    }
}
