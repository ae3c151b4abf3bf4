import Foundation
import LMDB
import Testing

func temporaryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("lmdb-test-\(UUID().uuidString)").path
}

@Suite("The typed LMDB layer")
struct LMDBTests {
    @Test("an LMDB failure names the C call and carries LMDB's message")
    func errorsNameTheCall() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("things", as: String.self, [UInt8].self) }
        #expect {
            try env.write { txn in try db.put([1], forKey: "", in: txn) }
        } throws: { error in
            guard let error = error as? LMDBError else { return false }
            return error.call == "mdb_put(things)" && error == .badValueSize && "\(error)".contains("MDB_BAD_VALSIZE")
        }
        #expect {
            try env.read { txn in _ = try txn.openDatabase("absent", as: String.self, String.self) }
        } throws: { ($0 as? LMDBError) == .notFound }
    }

    @Test("UInt64 keys are big-endian, so a cursor walks them in numeric order")
    func numericOrder() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("n", as: UInt64.self, String.self) }
        try env.write { txn in
            for n: UInt64 in [300, 2, 70_000, 1, 256] { try db.put("v\(n)", forKey: n, in: txn) }
        }
        let keys = try env.read { txn in
            let cursor = try db.cursor(in: txn)
            var keys: [UInt64] = []
            var entry = try cursor.first()
            while let (key, _) = entry { keys.append(key); entry = try cursor.next() }
            return keys
        }
        #expect(keys == [1, 2, 256, 300, 70_000])
        #expect(try env.read { txn in try db.cursor(in: txn).seek(atOrAfter: 257)?.value } == "v300")
        #expect(try env.read { try db.get(3, in: $0) } == nil)
    }

    @Test("MDB_APPEND refuses a key that does not sort last")
    func appendOrder() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("log", as: UInt64.self, [UInt8].self) }
        try env.write { txn in try db.put([1], forKey: 5, flags: .append, in: txn) }
        #expect(throws: LMDBError.keyExists) {
            try env.write { txn in try db.put([1], forKey: 4, flags: .append, in: txn) }
        }
    }

    @Test("duplicate-sorted values: several per key, in order, removable one by one")
    func duplicates() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("d", as: String.self, String.self, flags: .duplicateSort) }
        try env.write { txn in
            for v in ["c", "a", "b"] { try db.put(v, forKey: "k", in: txn) }
            try db.delete("k", value: "b", in: txn)
        }
        let values = try env.read { txn in
            let cursor = try db.cursor(in: txn)
            var values: [String] = []
            var entry = try cursor.seek(exactly: "k")
            while let (_, v) = entry { values.append(v); entry = try cursor.next() }
            return values
        }
        #expect(values == ["a", "c"])
    }

    @Test("a nested transaction that throws undoes only its own writes")
    func nestedRollback() throws {
        struct Undo: Error {}
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("n", as: String.self, String.self) }
        try env.write { txn in
            try db.put("kept", forKey: "a", in: txn)
            try? txn.nested { child in
                try db.put("undone", forKey: "b", in: child)
                throw Undo()
            }
        }
        #expect(try env.read { try db.get("a", in: $0) } == "kept")
        #expect(try env.read { try db.get("b", in: $0) } == nil)
    }

    @Test("a read transaction keeps seeing the commit it began with")
    func snapshotIsolation() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        let db = try env.write { try $0.createDatabase("n", as: String.self, String.self) }
        try env.write { txn in try db.put("old", forKey: "k", in: txn) }
        try env.read { txn throws in
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                try? env.write { txn in try db.put("new", forKey: "k", in: txn) }
                done.signal()
            }
            done.wait()
            #expect(try db.get("k", in: txn) == "old")
        }
        #expect(try env.read { try db.get("k", in: $0) } == "new")
    }

    @Test("a full map grows by itself and the write goes through")
    func mapGrows() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = EnvironmentOptions()
        options.mapSize = 256 << 10
        let env = try Environment(path: path, options: options)
        let db = try env.write { try $0.createDatabase("big", as: UInt64.self, [UInt8].self) }
        let value = [UInt8](repeating: 7, count: 4000)
        try env.write { txn in
            for n in UInt64(0)..<2000 { try db.put(value, forKey: n, in: txn) }
        }
        #expect(env.info().mapSize >= 8 << 20)
        #expect(try env.read { try db.statistics(in: $0).entries } == 2000)
    }

    @Test("opening one path twice in a process is refused")
    func openTwice() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = try Environment(path: path)
        #expect(throws: EnvironmentAlreadyOpenError.self) { _ = try Environment(path: path) }
        _ = env
    }
}
