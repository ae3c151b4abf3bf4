import Foundation
import Testing
import TextIndex

/// Every rule of SPEC §5's query language.
@Suite("Query language")
struct QueryLanguageTests {
    static let day = 86_400.0
    let now = TemporaryIndex.now  // 2026-11-22T10:00:00Z

    /// A small store: items and an activity with text fields and attributes.
    func store() throws -> TemporaryIndex {
        let t = try TemporaryIndex()
        let now = self.now
        try t.write { w in
            try w.upsert(.item("latte", title: "Oat Latte", ["keywords": ["coffee", "Oat"], "authorNames": ["Zoë Barista", "Ann"]],
                               attributes: ["domainIdentifier": .string("orders.2024"), "rating": .number(4.5),
                                            "contentCreationDate": .date(now.addingTimeInterval(-2 * Self.day))]))
            try w.upsert(.item("crema", title: "Crème brûlée", ["contentDescription": ["A \"quoted\" dessert with a back\\slash"]],
                               attributes: ["domainIdentifier": .string("desserts"), "rating": .number(3),
                                            "contentCreationDate": .date(now.addingTimeInterval(-10 * Self.day))]))
            try w.upsert(.item("class", title: "MyWindowClass", ["keywords": ["game::strategy"]],
                               attributes: ["domainIdentifier": .string("orders"), "rating": .number(-1)]))
            try w.upsert(.item("bare", title: "latte art"))
            try w.upsert(IndexDocument(kind: "activity", identifier: "act-1", fields: ["title": ["Viewing order 42"]],
                                       attributes: ["activityType": .string("com.example.app.viewOrder")],
                                       expirationDate: now.addingTimeInterval(Self.day)))
            try w.upsert(.item("gone", title: "Oat Latte", expires: now))
        }
        return t
    }

    func ids(_ t: TemporaryIndex, _ q: String) throws -> [String] { t.ids(try t.query(q, now: now)) }

    @Test func equalityIsOnTheWholeValueAndCaseSensitiveWithoutModifiers() throws {
        let t = try store()
        #expect(try ids(t, #"title == "Oat Latte""#) == ["latte"])
        #expect(try ids(t, #"title == "oat latte""#) == [])
        #expect(try ids(t, #"title == "Latte""#) == [])            // whole value, not a word
    }

    @Test func caseAndDiacriticModifiers() throws {
        let t = try store()
        #expect(try ids(t, #"title == "oat latte"c"#) == ["latte"])
        #expect(try ids(t, #"title == "Creme brulee"d"#) == ["crema"])
        #expect(try ids(t, #"title == "creme brulee"d"#) == [])     // d alone keeps case
        #expect(try ids(t, #"title == "CREME BRULEE"cd"#) == ["crema"])
        #expect(try ids(t, #"title == "crème brûlée"c"#) == ["crema"])
        #expect(try ids(t, #"title == "creme brulee"c"#) == [])      // c alone keeps accents
    }

    @Test func notEqualIsTheNegationIncludingAbsentAttributes() throws {
        let t = try store()
        #expect(try ids(t, #"domainIdentifier != "orders""#) == ["act-1", "bare", "crema", "latte"])
        #expect(try ids(t, #"title != "Oat Latte""#) == ["act-1", "bare", "class", "crema"])
    }

    @Test func wildcards() throws {
        let t = try store()
        #expect(try ids(t, #"title == "Oat*""#) == ["latte"])
        #expect(try ids(t, #"title == "*Latte""#) == ["latte"])
        #expect(try ids(t, #"title == "*at*"c"#) == ["bare", "latte"])
        #expect(try ids(t, #"title == "l*e a*t"c"#) == ["bare"])
        #expect(try ids(t, #"domainIdentifier == "orders*""#) == ["class", "latte"])
        #expect(try ids(t, #"title == "*window*"c"#) == ["class"])
    }

    @Test func escapes() throws {
        let t = try store()
        #expect(try ids(t, #"contentDescription == "A \"quoted\" dessert*""#) == ["crema"])
        #expect(try ids(t, #"contentDescription == "*back\\slash""#) == ["crema"])
    }

    @Test func presenceAndAbsence() throws {
        let t = try store()
        #expect(try ids(t, #"rating == "*""#) == ["class", "crema", "latte"])
        #expect(try ids(t, #"rating != "*""#) == ["act-1", "bare"])
        #expect(try ids(t, #"keywords == "*""#) == ["class", "latte"])
        #expect(try ids(t, #"contentDescription != "*""#) == ["act-1", "bare", "class", "latte"])
        #expect(try ids(t, #"expirationDate == "*""#) == ["act-1"])   // "gone" is expired at now
    }

    @Test func wordModifierMatchesEachWordAndCamelCaseParts() throws {
        let t = try store()
        #expect(try ids(t, #"title == "Window"w"#) == ["class"])
        #expect(try ids(t, #"title == "window"w"#) == [])
        #expect(try ids(t, #"title == "window"wc"#) == ["class"])
        #expect(try ids(t, #"title == "latte"wc"#) == ["bare", "latte"])
        #expect(try ids(t, #"title == "Lat*"w"#) == ["latte"])
        #expect(try ids(t, #"title == "brulee"wd"#) == ["crema"])
        #expect(try ids(t, #"keywords == "strategy"w"#) == ["class"])
    }

    @Test func tokenModifierNeedsEveryWord() throws {
        let t = try store()
        #expect(try ids(t, #"title == "latte oat"tc"#) == ["latte"])
        #expect(try ids(t, #"title == "latte"tc"#) == ["bare", "latte"])
        #expect(try ids(t, #"title == "lat* art"tc"#) == ["bare"])
        #expect(try ids(t, #"title == "latte tea"tc"#) == [])
    }

    @Test func multiValuedAttributesMatchWhenOneValueDoes() throws {
        let t = try store()
        #expect(try ids(t, #"keywords == "coffee""#) == ["latte"])
        #expect(try ids(t, #"keywords == "oat"c"#) == ["latte"])
        #expect(try ids(t, #"authorNames == "zoe*"cd"#) == ["latte"])
        #expect(try ids(t, #"authorNames == "Ann""#) == ["latte"])
        #expect(try ids(t, #"keywords != "coffee""#) == ["act-1", "bare", "class", "crema"])
    }

    @Test func numberComparisonsAndInRange() throws {
        let t = try store()
        #expect(try ids(t, "rating > 3") == ["latte"])
        #expect(try ids(t, "rating >= 3") == ["crema", "latte"])
        #expect(try ids(t, "rating < 3") == ["class"])
        #expect(try ids(t, "rating <= -1") == ["class"])
        #expect(try ids(t, "rating == 4.5") == ["latte"])
        #expect(try ids(t, "rating != 4.5") == ["act-1", "bare", "class", "crema"])
        #expect(try ids(t, "InRange(rating, 0, 4)") == ["crema"])
        #expect(try ids(t, "InRange(rating, -1, 4.5)") == ["class", "crema", "latte"])
    }

    @Test func datesRelativeToNow() throws {
        let t = try store()
        #expect(try ids(t, "contentCreationDate > $time.today(-3)") == ["latte"])
        #expect(try ids(t, "contentCreationDate < $time.now") == ["crema", "latte"])
        #expect(try ids(t, "contentCreationDate < $time.now(-259200)") == ["crema"])  // 3 days ago
        #expect(try ids(t, #"contentCreationDate >= $time.iso("2026-11-20T10:00:00Z")"#) == ["latte"])
        #expect(try ids(t, "InRange(contentCreationDate, $time.today(-11), $time.today(-5))") == ["crema"])
        #expect(try ids(t, "expirationDate > $time.now") == ["act-1"])
        #expect(try ids(t, "expirationDate < $time.today(2)") == ["act-1"])
        // $time.today(0) is midnight UTC of now's day.
        let e = try QueryParser.parse("contentCreationDate > $time.today(0)", now: now)
        #expect(e == .compare(attribute: "contentCreationDate", .greater, .date(Date(timeIntervalSince1970: 1_795_305_600))))
    }

    @Test func kindActivityTypeUniqueIdentifierAndDomain() throws {
        let t = try store()
        #expect(try ids(t, #"kind == "activity""#) == ["act-1"])
        #expect(try ids(t, #"kind == "item" && title == "*latte*"c"#) == ["bare", "latte"])
        #expect(try ids(t, #"activityType == "com.example.app.*""#) == ["act-1"])
        #expect(try ids(t, #"uniqueIdentifier == "cre*""#) == ["crema"])
        #expect(try ids(t, #"domainIdentifier == "orders""#) == ["class"])
    }

    @Test func precedenceAndParentheses() throws {
        let t = try store()
        // && binds tighter: a || (b && c)
        #expect(try ids(t, #"kind == "activity" || rating > 4 && rating < 4"#) == ["act-1"])
        #expect(try ids(t, #"(kind == "activity" || rating > 4) && title == "*Latte""#) == ["latte"])
        #expect(try ids(t, #"title == "latte"wc && (keywords == "coffee"c || domainIdentifier == "orders")"#) == ["latte"])
        #expect(try ids(t, #"title == "*latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#) == ["latte"])
        #expect(try ids(t, #"title == "latte*"cd && (keywords == "coffee"c || domainIdentifier == "orders")"#) == [])
    }

    @Test func expiredDocumentsAreLeftOut() throws {
        let t = try store()
        #expect(try ids(t, #"title == "Oat Latte""#) == ["latte"])
        #expect(t.ids(try t.query(#"title == "Oat Latte""#, now: now.addingTimeInterval(-1))) == ["gone", "latte"])
    }

    @Test(arguments: [
        (#"title = "x""#, 7),
        (#"title == "x"#, 10),
        (#"title == "x"z"#, 13),
        (#"title == "a\qb""#, 12),
        (#"(title == "x""#, 14),
        (#"title == "x" && "#, 17),
        (#"title == "x" title"#, 14),
        ("rating > ", 10),
        (#"rating < "3""#, 10),
        (#"nope == "x""#, 1),
        ("InRange(rating, 1)", 18),
        (#"date > $time.iso("yesterday")"#, 1),
        (#"contentCreationDate > $time.iso("yesterday")"#, 33),
        ("rating > $time.week", 10),
        ("", 1),
        ("title == ", 10),
    ])
    func parseErrorsNameTheColumn(_ query: String, _ column: Int) throws {
        let t = try store()
        #expect {
            _ = try t.query(query)
        } throws: { error in
            guard let e = error as? QueryError else { return false }
            return e.column == column
        }
    }

    @Test func parserBuildsTheTree() throws {
        let e = try QueryParser.parse(#"a == "x*y"cd || b != "\"" && InRange(c, 1, 2e1)"#, now: now)
        #expect(e == .or(
            .compare(attribute: "a", .equal, .string(StringPattern(literals: ["x", "y"], modifiers: "cd"))),
            .and(.compare(attribute: "b", .notEqual, .string(StringPattern(literals: ["\""], modifiers: ""))),
                 .inRange(attribute: "c", low: .number(1), high: .number(20)))))
    }
}
