import Foundation
import Testing

/// SPEC §2 through `eventlog`'s arguments and input: names are bytes,
/// invalid UTF-8 is an error naming the argument, every command checks
/// names the same way, and no line, query or nesting is unbounded.
@Suite("Hostile arguments and input")
struct HostileArgumentTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("invalid UTF-8 in --user is an error naming the argument, for reads, forget, apply and log; nothing is read, forgotten or written")
    func invalidUTF8User() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        // The issue's reproduction: a user literally named U+FFFD holds a secret.
        let secret = try CLI.run(["apply", "--store", store, "-"],
                                 input: #"{"op":"indexSearchableItems","user":"\ufffd","items":[{"uniqueIdentifier":"secret"}]}"# + "\n")
        #expect(secret.status == 0, "\(secret.stderr)")
        let head = try CLI.run(["verify", "--store", store]).stdout
        for (command, bad) in [("items", [UInt8]([0xFF])), ("forget", [0xC3]), ("log", [0x80]), ("search", [0xED, 0xA0, 0x80]),
                                ("current", [0xF8, 0x88, 0x80, 0x80, 0x80]), ("apply", [0x61, 0xFF])] {
            var arguments: [[UInt8]] = [Self.bytes(command), Self.bytes("--store"), Self.bytes(store), Self.bytes("--user"), bad]
            if command == "search" { arguments.append(Self.bytes("secret")) }
            if command == "apply" { arguments.append(Self.bytes("-")) }
            if command == "items" || command == "log" { arguments.append(Self.bytes("--json")) }
            let run = try CLI.runBounded(arguments)
            #expect(run.exited && run.status == 64, "\(command): \(run)")
            #expect(run.stderr.contains("the value of --user (argument 5) is not valid UTF-8"), "\(command): \(run.stderr)")
            #expect(!run.stdout.contains("secret"), "\(command) printed the other user's data: \(run.stdout)")
        }
        // The --user=… form, and any other argument (a store path with a bad byte names another directory).
        let joined = try CLI.runBounded([Self.bytes("items"), Self.bytes("--store"), Self.bytes(store), Self.bytes("--user=") + [0xFF]])
        #expect(joined.status == 64 && joined.stderr.contains("the value of --user (argument 4)"), "\(joined)")
        let path = try CLI.runBounded([Self.bytes("apply"), Self.bytes("--store"), Self.bytes(store) + [0xFF], Self.bytes("-")])
        #expect(path.status == 64 && path.stderr.contains("the value of --store"), "\(path)")
        #expect(!FileManager.default.fileExists(atPath: store + "\u{FFFD}"))
        #expect(try CLI.run(["verify", "--store", store]).stdout == head)
        #expect(try CLI.run(["items", "--store", store, "--user", "\u{FFFD}", "--json"]).objects().count == 1)
    }

    @Test("a 257-byte --user is refused the same way by every command that takes one")
    func longUserEverywhere() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let long = String(repeating: "u", count: 257)
        let commands: [[String]] = [["items"], ["saved"], ["current"], ["client-state"], ["suggestions"], ["resolve", "x"],
                                    ["search", "latte"], ["query", #"title == "x""#], ["handoff", "--device", "phone"],
                                    ["log"], ["forget"], ["apply", "-"]]
        for command in commands {
            let run = try CLI.run(command + ["--store", store, "--user", long])
            #expect(run.status == 1, "\(command[0]): \(run.stderr)")
            #expect(run.stderr.contains("the user space is invalid") && run.stderr.contains("1 to 256 UTF-8 bytes without NUL; this one has 257"),
                    "\(command[0]): \(run.stderr)")
        }
    }

    @Test("log --user keeps canonically equal users apart: josé as NFC and NFD, OHM SIGN and GREEK CAPITAL OMEGA")
    func logUserByBytes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        for (user, n) in [("jos\u{e9}", 1), ("jose\u{301}", 2), ("\u{2126}", 3), ("\u{3a9}", 4)] {
            let line = #"{"op":"indexSearchableItems","user":"\#(user)","items":[{"uniqueIdentifier":"i\#(n)","attributeSet":{"title":"payload \#(n)"}}]}"#
            #expect(try CLI.run(["apply", "--store", store, "-"], input: line + "\n").status == 0)
        }
        for (user, n) in [("jos\u{e9}", 1), ("jose\u{301}", 2), ("\u{2126}", 3), ("\u{3a9}", 4)] {
            let log = try CLI.run(["log", "--store", store, "--user", user, "--json"])
            let lines = log.stdout.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("payload \(n)"), "\(user.unicodeScalars.map(\.value)): \(log.stdout)")
            let items = try CLI.run(["items", "--store", store, "--user", user, "--json"]).objects()
            #expect(items.map { $0["uniqueIdentifier"] as? String } == ["i\(n)"])
        }
        #expect(try CLI.run(["users", "--store", store, "--json"]).objects().count == 4)
    }

    @Test("a 600 MiB line without a newline is refused as it streams, in flat memory, and the next line is applied")
    func endlessLine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let fifo = dir.sub("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // The writer: the line in 1 MiB chunks, then a good line; the FIFO opened read-write so the child's open does not wait.
        let feed = open(fifo, O_RDWR)
        let writer = Thread {
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
            let start = Array(#"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"a","attributeSet":{"title":""#.utf8)
            _ = start.withUnsafeBytes { write(feed, $0.baseAddress, $0.count) }
            for _ in 0..<600 { _ = chunk.withUnsafeBytes { write(feed, $0.baseAddress, $0.count) } }
            let rest = Array(("\"}}]}\n" + #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"after"}]}"# + "\n").utf8)
            _ = rest.withUnsafeBytes { write(feed, $0.baseAddress, $0.count) }
            close(feed)
        }
        writer.start()
        let run = try CLI.runBounded(["apply", "--store", dir.sub("store"), "-"], input: fifo, timeout: 300)
        #expect(run.exited && run.status == 1, "\(run)")
        #expect(run.stderr.contains("line 1: the line is 629145") && run.stderr.contains("longer than the limit of 16777216 bytes"), "\(run.stderr)")
        // Flat: the 16 MiB limit and the reader's buffer, not the line.
        #expect(run.peakMemory < 200 << 20, "peak \(run.peakMemory >> 20) MiB")
        #expect(try CLI.run(["items", "--store", dir.sub("store"), "--json"]).objects().map { $0["uniqueIdentifier"] as? String } == ["after"])
    }

    @Test("a query 35,000 parentheses deep is an error, not a SIGSEGV, even with a 512 KiB stack; $time.iso refuses 2026-02-30")
    func deepQueryAndImpossibleDate() throws {
        let dir = try Stores.sample()
        defer { dir.remove() }
        let store = dir.sub("store")
        let deep = String(repeating: "(", count: 35_000) + #"title == "x""# + String(repeating: ")", count: 35_000)
        let status = try CLI.spawnAndWait("/bin/sh", arguments: ["-c", #"ulimit -s 512 && exec "$0" query "$1" --store "$2" 2> "$3""#,
                                                                 CLI.executable.path, deep, store, dir.sub("err")],
                                          environment: ProcessInfo.processInfo.environment, stdin: nil, stdout: "/dev/null", stderr: nil)
        let errors = (try? String(contentsOfFile: dir.sub("err"), encoding: .utf8)) ?? ""
        #expect(status == 1, "\(errors)")
        #expect(errors.contains("parentheses nest deeper than 64"), "\(errors)")
        let date = try CLI.run(["query", #"contentCreationDate > $time.iso("2026-02-30T00:00:00Z")"#, "--store", store])
        #expect(date.status == 1 && date.stderr.contains("is not an ISO-8601 date"), "\(date.stderr)")
        let now = try CLI.run(["search", "latte", "--store", store, "--now", "2026-02-30T00:00:00Z"])
        #expect(now.status != 0, "\(now.stderr)")
    }

    @Test("apply refuses a member given twice inside an item, attributeSet and contentAttributeSet, naming the member")
    func duplicateMembers() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = try CLI.run(["apply", "--store", dir.sub("store"), "-"], input: [
            #"{"op":"indexSearchableItems","user":"a","items":[{"uniqueIdentifier":"i1","uniqueIdentifier":"i2","attributeSet":{"title":"a","title":"b"}}]}"#,
            #"{"op":"indexSearchableItems","user":"a","items":[{"uniqueIdentifier":"i1","attributeSet":{"title":"a","title":"b"}}]}"#,
            #"{"op":"createActivity","activity":"a","activityType":"com.x.y","device":"d","contentAttributeSet":{"title":"a","title":"b"}}"#,
        ].joined(separator: "\n") + "\n")
        #expect(run.status == 1)
        #expect(run.stderr.contains(#"line 1: malformed JSON at column 75: member "uniqueIdentifier" appears twice in items[0]"#), "\(run.stderr)")
        #expect(run.stderr.contains(#"line 2"#) && run.stderr.contains(#"member "title" appears twice in items[0].attributeSet"#), "\(run.stderr)")
        #expect(run.stderr.contains(#"line 3"#) && run.stderr.contains(#"member "title" appears twice in contentAttributeSet"#), "\(run.stderr)")
        #expect(try CLI.run(["log", "--store", dir.sub("store"), "--json"]).stdout.isEmpty)
    }

    @Test("--after and --wait are bounded: a position past UInt64, a negative or endless wait, and --wait without --after are usage errors; a position past the head says how far the index is")
    func indexWaitOptions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = dir.sub("store")
        #expect(try CLI.run(["apply", "--store", store, try dir.file("ops.jsonl", Sample.good)]).status == 0)
        for (options, message) in [(["--after", "18446744073709551616"], "--after"), (["--after=-1"], "--after"),
                                   (["--after", "1", "--wait", "nan"], "--wait is nan"), (["--after", "1", "--wait=-1"], "--wait is -1.0"),
                                   (["--after", "1", "--wait", "1e300"], "allowed: 0 to 86400"), (["--wait", "5"], "needs --after")] {
            for command in [["search", "--store", store, "latte"], ["query", "--store", store, #"title == "x""#]] {
                let run = try CLI.runBounded(command + options, timeout: 60)
                #expect(run.exited && run.status == 64 && run.stderr.contains(message), "\(command[0]) \(options): \(run)")
            }
        }
        let past = try CLI.runBounded(["search", "--store", store, "latte", "--after", "18446744073709551615", "--wait", "0"], timeout: 60)
        #expect(past.exited && past.status == 1 && past.stderr.contains("short of position 18446744073709551615"), "\(past)")
    }
}
