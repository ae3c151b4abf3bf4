import ActivityDomain
import Foundation
import GRDB
import TextIndex

/// The peer's storage: what the load mixes touch (activities and their
/// lifecycle, the current activity of each device, searchable items and a
/// keyword search), as a team would write it on GRDB: a DatabasePool in WAL
/// mode with `synchronous=FULL` (set after opening: the pool sets WAL and
/// resets it), one write transaction a request, FTS5 over the items' text
/// with the owner as a token so that a search looks at one user's rows.
final class PeerStore: Sendable {
    let pool: DatabasePool

    init(path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        pool = try DatabasePool(path: (path as NSString).appendingPathComponent("peer.sqlite"))
        try pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS activities(
                    user TEXT NOT NULL, activity TEXT NOT NULL, device TEXT NOT NULL, state INTEGER NOT NULL,
                    json TEXT NOT NULL, becameCurrentAt REAL, PRIMARY KEY(user, activity)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS current(
                    user TEXT NOT NULL, device TEXT NOT NULL, activity TEXT NOT NULL, becameCurrentAt REAL NOT NULL,
                    PRIMARY KEY(user, device)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS items(
                    user TEXT NOT NULL, id TEXT NOT NULL, domain TEXT, json TEXT NOT NULL, expiration REAL NOT NULL,
                    UNIQUE(user, id));
                CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(
                    owner, title, displayName, contentDescription, keywords, content='', tokenize='unicode61 remove_diacritics 2');
                """)
        }
    }

    static let inactive = 0, current = 1, invalidated = 2

    /// The FTS token of a user: their name's bytes in hex (a name is bytes).
    static func ownerToken(_ user: String) -> String {
        "u" + user.utf8.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Activities

    func createActivity(_ activity: UserActivity, user: String) async throws {
        let json = try ActivityJSON.string(activity)
        try await pool.write { db in
            if try Int.fetchOne(db, sql: "SELECT 1 FROM activities WHERE user = ? AND activity = ?", arguments: [user, activity.activity]) != nil {
                throw ActivityError(.activityAlreadyExists, operation: "createActivity", field: "activity", value: activity.activity)
            }
            try db.execute(sql: "INSERT INTO activities(user, activity, device, state, json) VALUES (?, ?, ?, ?, ?)",
                           arguments: [user, activity.activity, activity.device, Self.inactive, json])
        }
    }

    /// Makes it current on its device, the one current there inactive.
    func becomeCurrent(_ id: String, user: String, at time: Date) async throws -> String? {
        try await pool.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT device, state FROM activities WHERE user = ? AND activity = ?",
                                             arguments: [user, id]) else {
                throw ActivityError(.unknownActivity, operation: "becomeCurrent", field: "activity", value: id)
            }
            let device: String = row["device"], state: Int = row["state"]
            if state == Self.invalidated {
                throw ActivityError(.activityInvalidated, operation: "becomeCurrent", field: "activity", value: id)
            }
            if state == Self.current { return nil }
            let superseded = try String.fetchOne(db, sql: "SELECT activity FROM current WHERE user = ? AND device = ?", arguments: [user, device])
            if let superseded {
                try db.execute(sql: "UPDATE activities SET state = ? WHERE user = ? AND activity = ?", arguments: [Self.inactive, user, superseded])
            }
            try db.execute(sql: "UPDATE activities SET state = ?, becameCurrentAt = ? WHERE user = ? AND activity = ?",
                           arguments: [Self.current, time.timeIntervalSince1970, user, id])
            try db.execute(sql: "INSERT OR REPLACE INTO current(user, device, activity, becameCurrentAt) VALUES (?, ?, ?, ?)",
                           arguments: [user, device, id, time.timeIntervalSince1970])
            return superseded
        }
    }

    /// The current activities of the user, by device: the activity's JSON with `becameCurrentAt`.
    func currentActivities(user: String) async throws -> [JSONValue] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.json, c.becameCurrentAt FROM current c JOIN activities a ON a.user = c.user AND a.activity = c.activity
                WHERE c.user = ? ORDER BY c.device
                """, arguments: [user]).map { row in
                let activity = try JSONValue(parsing: row["json"])
                let at = Date(timeIntervalSince1970: row["becameCurrentAt"])
                return activity.merging(.object([("becameCurrentAt", .string(ISO8601Time.string(from: at)))]))
            }
        }
    }

    // MARK: Items

    /// Indexes the items (each replacing the one with its identifier), in one transaction.
    func indexItems(_ items: [SearchableItem], user: String, at time: Date) async throws {
        let owner = Self.ownerToken(user)
        let prepared = try items.map { item -> (SearchableItem, String, Double) in
            var stored = item
            if stored.expirationDate == nil { stored.expirationDate = Calendar(identifier: .gregorian).date(byAdding: .month, value: 1, to: time) }
            return (stored, try ActivityJSON.string(stored), stored.expirationDate!.timeIntervalSince1970)
        }
        try await pool.write { db in
            for (item, json, expiration) in prepared {
                if let old = try Row.fetchOne(db, sql: "SELECT rowid, json FROM items WHERE user = ? AND id = ?", arguments: [user, item.uniqueIdentifier]) {
                    let rowid: Int64 = old["rowid"]
                    let previous = try SearchableItem(json: JSONValue(parsing: old["json"]))
                    try Self.deleteText(of: previous, rowid: rowid, owner: owner, db)
                    try db.execute(sql: "UPDATE items SET domain = ?, json = ?, expiration = ? WHERE rowid = ?",
                                   arguments: [item.domainIdentifier, json, expiration, rowid])
                    try Self.insertText(of: item, rowid: rowid, owner: owner, db)
                } else {
                    try db.execute(sql: "INSERT INTO items(user, id, domain, json, expiration) VALUES (?, ?, ?, ?, ?)",
                                   arguments: [user, item.uniqueIdentifier, item.domainIdentifier, json, expiration])
                    try Self.insertText(of: item, rowid: db.lastInsertedRowID, owner: owner, db)
                }
            }
        }
    }

    private static func text(of item: SearchableItem) -> [String] {
        let a = item.attributeSet
        return [a.title ?? "", a.displayName ?? "", a.contentDescription ?? "", a.keywords.joined(separator: " ")]
    }

    private static func insertText(of item: SearchableItem, rowid: Int64, owner: String, _ db: Database) throws {
        let t = text(of: item)
        try db.execute(sql: "INSERT INTO items_fts(rowid, owner, title, displayName, contentDescription, keywords) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [rowid, owner, t[0], t[1], t[2], t[3]])
    }

    /// A contentless FTS5 table forgets a row given the values it indexed.
    private static func deleteText(of item: SearchableItem, rowid: Int64, owner: String, _ db: Database) throws {
        let t = text(of: item)
        try db.execute(sql: """
            INSERT INTO items_fts(items_fts, rowid, owner, title, displayName, contentDescription, keywords) VALUES ('delete', ?, ?, ?, ?, ?, ?)
            """, arguments: [rowid, owner, t[0], t[1], t[2], t[3]])
    }

    /// Every word must match, the last as a prefix; ranked by BM25 with the
    /// title above the rest; the user's items not expired at `now`, each
    /// with its JSON: `{"kind","identifier","score","item"}`.
    ///
    /// With `globalMatch` (`PEER_SEARCH=global`, a diagnostic, never the
    /// benchmark's peer): a team's first version, which matches every
    /// user's rows and keeps the user's afterwards, with every user's
    /// statistics in the ranking.
    ///
    /// With `cachedSearch` (`PEER_STATEMENTS=cached`, a diagnostic): the
    /// search's statement is prepared once a reader connection, not each
    /// request (GRDB's default for `sql:` requests).
    func search(_ text: String, user: String, now: Date, limit: Int, globalMatch: Bool = false,
                cachedSearch: Bool = false) async throws -> [JSONValue] {
        let words = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map { $0.replacingOccurrences(of: "\"", with: "") }
        guard !words.isEmpty else { return [] }
        let terms = words.enumerated().map { index, word in "\"\(word)\"" + (index == words.count - 1 ? "*" : "") }
        let columns = "{title displayName contentDescription keywords}: (\(terms.joined(separator: " AND ")))"
        if globalMatch {
            return try await pool.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT i.id, i.json, bm25(items_fts, 0, 10, 5, 1, 5) AS rank FROM items_fts JOIN items i ON i.rowid = items_fts.rowid
                    WHERE items_fts MATCH ? AND i.user = ? AND i.expiration > ? ORDER BY rank, i.id LIMIT ?
                    """, arguments: [columns, user, now.timeIntervalSince1970, limit]).map { row in
                    let score: Double = row["rank"]
                    return JSONValue.object([("kind", .string("item")), ("identifier", .string(row["id"])), ("score", .double(-score)),
                                             ("item", try JSONValue(parsing: row["json"]))])
                }
            }
        }
        let match = "owner:\(Self.ownerToken(user)) AND \(columns)"
        let request = SQLRequest<Row>(sql: """
            SELECT i.id, i.json, bm25(items_fts, 0, 10, 5, 1, 5) AS rank FROM items_fts JOIN items i ON i.rowid = items_fts.rowid
            WHERE items_fts MATCH ? AND i.expiration > ? ORDER BY rank, i.id LIMIT ?
            """, arguments: [match, now.timeIntervalSince1970, limit], cached: cachedSearch)
        return try await pool.read { db in
            try Row.fetchAll(db, request).map { row in
                let score: Double = row["rank"]
                return JSONValue.object([("kind", .string("item")), ("identifier", .string(row["id"])), ("score", .double(-score)),
                                         ("item", try JSONValue(parsing: row["json"]))])
            }
        }
    }

    /// How many items and activities the store holds (for the benchmark's checks).
    func counts() async throws -> (items: Int, activities: Int) {
        try await pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0, try Int.fetchOne(db, sql: "SELECT count(*) FROM activities") ?? 0)
        }
    }
}
