import Foundation
import Testing

/// LMDB keeps two meta pages and writes transaction N's into slot N & 1;
/// a reader takes the slot its transaction id names. Meta pages swapped or
/// copied over each other (each valid on its own) made the store read as an
/// older commit, or as empty, and the next write went on from there over
/// every acknowledged event. Each is refused at open, before anything reads
/// or writes, naming the page.
extension DamagedFileTests {
    /// Swaps (or copies) the meta pages of `file`: whole pages, or only their
    /// bodies (the meta data after the 16-byte page header).
    static func moveMetaPages(_ file: String, bodiesOnly: Bool, copyFirstOverSecond: Bool = false) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let start = bodiesOnly ? 16 : 0
        let first = Array(bytes[start..<pageSize]), second = Array(bytes[(pageSize + start)..<(2 * pageSize)])
        bytes.replaceSubrange((pageSize + start)..<(2 * pageSize), with: first)
        if !copyFirstOverSecond { bytes.replaceSubrange(start..<pageSize, with: second) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    @Test("meta pages swapped or copied over each other, in data.mdb or index/data.mdb: every command refuses at open naming the meta page; nothing is written; nothing reads the store as older or empty")
    func metaPagesOutOfTheirSlots() throws {
        let (dir, store) = try Self.store(items: 6)
        defer { dir.remove() }
        // More transactions, so that the two meta pages hold different commits.
        for n in 0..<3 {
            let more = try dir.file("more-\(n).jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"more-\#(n)"}]}"#])
            #expect(try CLI.run(["apply", "--store", store, more]).status == 0)
        }
        let write = try dir.file("write.jsonl", [#"{"op":"indexSearchableItems","user":"u1","items":[{"uniqueIdentifier":"late"}]}"#])
        let cases: [(String, Bool, Bool)] = [("swapped", false, false), ("bodies swapped", true, false),
                                             ("page 0 copied over page 1", false, true), ("body 0 copied over body 1", true, true)]
        for (what, bodies, copy) in cases {
            for file in ["data.mdb", "index/data.mdb"] {
                let copyDir = dir.sub("\(file == "data.mdb" ? "log" : "index")-\(what.replacingOccurrences(of: " ", with: "-"))")
                try FileManager.default.copyItem(atPath: store, toPath: copyDir)
                defer { try? FileManager.default.removeItem(atPath: copyDir) }
                try Self.moveMetaPages(copyDir + "/" + file, bodiesOnly: bodies, copyFirstOverSecond: copy)
                let log = try Data(contentsOf: URL(fileURLWithPath: copyDir + "/data.mdb"))
                let commands = file == "data.mdb"
                    ? Self.commands(copyDir, write: write) + [["replay", "--store", copyDir], ["compact", "--store", copyDir]]
                    : [Self.search(copyDir), ["verify", "--store", copyDir], ["apply", "--store", copyDir, write]]
                for command in commands {
                    let run = try CLI.runBounded(command)
                    #expect(run.exited && run.status == 1, "\(file) \(what): \(command[0]): \(run)")
                    #expect(run.stderr.contains(copyDir + "/" + file) && run.stderr.contains("meta page"),
                            "\(file) \(what): \(command[0]): \(run.stderr)")
                    // (verify checks the log, then says the index is damaged.)
                    #expect(file != "data.mdb" || (!run.stdout.contains("ok:") && run.stdout != "[]\n"),
                            "\(file) \(what): \(command[0]) read the store: \(run.stdout)")
                }
                #expect(try Data(contentsOf: URL(fileURLWithPath: copyDir + "/data.mdb")) == log, "\(file) \(what): the log was written")
            }
        }
    }
}
