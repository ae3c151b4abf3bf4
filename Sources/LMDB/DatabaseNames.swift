/// Listing the named databases of an environment, for tools that report on
/// a store without knowing its layers (`eventlog stats`).
extension ReadTransaction {
    /// The names of the environment's named databases, sorted by bytes as
    /// LMDB keeps them: the keys of the main (unnamed) database, where LMDB
    /// records every named database it created.
    public func databaseNames() throws -> [String] {
        let main: Database<[UInt8], [UInt8]> = try openDatabase(nil)
        let cursor = try main.cursor(in: self)
        var names: [String] = []
        var entry = try cursor.firstBytes()
        while let (key, _) = entry {
            names.append(String(decoding: key, as: UTF8.self))
            entry = try cursor.nextBytes()
        }
        return names
    }
}
