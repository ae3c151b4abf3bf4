import Foundation
import LMDB

/// The stateless rules of SPEC §3 and §8: what makes an identifier, an
/// activity type and an activity's properties acceptable, and what a saved
/// copy holds. The rules that need the store's state (declared types,
/// existing activities, lifecycle) are in ``ActivityCommandExecutor``.
public enum ActivityRules {
    /// The longest identifier, in UTF-8 bytes: keeps every LMDB key under its 511-byte limit.
    public static let maxIdentifierBytes = 256

    /// The largest single value, in bytes: a title, a description, a
    /// keyword, a URL, a userInfo string, key or data, an item's thumbnail.
    /// Core Spotlight bounds its attributes too; here the bound keeps what
    /// one command costs (tokenizing, the event, the views) proportionate:
    /// a 100 MB title would take a gigabyte to index.
    public static let maxFieldBytes = 1 << 20

    /// Throws ``ActivityError/Code/fieldTooLarge`` when `count` bytes of
    /// `field` are more than ``maxFieldBytes``.
    /// `field` is made only for the error: every text of every item is checked.
    static func checkSize(_ count: Int, field: @autoclosure () -> String, operation: String) throws {
        guard count > maxFieldBytes else { return }
        throw ActivityError(.fieldTooLarge, operation: operation, field: field(), value: "\(count) bytes",
                            allowed: "at most \(maxFieldBytes) bytes (1 MiB) in one value")
    }

    /// Checks the size of each text and data value of `attributes` (see ``maxFieldBytes``).
    static func checkSizes(of attributes: ContentAttributeSet, field: String, operation: String) throws {
        for (name, text) in [("title", attributes.title), ("displayName", attributes.displayName),
                             ("contentDescription", attributes.contentDescription), ("comment", attributes.comment),
                             ("contentType", attributes.contentType)] {
            if let text { try checkSize(text.utf8.count, field: "\(field).\(name)", operation: operation) }
        }
        for (name, list) in [("keywords", attributes.keywords), ("authorNames", attributes.authorNames)] {
            for (index, text) in list.enumerated() { try checkSize(text.utf8.count, field: "\(field).\(name)[\(index)]", operation: operation) }
        }
        if let data = attributes.thumbnailData { try checkSize(data.count, field: "\(field).thumbnailData", operation: operation) }
    }

    /// Checks a userInfo dictionary: every value finite, no string, key or
    /// data over ``maxFieldBytes``, nesting at most ``UserInfoValue/maxDepth``.
    static func checkUserInfo(_ entries: [Name: UserInfoValue], path: String, operation: String) throws {
        // The dictionary itself is one level.
        if UserInfoValue.dictionary(entries).depth(upTo: UserInfoValue.maxDepth + 1) - 1 > UserInfoValue.maxDepth {
            throw ActivityError(.fieldTooLarge, operation: operation, field: path, value: "nested more than \(UserInfoValue.maxDepth) levels",
                                allowed: "arrays and dictionaries nested at most \(UserInfoValue.maxDepth) levels in one value")
        }
        for (key, value) in entries {
            try checkSize(key.string.utf8.count, field: "\(path) key", operation: operation)
            try checkValue(value, path: "\(path).\(key)", operation: operation)
        }
    }

    private static func checkValue(_ value: UserInfoValue, path: String, operation: String) throws {
        switch value {
        case .string(let s): try checkSize(s.utf8.count, field: path, operation: operation)
        case .data(let d): try checkSize(d.count, field: path, operation: operation)
        case .url(let u): try checkSize(u.absoluteString.utf8.count, field: path, operation: operation)
        case .array(let values):
            for (index, value) in values.enumerated() { try checkValue(value, path: "\(path)[\(index)]", operation: operation) }
        case .dictionary(let entries):
            for (key, value) in entries {
                try checkSize(key.string.utf8.count, field: "\(path) key", operation: operation)
                try checkValue(value, path: "\(path).\(key)", operation: operation)
            }
        default: try checkFinite(value, path: path, operation: operation)
        }
    }

    /// Throws unless `user` names a user space: `""` (the default space) or
    /// 1 to 256 UTF-8 bytes without NUL.
    public static func checkUser(_ user: String, operation: String) throws {
        let length = user.utf8.count
        guard length <= maxIdentifierBytes, !user.utf8.contains(0) else {
            throw ActivityError(.invalidUser, operation: operation, field: "user", value: user,
                                allowed: "\"\" (the default space) or 1 to \(maxIdentifierBytes) UTF-8 bytes without NUL; this one has \(length)")
        }
    }

    /// Throws unless `value` is non-empty and at most 256 UTF-8 bytes.
    public static func checkIdentifier(_ value: String, field: String, operation: String) throws {
        let length = value.utf8.count
        if length == 0 {
            throw ActivityError(.identifierEmpty, operation: operation, field: field, value: value,
                                allowed: "1 to \(maxIdentifierBytes) UTF-8 bytes")
        }
        if length > maxIdentifierBytes {
            throw ActivityError(.identifierTooLong, operation: operation, field: field, value: value,
                                allowed: "1 to \(maxIdentifierBytes) UTF-8 bytes; this one has \(length)")
        }
    }

    /// Whether `type` is reverse-DNS: two or more dot-separated labels of
    /// ASCII letters, digits, `-` and `_`, none empty.
    public static func isReverseDNS(_ type: String) -> Bool {
        let labels = type.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }

    /// Throws unless `type` is a well-formed activity type.
    public static func checkActivityTypeSyntax(_ type: String, operation: String, field: String = "activityType") throws {
        try checkIdentifier(type, field: field, operation: operation)
        guard isReverseDNS(type) else {
            throw ActivityError(.malformedActivityType, operation: operation, field: field, value: type,
                                allowed: "reverse-DNS such as com.companyName.productName.activityName01 (labels of letters, digits, - and _)")
        }
    }

    /// Throws when a property breaks a rule that needs no store state:
    /// identifiers, activity type syntax, URL schemes, public indexing,
    /// finite numbers.
    public static func checkProperties(of activity: UserActivity, operation: String) throws {
        try checkIdentifier(activity.activity, field: "activity", operation: operation)
        try checkActivityTypeSyntax(activity.activityType, operation: operation)
        try checkIdentifier(activity.device, field: "device", operation: operation)
        if let user = activity.user { try checkUser(user, operation: operation) }
        if let id = activity.persistentIdentifier { try checkIdentifier(id, field: "persistentIdentifier", operation: operation) }
        if let id = activity.targetContentIdentifier {
            try checkIdentifier(id, field: "targetContentIdentifier", operation: operation)
        }
        if let id = activity.appEntityIdentifier { try checkIdentifier(id, field: "appEntityIdentifier", operation: operation) }
        if let url = activity.webpageURL {
            let scheme = url.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
                throw ActivityError(.invalidWebpageURL, operation: operation, field: "webpageURL", value: url.absoluteString,
                                    allowed: "an http or https URL with a host")
            }
        }
        if let url = activity.referrerURL, url.scheme == nil {
            throw ActivityError(.invalidValue, operation: operation, field: "referrerURL", value: url.absoluteString,
                                allowed: "an absolute URL")
        }
        if activity.eligibleForPublicIndexing && activity.webpageURL == nil && (activity.requiredUserInfoKeys ?? []).isEmpty {
            throw ActivityError(.publicIndexingRequiresWebpageURLOrRequiredKeys, operation: operation,
                                field: "eligibleForPublicIndexing", value: "true",
                                allowed: "public indexing with a webpageURL or a non-empty requiredUserInfoKeys")
        }
        if let title = activity.title { try checkSize(title.utf8.count, field: "title", operation: operation) }
        for (index, keyword) in activity.keywords.sorted(by: utf8Less).enumerated() {
            try checkSize(keyword.utf8.count, field: "keywords[\(index)]", operation: operation)
        }
        for (name, url) in [("webpageURL", activity.webpageURL), ("referrerURL", activity.referrerURL)] {
            if let url { try checkSize(url.absoluteString.utf8.count, field: name, operation: operation) }
        }
        try checkUserInfo(activity.userInfo, path: "userInfo", operation: operation)
        if let attributes = activity.contentAttributeSet {
            try checkSizes(of: attributes, field: "contentAttributeSet", operation: operation)
            for (name, number) in [("rating", attributes.rating), ("latitude", attributes.latitude), ("longitude", attributes.longitude)] {
                if let number, !number.isFinite {
                    throw ActivityError(.invalidValue, operation: operation, field: "contentAttributeSet.\(name)",
                                        value: "\(number)", allowed: "a finite number")
                }
            }
        }
    }

    /// Non-finite doubles have no JSON form and break equality (NaN ≠ NaN).
    static func checkFinite(_ value: UserInfoValue, path: String, operation: String) throws {
        switch value {
        case .double(let d) where !d.isFinite:
            throw ActivityError(.invalidValue, operation: operation, field: path, value: "\(d)", allowed: "a finite number")
        case .array(let values):
            for (index, value) in values.enumerated() { try checkFinite(value, path: "\(path)[\(index)]", operation: operation) }
        case .dictionary(let entries):
            for (key, value) in entries { try checkFinite(value, path: "\(path).\(key)", operation: operation) }
        default: break
        }
    }

    /// Whether an activity is saved when it becomes current, or is updated
    /// while current, at `time`: eligible for search or prediction, and not expired.
    public static func isSaved(_ activity: UserActivity, at time: Date) -> Bool {
        (activity.eligibleForSearch || activity.eligibleForPrediction) && !activity.isExpired(at: time)
    }

    /// The copy that is saved: the activity, `userInfo` cut to
    /// `requiredUserInfoKeys` when they are set. Throws when a required key
    /// is missing from `userInfo`.
    public static func savedCopy(of activity: UserActivity, operation: String) throws -> UserActivity {
        guard let required = activity.requiredUserInfoKeys else { return activity }
        let missing = required.filter { activity.userInfo[$0] == nil }.sorted()
        if !missing.isEmpty {
            throw ActivityError(.missingRequiredUserInfoKeys, operation: operation, field: "userInfo",
                                value: missing.map(\.string).joined(separator: ", "),
                                allowed: "userInfo holding every required key: \(required.sorted().map(\.string).joined(separator: ", "))")
        }
        var copy = activity
        copy.userInfo = activity.userInfo.filter { required.contains($0.key) }
        return copy
    }
}
