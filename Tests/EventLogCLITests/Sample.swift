/// Operations for the tests: every line has "at", so two stores fed the same
/// good lines compare equal by their output.
/// (Also compiled into Tools/Tests/EventLogCLIProcessTests, a symbolic link.)
enum Sample {
    static let type = "com.example.app.viewOrder"

    static let good: [String] = [
        #"{"op":"declareActivityTypes","types":["com.example.app.viewOrder"],"at":"2026-11-22T10:00:00Z"}"#,
        #"{"op":"createActivity","activity":"a1","activityType":"com.example.app.viewOrder","device":"phone","title":"Latte","userInfo":{"orderID":42,"placed":{"$date":"2026-11-22T10:00:00Z"}},"eligibleForSearch":true,"persistentIdentifier":"order-42","targetContentIdentifier":"orders/42","keywords":["coffee"],"at":"2026-11-22T10:00:01Z"}"#,
        #"{"op":"updateActivity","activity":"a1","title":"Oat latte","keywords":["oat","coffee"],"at":"2026-11-22T10:00:02Z"}"#,
        #"{"op":"addUserInfoEntries","activity":"a1","entries":{"size":"medium"},"at":"2026-11-22T10:00:03Z"}"#,
        #"{"op":"becomeCurrent","activity":"a1","at":"2026-11-22T10:00:04Z"}"#,
        #"{"op":"createActivity","activity":"a2","activityType":"com.example.app.viewOrder","device":"laptop","title":"Cappuccino","eligibleForSearch":true,"persistentIdentifier":"order-7","at":"2026-11-22T10:00:05Z"}"#,
        #"{"op":"becomeCurrent","activity":"a2","at":"2026-11-22T10:00:06Z"}"#,
        #"{"op":"createActivity","activity":"a3","activityType":"com.example.app.viewOrder","device":"tablet","title":"抹茶ラテ","eligibleForSearch":true,"at":"2026-11-22T10:00:07Z"}"#,
        #"{"op":"becomeCurrent","activity":"a3","at":"2026-11-22T10:00:08Z"}"#,
        #"{"op":"deleteSavedUserActivities","persistentIdentifiers":["order-7"],"at":"2026-11-22T10:00:09Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"menu-latte","domainIdentifier":"menu.drinks","attributeSet":{"title":"Oat latte","keywords":["coffee"],"rating":4.5}},{"uniqueIdentifier":"order-1","domainIdentifier":"orders.2026","attributeSet":{"title":"Order one"}}],"at":"2026-11-22T10:00:10Z"}"#,
        #"{"op":"beginIndexBatch","index":"orders-indexer","at":"2026-11-22T10:00:11Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"order-2","domainIdentifier":"orders.2026","attributeSet":{"title":"Order two","keywords":["coffee"]}}],"at":"2026-11-22T10:00:11Z"}"#,
        #"{"op":"endIndexBatch","index":"orders-indexer","clientState":"NDI=","at":"2026-11-22T10:00:11Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"menu-latte","isUpdate":true,"attributeSet":{"rating":5}},{"uniqueIdentifier":"ghost","isUpdate":true,"attributeSet":{"title":"x"}}],"at":"2026-11-22T10:00:12Z"}"#,
    ]

    /// Where `Sample.good` stands after it: for --now.
    static let now = "2026-11-22T11:00:00Z"
}
