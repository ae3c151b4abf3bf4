import Foundation
import LMDB

/// An NSUserActivity as the store keeps it: every property of SPEC §3, with
/// Apple's names and defaults (`eligibleForHandoff` true, the other
/// eligibilities false).
///
/// ```swift
/// var activity = UserActivity(activity: "a1", activityType: "com.companyName.productName.activityName01",
///                             device: "phone")
/// activity.title = "Current Activity"
/// activity.userInfo = ["informationKey": "value"]
/// try store.createActivity(activity)
/// try store.becomeCurrent("a1")
/// ```
///
/// `activity`, `activityType`, `device` and `user` are fixed when the
/// activity is created; ``ActivityUpdate`` changes the others.
public struct UserActivity: Sendable, Hashable {
    /// The caller's id for this activity, unique in the store (≤ 256 UTF-8 bytes).
    public var activity: String
    /// Reverse-DNS type; must have been declared.
    public var activityType: String
    /// The device the activity lives on.
    public var device: String
    /// The owner; Handoff stays within one user.
    public var user: String?
    public var title: String?
    /// Keyed by ``Name``: two keys that differ in one byte are two keys.
    public var userInfo: [Name: UserInfoValue] = [:]
    /// When set, only these keys are saved, and each must be in `userInfo` then.
    public var requiredUserInfoKeys: Set<Name>?
    public var keywords: Set<String> = []
    /// The key of the saved copy, and of deletion.
    public var persistentIdentifier: String?
    public var targetContentIdentifier: String?
    /// http or https only.
    public var webpageURL: URL?
    public var referrerURL: URL?
    /// After it (at it, exactly): not saved, not handed off.
    public var expirationDate: Date?
    public var eligibleForHandoff = true
    public var eligibleForSearch = false
    public var eligibleForPrediction = false
    /// Needs `webpageURL` or a non-empty `requiredUserInfoKeys`.
    public var eligibleForPublicIndexing = false
    public var contentAttributeSet: ContentAttributeSet?
    public var appEntityIdentifier: String?

    public init(activity: String, activityType: String, device: String, user: String? = nil) {
        self.activity = activity
        self.activityType = activityType
        self.device = device
        self.user = user
    }

    /// The key its saved copy goes under: `persistentIdentifier`, else the activity id.
    public var savedKey: String { persistentIdentifier ?? activity }

    /// Whether it is expired at `time` (at its expiration date or later).
    public func isExpired(at time: Date) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate.microsecondsRounded <= time.eventMicroseconds
    }

    /// The same activity with dates at the store's precision (whole microseconds).
    var normalized: UserActivity {
        var copy = self
        copy.userInfo = userInfo.mapValues(\.normalized)
        copy.expirationDate = expirationDate?.roundedToMicroseconds
        copy.contentAttributeSet = contentAttributeSet?.normalized
        return copy
    }
}

// MARK: Protocol Buffers

extension UserActivity {
    var proto: Activitylog_V1_Activity {
        var m = Activitylog_V1_Activity()
        m.activity = activity
        m.activityType = activityType
        m.device = device
        if let user { m.user = user }
        if let title { m.title = title }
        m.userInfo = UserInfoValue.protoDictionary(userInfo)
        if let requiredUserInfoKeys {
            var set = Activitylog_V1_StringSet()
            set.values = requiredUserInfoKeys.sorted().map(\.string)
            m.requiredUserInfoKeys = set
        }
        m.keywords = keywords.sorted(by: utf8Less)
        if let persistentIdentifier { m.persistentIdentifier = persistentIdentifier }
        if let targetContentIdentifier { m.targetContentIdentifier = targetContentIdentifier }
        if let webpageURL { m.webpageURL = webpageURL.absoluteString }
        if let referrerURL { m.referrerURL = referrerURL.absoluteString }
        if let expirationDate { m.expirationDateMicros = expirationDate.microsecondsRounded }
        m.eligibleForHandoff = eligibleForHandoff
        m.eligibleForSearch = eligibleForSearch
        m.eligibleForPrediction = eligibleForPrediction
        m.eligibleForPublicIndexing = eligibleForPublicIndexing
        if let contentAttributeSet { m.contentAttributeSet = contentAttributeSet.proto }
        if let appEntityIdentifier { m.appEntityIdentifier = appEntityIdentifier }
        return m
    }

    init(proto m: Activitylog_V1_Activity) throws {
        self.init(activity: m.activity, activityType: m.activityType, device: m.device, user: m.hasUser ? m.user : nil)
        title = m.hasTitle ? m.title : nil
        userInfo = try UserInfoValue.dictionary(from: m.userInfo)
        requiredUserInfoKeys = m.hasRequiredUserInfoKeys ? Set(m.requiredUserInfoKeys.values.map { Name($0) }) : nil
        keywords = Set(m.keywords)
        persistentIdentifier = m.hasPersistentIdentifier ? m.persistentIdentifier : nil
        targetContentIdentifier = m.hasTargetContentIdentifier ? m.targetContentIdentifier : nil
        webpageURL = try m.hasWebpageURL ? Self.url(m.webpageURL) : nil
        referrerURL = try m.hasReferrerURL ? Self.url(m.referrerURL) : nil
        expirationDate = m.hasExpirationDateMicros ? Date(microseconds: m.expirationDateMicros) : nil
        eligibleForHandoff = m.eligibleForHandoff
        eligibleForSearch = m.eligibleForSearch
        eligibleForPrediction = m.eligibleForPrediction
        eligibleForPublicIndexing = m.eligibleForPublicIndexing
        contentAttributeSet = m.hasContentAttributeSet ? ContentAttributeSet(proto: m.contentAttributeSet) : nil
        appEntityIdentifier = m.hasAppEntityIdentifier ? m.appEntityIdentifier : nil
    }

    private static func url(_ string: String) throws -> URL {
        guard let url = URL(string: string) else { throw PayloadError("stored URL \"\(string)\" does not parse") }
        return url
    }
}
