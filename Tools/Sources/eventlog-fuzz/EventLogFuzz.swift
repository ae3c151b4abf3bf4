// The fuzz driver. Built by `Scripts/fuzz.sh` with `-sanitize=fuzzer
// -parse-as-library -DFUZZING`, it is a libFuzzer binary: FUZZ_TARGET names
// the target (operations, query, records, snapshots, payloads) and libFuzzer's
// own flags follow. In an ordinary build it runs inputs by hand:
//
//     eventlog-fuzz TARGET FILE...   run each file, print what failed
//     eventlog-fuzz seed TARGET DIR  write the target's seed inputs into DIR
import Foundation
import FuzzTargets

#if FUZZING
nonisolated(unsafe) var selected: FuzzTarget?

// SwiftPM links an executable with `main` defined as `eventlog_fuzz_main`
// (so that tests can link it); that function hands over to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@_cdecl("eventlog_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv) { data, size in fuzzerTestOneInput(data, size) }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> Int32 {
    guard let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
        fatalError("set FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try selected!.run(input)
    } catch {
        fatalError("\(selected!.rawValue): \(error)")
    }
    return 0
}
#else
@main
enum Replayer {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let usage = "usage: eventlog-fuzz TARGET FILE... | eventlog-fuzz seed TARGET DIR (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))"
        if arguments.count == 3, arguments[0] == "seed", let target = FuzzTarget(rawValue: arguments[1]) {
            try FileManager.default.createDirectory(atPath: arguments[2], withIntermediateDirectories: true)
            for (i, seed) in try target.seeds().enumerated() {
                try Data(seed).write(to: URL(fileURLWithPath: arguments[2]).appendingPathComponent("seed-\(i)"))
            }
        } else if arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[0]) {
            var failed = 0
            for path in arguments.dropFirst() {
                do {
                    try target.run(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
                } catch {
                    print("\(path): \(error)")
                    failed += 1
                }
            }
            print("\(arguments.count - 1 - failed) passed, \(failed) failed")
            exit(failed == 0 ? 0 : 1)
        } else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
    }
}
#endif
