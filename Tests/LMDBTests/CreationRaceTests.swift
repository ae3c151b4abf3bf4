import Foundation
import LMDB
import Testing

@Suite("Opening an environment another process is creating")
struct CreationRaceTests {
    /// What the torture test met under load: a reader opened the store
    /// between a writer's creating `data.mdb` and its writing the meta
    /// pages, and was told the file was cut short. Here another process
    /// plays that writer: it holds LMDB's exclusive lock on `lock.mdb`
    /// (byte 0, `fcntl`, as `mdb_env_excl_lock` does) over an empty
    /// `data.mdb` for a while, then puts a lock file's header and an
    /// environment's pages in place and lets go.
    @Test("an open waits for the creator's exclusive lock instead of calling the empty data file cut short")
    func waitsForTheCreator() throws {
        let source = temporaryPath()
        let path = temporaryPath()
        defer {
            try? FileManager.default.removeItem(atPath: source)
            try? FileManager.default.removeItem(atPath: path)
        }
        do {
            let env = try Environment(path: source)
            let db = try env.write { try $0.createDatabase("things", as: String.self, String.self) }
            try env.write { txn in try db.put("made by the creator", forKey: "who", in: txn) }
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let ready = path + "/ready"
        let creator = Process()
        creator.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        creator.arguments = ["-c", """
            import fcntl, os, shutil, sys, time
            src, dst = sys.argv[1], sys.argv[2]
            lock = open(dst + "/lock.mdb", "a+b")
            fcntl.lockf(lock, fcntl.LOCK_EX, 1, 0)
            open(dst + "/data.mdb", "wb").close()
            open(dst + "/ready", "w").close()
            time.sleep(0.5)
            # As LMDB's creator, the lock file is set up before the lock is let go:
            # an opener that finds the data file whole while the lock is still held
            # waits in LMDB for a shared lock, then reads this header.
            lock.seek(0); lock.truncate(0)
            lock.write(open(src + "/lock.mdb", "rb").read()); lock.flush()
            shutil.copyfile(src + "/data.mdb", dst + "/data.mdb.tmp")
            os.rename(dst + "/data.mdb.tmp", dst + "/data.mdb")
            fcntl.lockf(lock, fcntl.LOCK_UN, 1, 0)
            """, source, path]
        try creator.run()
        defer { creator.waitUntilExit() }
        while !FileManager.default.fileExists(atPath: ready) {
            #expect(creator.isRunning, "the creator process ended before it took the lock")
            guard creator.isRunning else { return }
            usleep(1_000)
        }
        var options = EnvironmentOptions()
        options.readOnly = true
        let env = try Environment(path: path, options: options)
        let value = try env.read { txn in
            try txn.openDatabase("things", as: String.self, String.self).get("who", in: txn)
        }
        #expect(value == "made by the creator")
    }

    @Test("an empty data file that nobody is creating is still called cut short")
    func emptyFileWithoutCreator() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path + "/data.mdb", contents: Data()))
        #expect {
            _ = try Environment(path: path)
        } throws: { error in
            guard let error = error as? DamagedFileError, case .cutShort(0, nil, _) = error.problem else { return false }
            return true
        }
    }
}
