import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The command line's bytes as the kernel handed them over, checked before
/// they are parsed.
///
/// swift-argument-parser reads `CommandLine.arguments`, whose strings were
/// decoded with invalid UTF-8 replaced by U+FFFD: `--user $'\xff'` and
/// `--user $'\xc3'` would both name the user "\u{fffd}", and a store path
/// with a bad byte another directory. Names are compared as their exact
/// bytes (SPEC §2), so every argument (and `EVENTLOG_STORE`) must be valid
/// UTF-8; the first that is not is an error naming it, and nothing runs.
///
/// ```swift
/// RawArguments.firstInvalid(in: [Array("eventlog".utf8), Array("--user".utf8), [0xFF]])
/// // "the value of --user (argument 2) is not valid UTF-8: byte 0xff at offset 0"
/// ```
enum RawArguments {
    /// `argv` as bytes (`CommandLine.unsafeArgv`), the program's name first.
    static var current: [[UInt8]] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
        }
    }

    /// What is wrong with the first argument that is not valid UTF-8, or
    /// nil; `arguments[0]` (the program) is not checked.
    static func firstInvalid(in arguments: [[UInt8]]) -> String? {
        for index in arguments.indices.dropFirst() {
            guard let offset = invalidOffset(arguments[index]) else { continue }
            let byte = String(arguments[index][offset], radix: 16)
            let (name, start) = describe(index, in: arguments)
            return "\(name) is not valid UTF-8: byte 0x\(byte.count == 1 ? "0" : "")\(byte) at offset \(offset - start)"
        }
        if let value = getenv("EVENTLOG_STORE") {
            let bytes = Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
            if let offset = invalidOffset(bytes) {
                return "EVENTLOG_STORE is not valid UTF-8: byte 0x\(String(bytes[offset], radix: 16)) at offset \(offset)"
            }
        }
        return nil
    }

    /// The offset of the first byte where `bytes` stops being UTF-8; nil when it is.
    static func invalidOffset(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// `the value of --user (argument 3)` or `argument 3`, and where in
    /// the argument that value starts (after `--user=`).
    private static func describe(_ index: Int, in arguments: [[UInt8]]) -> (String, Int) {
        let argument = arguments[index]
        if argument.starts(with: Array("--".utf8)), let equals = argument.firstIndex(of: UInt8(ascii: "=")),
           invalidOffset(Array(argument[..<equals])) == nil {
            return ("the value of \(String(decoding: argument[..<equals], as: UTF8.self)) (argument \(index))", equals + 1)
        }
        if index > 1, arguments[index - 1].starts(with: Array("-".utf8)), !arguments[index - 1].contains(UInt8(ascii: "=")),
           invalidOffset(arguments[index - 1]) == nil {
            return ("the value of \(String(decoding: arguments[index - 1], as: UTF8.self)) (argument \(index))", 0)
        }
        return ("argument \(index)", 0)
    }

    /// Ends the process with `status` (`exit(3)`), for `main` before any command runs.
    static func terminate(_ status: Int32) -> Never {
        exit(status)
    }
}
