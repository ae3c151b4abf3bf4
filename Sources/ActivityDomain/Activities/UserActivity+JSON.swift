import Foundation
import TextIndex
import LMDB

// MARK: JSON (SPEC §6 and §7)

extension UserActivity {
    /// The members of a `createActivity` operation (`Docs/Operations.md`)
    /// without `op`: `activity`, `activityType`, `device`, every property
    /// that is set (absent optionals left out), `userInfo` in the tagged
    /// JSON of SPEC §6, `keywords` and `requiredUserInfoKeys` sorted by UTF-8
    /// bytes, the four eligibilities always.
    ///
    /// ```swift
    /// activity.json.serialized()
    /// // {"activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","eligibleForHandoff":true,…,"userInfo":{"orderID":42}}
    /// ```
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("activity", .string(activity)),
            ("activityType", .string(activityType)),
            ("device", .string(device)),
            ("userInfo", UserInfoValue.jsonObject(userInfo)),
            ("keywords", .array(keywords.sorted(by: utf8Less).map(JSONValue.string))),
            ("eligibleForHandoff", .bool(eligibleForHandoff)),
            ("eligibleForSearch", .bool(eligibleForSearch)),
            ("eligibleForPrediction", .bool(eligibleForPrediction)),
            ("eligibleForPublicIndexing", .bool(eligibleForPublicIndexing)),
        ]
        func add(_ name: String, _ value: JSONValue?) {
            if let value { members.append((name, value)) }
        }
        add("user", user.map(JSONValue.string))
        add("title", title.map(JSONValue.string))
        add("requiredUserInfoKeys", requiredUserInfoKeys.map { .array($0.sorted().map { .string($0.string) }) })
        add("persistentIdentifier", persistentIdentifier.map(JSONValue.string))
        add("targetContentIdentifier", targetContentIdentifier.map(JSONValue.string))
        add("webpageURL", webpageURL.map { .string($0.absoluteString) })
        add("referrerURL", referrerURL.map { .string($0.absoluteString) })
        add("expirationDate", expirationDate.map { .string(ISO8601Time.string(from: $0)) })
        add("contentAttributeSet", contentAttributeSet.map(\.json))
        add("appEntityIdentifier", appEntityIdentifier.map(JSONValue.string))
        return .object(members)
    }

    /// Reads the members of a `createActivity` operation (without `op`, `at`):
    /// as strict as `eventlog apply` (an unknown member, a member given
    /// twice or a value of the wrong type is an ``ActivityError`` naming it).
    public init(json: JSONValue) throws {
        guard case .object = json else {
            throw ActivityError(.invalidValue, operation: "createActivity", field: "activity", value: json.kindName, allowed: "an object")
        }
        var reader = MemberReader(json: json, operation: "createActivity")
        self = try Self.read(&reader)
        user = try reader.optional("user", reader.string)
        try reader.rejectUnknownMembers()
    }

    /// The activity's members of a `createActivity` operation (all but `user`
    /// and `at`, which name the operation's space and time).
    static func read(_ reader: inout MemberReader) throws -> UserActivity {
        var activity = UserActivity(
            activity: try reader.required("activity", reader.string),
            activityType: try reader.required("activityType", reader.string),
            device: try reader.required("device", reader.string))
        activity.title = try reader.optional("title", reader.string)
        activity.userInfo = try reader.optional("userInfo", reader.userInfo) ?? [:]
        activity.requiredUserInfoKeys = try reader.optional("requiredUserInfoKeys", reader.strings).map { Set($0.map { Name($0) }) }
        activity.keywords = Set(try reader.optional("keywords", reader.strings) ?? [])
        activity.persistentIdentifier = try reader.optional("persistentIdentifier", reader.string)
        activity.targetContentIdentifier = try reader.optional("targetContentIdentifier", reader.string)
        activity.webpageURL = try reader.optional("webpageURL", reader.url)
        activity.referrerURL = try reader.optional("referrerURL", reader.url)
        activity.expirationDate = try reader.optional("expirationDate", reader.date)
        activity.eligibleForHandoff = try reader.optional("eligibleForHandoff", reader.bool) ?? true
        activity.eligibleForSearch = try reader.optional("eligibleForSearch", reader.bool) ?? false
        activity.eligibleForPrediction = try reader.optional("eligibleForPrediction", reader.bool) ?? false
        activity.eligibleForPublicIndexing = try reader.optional("eligibleForPublicIndexing", reader.bool) ?? false
        activity.contentAttributeSet = try reader.optional("contentAttributeSet", reader.attributes)
        activity.appEntityIdentifier = try reader.optional("appEntityIdentifier", reader.string)
        return activity
    }
}

extension UserActivity: JSONRepresentable {}

extension ActivityUpdate {
    /// The members of an `updateActivity` operation without `op`, `activity`,
    /// `user` and `at`: what is given is set, `null` clears an optional
    /// property, what is left out is kept.
    ///
    /// ```swift
    /// try ActivityUpdate(json: JSONValue(parsing: #"{"title":"Oat latte","targetContentIdentifier":null}"#))
    /// ```
    public init(json: JSONValue) throws {
        guard case .object = json else {
            throw ActivityError(.invalidValue, operation: "updateActivity", field: "update", value: json.kindName, allowed: "an object")
        }
        var reader = MemberReader(json: json, operation: "updateActivity")
        self = try Self.read(&reader)
        try reader.rejectUnknownMembers()
    }

    /// An update: a member left out keeps the property; `null` clears an
    /// optional property (`.some(nil)`), and is an error for the others.
    static func read(_ reader: inout MemberReader) throws -> ActivityUpdate {
        for fixed in ["activityType", "device"] where reader.has(fixed) {
            throw ActivityError(.malformedOperation, operation: "updateActivity", field: fixed, value: reader.shown(fixed),
                                allowed: "activityType and device are fixed when the activity is created")
        }
        var update = ActivityUpdate()
        update.title = try reader.clearable("title", reader.string)
        update.userInfo = try reader.optional("userInfo", reader.userInfo)
        update.requiredUserInfoKeys = try reader.clearable("requiredUserInfoKeys", reader.strings).map { $0.map { Set($0.map { Name($0) }) } }
        update.keywords = try reader.optional("keywords", reader.strings).map(Set.init)
        update.persistentIdentifier = try reader.clearable("persistentIdentifier", reader.string)
        update.targetContentIdentifier = try reader.clearable("targetContentIdentifier", reader.string)
        update.webpageURL = try reader.clearable("webpageURL", reader.url)
        update.referrerURL = try reader.clearable("referrerURL", reader.url)
        update.expirationDate = try reader.clearable("expirationDate", reader.date)
        update.eligibleForHandoff = try reader.optional("eligibleForHandoff", reader.bool)
        update.eligibleForSearch = try reader.optional("eligibleForSearch", reader.bool)
        update.eligibleForPrediction = try reader.optional("eligibleForPrediction", reader.bool)
        update.eligibleForPublicIndexing = try reader.optional("eligibleForPublicIndexing", reader.bool)
        update.contentAttributeSet = try reader.clearable("contentAttributeSet", reader.attributes)
        update.appEntityIdentifier = try reader.clearable("appEntityIdentifier", reader.string)
        return update
    }

    /// What ``init(json:)`` reads: set members with their values, cleared ones as `null`.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        func add<T>(_ name: String, _ value: T??, _ convert: (T) -> JSONValue) {
            switch value {
            case .none: break
            case .some(.none): members.append((name, .null))
            case .some(.some(let v)): members.append((name, convert(v)))
            }
        }
        func set<T>(_ name: String, _ value: T?, _ convert: (T) -> JSONValue) {
            if let value { members.append((name, convert(value))) }
        }
        add("title", title, JSONValue.string)
        set("userInfo", userInfo, UserInfoValue.jsonObject)
        add("requiredUserInfoKeys", requiredUserInfoKeys) { .array($0.sorted().map { .string($0.string) }) }
        set("keywords", keywords) { .array($0.sorted(by: utf8Less).map(JSONValue.string)) }
        add("persistentIdentifier", persistentIdentifier, JSONValue.string)
        add("targetContentIdentifier", targetContentIdentifier, JSONValue.string)
        add("webpageURL", webpageURL) { .string($0.absoluteString) }
        add("referrerURL", referrerURL) { .string($0.absoluteString) }
        add("expirationDate", expirationDate) { .string(ISO8601Time.string(from: $0)) }
        set("eligibleForHandoff", eligibleForHandoff, JSONValue.bool)
        set("eligibleForSearch", eligibleForSearch, JSONValue.bool)
        set("eligibleForPrediction", eligibleForPrediction, JSONValue.bool)
        set("eligibleForPublicIndexing", eligibleForPublicIndexing, JSONValue.bool)
        add("contentAttributeSet", contentAttributeSet, \.json)
        add("appEntityIdentifier", appEntityIdentifier, JSONValue.string)
        return .object(members)
    }
}

extension ActivityUpdate: JSONRepresentable {}
