import Foundation
import IndexingWorkload

/// Runs one `bench-setting` child: this same executable in a new process,
/// its stdout (one JSON `IndexingResult`) to a file, its stderr read here
/// line by line for progress.
enum SettingProcess {
    /// This executable: `/proc/self/exe` on Linux, where `argv[0]` may be a
    /// bare name found on `PATH`.
    static let executable: URL = {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: target)
        }
        return URL(fileURLWithPath: Bundle.main.executablePath ?? CommandLine.arguments[0])
    }()

    static func run(_ arguments: [String], scratch: String, progress: (Int) -> Void) throws -> IndexingResult {
        let outFile = (scratch as NSString).appendingPathComponent("result.json")
        guard FileManager.default.createFile(atPath: outFile, contents: nil) else {
            throw CLIError("cannot create \(outFile)")
        }
        // `posix_spawn` and `waitpid` (``ChildProcess``), not Foundation's
        // `Process`, whose wait was seen to miss a child's exit.
        let process = try ChildProcess(executable.path, ["bench-setting", "--report-progress"] + arguments,
                                       standardInput: .null, standardOutput: .file(outFile), standardError: .pipe)

        var messages: [Substring] = []
        var pending = Data()
        let reading = process.errors!
        while let chunk = try reading.read(upToCount: 4096), !chunk.isEmpty {
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Substring(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
                if let items = ChildProgress.parse(line) { progress(items) } else { messages.append(line) }
            }
        }
        if !pending.isEmpty { messages.append(Substring(String(decoding: pending, as: UTF8.self))) }
        let end = try process.wait()

        guard end.succeeded else {
            let detail = messages.isEmpty ? "\(end)" : messages.joined(separator: "; ")
            throw CLIError(detail)
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: outFile))
        do {
            return try JSONDecoder().decode(IndexingResult.self, from: data)
        } catch {
            throw CLIError("the setting's process printed no result: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }
}
