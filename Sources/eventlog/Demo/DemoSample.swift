/// The demo's sample: the seeds' coffee-shop example as JSON Lines (SPEC §6).
/// Three users on several devices order and browse; some activities are
/// saved for search, one is handed off, one order is deleted for privacy.
/// Every line carries "at", so that the demo's output is the same each run.
/// Titles in Spanish, Japanese, Chinese and Hindi exercise the multilingual
/// side. The shop's indexer adds the menu and orders as Core Spotlight items.
enum DemoSample {
    static let lines: [String] = [
        #"{"op":"declareActivityTypes","types":["com.example.coffee.viewOrder","com.example.coffee.browseMenu","com.example.coffee.reorder"],"at":"2026-11-22T08:00:00Z"}"#,
        // alice: orders on her phone, browses on her laptop.
        #"{"op":"createActivity","activity":"alice-order-42","activityType":"com.example.coffee.viewOrder","device":"alice-iPhone","user":"alice","title":"Oat latte","userInfo":{"orderID":42,"size":"medium","placed":{"$date":"2026-11-22T08:01:00Z"}},"keywords":["coffee","latte","oat"],"persistentIdentifier":"order-42","targetContentIdentifier":"orders/42","webpageURL":"https://coffee.example.com/orders/42","eligibleForSearch":true,"eligibleForPrediction":true,"requiredUserInfoKeys":["orderID","size"],"at":"2026-11-22T08:01:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"alice-order-42","at":"2026-11-22T08:01:05Z","user":"alice"}"#,
        #"{"op":"addUserInfoEntries","activity":"alice-order-42","entries":{"size":"large","extraShot":true},"at":"2026-11-22T08:02:00Z","user":"alice"}"#,
        #"{"op":"createActivity","activity":"alice-menu","activityType":"com.example.coffee.browseMenu","device":"alice-MacBook","user":"alice","title":"Seasonal menu","keywords":["menu","seasonal"],"eligibleForSearch":true,"at":"2026-11-22T08:05:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"alice-menu","at":"2026-11-22T08:05:01Z","user":"alice"}"#,
        // bob: a cappuccino on the iPad, then a reorder supersedes it there.
        #"{"op":"createActivity","activity":"bob-order-7","activityType":"com.example.coffee.viewOrder","device":"bob-iPad","user":"bob","title":"Cappuccino","userInfo":{"orderID":7,"pickup":{"$url":"https://coffee.example.com/stores/3"}},"keywords":["coffee","cappuccino"],"persistentIdentifier":"order-7","eligibleForSearch":true,"at":"2026-11-22T08:10:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"bob-order-7","at":"2026-11-22T08:10:01Z","user":"bob"}"#,
        #"{"op":"createActivity","activity":"bob-reorder-7","activityType":"com.example.coffee.reorder","device":"bob-iPad","user":"bob","title":"Reorder: cappuccino","userInfo":{"orderID":7},"persistentIdentifier":"reorder-7","eligibleForPrediction":true,"at":"2026-11-22T08:20:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"bob-reorder-7","at":"2026-11-22T08:20:01Z","user":"bob"}"#,
        #"{"op":"createActivity","activity":"bob-menu","activityType":"com.example.coffee.browseMenu","device":"bob-iPhone","user":"bob","title":"Café con leche y churros","keywords":["café","desayuno"],"eligibleForSearch":true,"at":"2026-11-22T08:25:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"bob-menu","at":"2026-11-22T08:25:01Z","user":"bob"}"#,
        #"{"op":"resignCurrent","activity":"bob-menu","at":"2026-11-22T08:26:00Z","user":"bob"}"#,
        // hanako (花子): Japanese and Chinese titles, an order then a privacy deletion.
        #"{"op":"createActivity","activity":"hanako-order-9","activityType":"com.example.coffee.viewOrder","device":"hanako-iPhone","user":"hanako","title":"抹茶ラテ","userInfo":{"orderID":9,"注文":"抹茶ラテ"},"keywords":["抹茶","ラテ"],"persistentIdentifier":"order-9","eligibleForSearch":true,"at":"2026-11-22T09:00:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"hanako-order-9","at":"2026-11-22T09:00:01Z","user":"hanako"}"#,
        #"{"op":"updateActivity","activity":"hanako-order-9","title":"抹茶ラテ (拿铁咖啡)","keywords":["抹茶","ラテ","拿铁"],"at":"2026-11-22T09:01:00Z","user":"hanako"}"#,
        #"{"op":"createActivity","activity":"hanako-chai","activityType":"com.example.coffee.browseMenu","device":"hanako-iPad","user":"hanako","title":"मसाला चाय","keywords":["चाय"],"eligibleForSearch":true,"expirationDate":"2026-11-23T00:00:00Z","at":"2026-11-22T09:05:00Z"}"#,
        #"{"op":"becomeCurrent","activity":"hanako-chai","at":"2026-11-22T09:05:01Z","user":"hanako"}"#,
        #"{"op":"deleteSavedUserActivities","persistentIdentifiers":["order-9"],"at":"2026-11-22T09:30:00Z","user":"hanako"}"#,
        #"{"op":"invalidate","activity":"hanako-order-9","at":"2026-11-22T09:30:01Z","user":"hanako"}"#,
        // The shop's indexer: menu and orders as Core Spotlight items, in a batch with its client state.
        #"{"op":"beginIndexBatch","index":"menu-indexer","at":"2026-11-22T09:35:00Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"menu-latte","domainIdentifier":"menu.drinks","attributeSet":{"title":"Oat latte","contentDescription":"Espresso with steamed oat milk","keywords":["coffee","latte","oat"],"rating":4.5}},{"uniqueIdentifier":"menu-cappuccino","domainIdentifier":"menu.drinks","attributeSet":{"title":"Cappuccino","keywords":["coffee"],"rating":4.0}},{"uniqueIdentifier":"menu-matcha","domainIdentifier":"menu.drinks","attributeSet":{"title":"抹茶ラテ","displayName":"Matcha latte","contentDescription":"宇治抹茶と牛乳","keywords":["抹茶","tea"]}},{"uniqueIdentifier":"menu-churros","domainIdentifier":"menu.food","attributeSet":{"title":"Churros con chocolate","contentDescription":"Desayuno tradicional español","keywords":["desayuno"]}},{"uniqueIdentifier":"menu-chai","domainIdentifier":"menu.drinks","attributeSet":{"title":"मसाला चाय","displayName":"Masala chai","keywords":["चाय","tea"]}},{"uniqueIdentifier":"menu-mocha","domainIdentifier":"menu.drinks","attributeSet":{"title":"拿铁咖啡","displayName":"Café mocha","keywords":["咖啡","coffee"]}}],"at":"2026-11-22T09:35:01Z"}"#,
        #"{"op":"endIndexBatch","index":"menu-indexer","clientState":"bWVudS12MQ==","at":"2026-11-22T09:35:02Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"order-item-42","domainIdentifier":"orders.2026","attributeSet":{"title":"Order 42: oat latte","authorNames":["alice"],"contentCreationDate":"2026-11-22T08:01:00Z"},"expirationDate":"2027-11-22T00:00:00Z"},{"uniqueIdentifier":"order-item-7","domainIdentifier":"orders.2026","attributeSet":{"title":"Order 7: cappuccino","authorNames":["bob"]}},{"uniqueIdentifier":"orders2026-note","domainIdentifier":"orders2026","attributeSet":{"title":"Not in the orders domain"}}],"at":"2026-11-22T09:40:00Z"}"#,
        // An update merges (rating replaced, keywords kept); one for a missing item is dropped.
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"menu-latte","isUpdate":true,"attributeSet":{"rating":5}},{"uniqueIdentifier":"menu-flatwhite","isUpdate":true,"attributeSet":{"title":"Flat white"}}],"at":"2026-11-22T09:45:00Z"}"#,
        #"{"op":"deleteSearchableItems","identifiers":["order-item-7"],"at":"2026-11-22T09:50:00Z"}"#,
    ]

    /// When the demo judges Handoff and expiry: after the sample, before
    /// hanako's chai expires.
    static let now = "2026-11-22T10:00:00Z"
}
