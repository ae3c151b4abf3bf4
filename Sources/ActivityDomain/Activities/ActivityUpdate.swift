import Foundation
import LMDB

/// The properties an `updateActivity` sets. A property left nil is kept; an
/// optional property set to `.some(nil)` is cleared. A given `userInfo`
/// replaces the whole dictionary (``ActivityStore/addUserInfoEntries(_:to:at:)``
/// merges instead).
///
/// ```swift
/// var update = ActivityUpdate()
/// update.title = "Oat latte"              // set
/// update.keywords = ["coffee", "oat"]     // replace the set
/// update.targetContentIdentifier = .some(nil)   // clear
/// try store.updateActivity("a1", update)
/// ```
///
/// `activity`, `activityType`, `device` and `user` cannot change.
public struct ActivityUpdate: Sendable, Hashable {
    public var title: String??
    public var userInfo: [Name: UserInfoValue]?
    public var requiredUserInfoKeys: Set<Name>??
    public var keywords: Set<String>?
    public var persistentIdentifier: String??
    public var targetContentIdentifier: String??
    public var webpageURL: URL??
    public var referrerURL: URL??
    public var expirationDate: Date??
    public var eligibleForHandoff: Bool?
    public var eligibleForSearch: Bool?
    public var eligibleForPrediction: Bool?
    public var eligibleForPublicIndexing: Bool?
    public var contentAttributeSet: ContentAttributeSet??
    public var appEntityIdentifier: String??

    public init() {}

    /// `activity` with this update applied, and the names of the properties
    /// whose value changed (sorted).
    public func applied(to activity: UserActivity) -> (activity: UserActivity, changed: [String]) {
        var result = activity
        if let title { result.title = title }
        if let userInfo { result.userInfo = userInfo.mapValues(\.normalized) }
        if let requiredUserInfoKeys { result.requiredUserInfoKeys = requiredUserInfoKeys }
        if let keywords { result.keywords = keywords }
        if let persistentIdentifier { result.persistentIdentifier = persistentIdentifier }
        if let targetContentIdentifier { result.targetContentIdentifier = targetContentIdentifier }
        if let webpageURL { result.webpageURL = webpageURL }
        if let referrerURL { result.referrerURL = referrerURL }
        if let expirationDate { result.expirationDate = expirationDate?.roundedToMicroseconds }
        if let eligibleForHandoff { result.eligibleForHandoff = eligibleForHandoff }
        if let eligibleForSearch { result.eligibleForSearch = eligibleForSearch }
        if let eligibleForPrediction { result.eligibleForPrediction = eligibleForPrediction }
        if let eligibleForPublicIndexing { result.eligibleForPublicIndexing = eligibleForPublicIndexing }
        if let contentAttributeSet { result.contentAttributeSet = contentAttributeSet?.normalized }
        if let appEntityIdentifier { result.appEntityIdentifier = appEntityIdentifier }
        return (result, Self.changedProperties(from: activity, to: result))
    }

    /// The names of the properties that differ between two activities,
    /// sorted; strings differ when their bytes do (a title rewritten in
    /// another normalization form is a change, and is recorded).
    static func changedProperties(from old: UserActivity, to new: UserActivity) -> [String] {
        var changed: [String] = []
        func note(_ name: String, _ differs: Bool) { if differs { changed.append(name) } }
        func differ(_ a: String?, _ b: String?) -> Bool { a.map { Name($0) } != b.map { Name($0) } }
        note("title", differ(old.title, new.title))
        note("userInfo", old.userInfo != new.userInfo)
        note("requiredUserInfoKeys", old.requiredUserInfoKeys != new.requiredUserInfoKeys)
        note("keywords", Set(old.keywords.map { Name($0) }) != Set(new.keywords.map { Name($0) }))
        note("persistentIdentifier", differ(old.persistentIdentifier, new.persistentIdentifier))
        note("targetContentIdentifier", differ(old.targetContentIdentifier, new.targetContentIdentifier))
        note("webpageURL", differ(old.webpageURL?.absoluteString, new.webpageURL?.absoluteString))
        note("referrerURL", differ(old.referrerURL?.absoluteString, new.referrerURL?.absoluteString))
        note("expirationDate", old.expirationDate != new.expirationDate)
        note("eligibleForHandoff", old.eligibleForHandoff != new.eligibleForHandoff)
        note("eligibleForSearch", old.eligibleForSearch != new.eligibleForSearch)
        note("eligibleForPrediction", old.eligibleForPrediction != new.eligibleForPrediction)
        note("eligibleForPublicIndexing", old.eligibleForPublicIndexing != new.eligibleForPublicIndexing)
        note("contentAttributeSet", old.contentAttributeSet != new.contentAttributeSet)
        note("appEntityIdentifier", differ(old.appEntityIdentifier, new.appEntityIdentifier))
        return changed.sorted(by: utf8Less)
    }
}
