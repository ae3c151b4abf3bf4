// Search latency of one user space beside many others (Docs/Benchmarks.md,
// "`Benchmarks/`"; earlier runs: Benchmarks/History/2026-11-notebook.md, "User spaces").
//
//   cd Benchmarks && swift build -c release --product SpaceSearchBench
//   .build/release/SpaceSearchBench --corpus ../../shared/corpus/items.jsonl.gz \
//       --queries ../../shared/corpus/queries.txt
//
// Two stores, built untimed in this process:
// - alone: the target user's items only, in the target user's space;
// - shared: the whole corpus spread over `--users` other users (contiguous
//   runs of the corpus, about 245 items each), with the target user's same
//   items indexed halfway through, so that its space id sits among theirs.
// The target user's items are `--target-items` corpus items taken at an even
// stride (item i·N/n), so the corpus queries find hits.
//
// Then every query runs against the target user's space in both stores:
// first once each to check that both return the same hits (identifiers and
// scores: a space's ranking uses its own statistics), then `--warmup` rounds
// untimed, then `--rounds` timed rounds. Within a round each query is timed
// on both stores back to back, the order alternating between rounds, so
// load on the machine falls on both alike. The report gives p50/p99 over
// every sample and over each query's median, and the ratios shared/alone.
import ActivityDomain
import Foundation
import IndexingWorkload
import LMDB

struct Options {
    var corpus = "../../shared/corpus/items.jsonl.gz"
    var queries = "../../shared/corpus/queries.txt"
    var workDir = NSTemporaryDirectory()
    var users = 300
    var targetItems = 1000
    var batchSize = 500
    var warmup = 3
    var rounds = 25
    var durability = Durability.noSync
    var keep = false

    init(_ arguments: [String]) {
        var args = arguments.makeIterator()
        while let arg = args.next() {
            func value() -> String {
                guard let v = args.next() else { fatalError("\(arg) needs a value") }
                return v
            }
            switch arg {
            case "--corpus": corpus = value()
            case "--queries": queries = value()
            case "--work-dir": workDir = value()
            case "--users": users = Int(value())!
            case "--target-items": targetItems = Int(value())!
            case "--batch-size": batchSize = Int(value())!
            case "--warmup": warmup = Int(value())!
            case "--rounds": rounds = Int(value())!
            case "--durability": durability = Durability(rawValue: value())!
            case "--keep": keep = true
            default: fatalError("unknown argument \(arg)")
            }
        }
    }
}

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

extension Duration {
    var microseconds: Double { Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12 }
}

func index(_ items: ArraySlice<SearchableItem>, user: String, batchSize: Int, into store: ActivityStore) throws {
    var start = items.startIndex
    while start < items.endIndex {
        let end = min(items.endIndex, start + batchSize)
        try store.user(user).indexSearchableItems(Array(items[start..<end]))
        start = end
    }
    // Searchable: the index follows the log.
    try store.eventStore.waitForIndex(timeout: .seconds(3_600))
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let target = "target"
let clock = ContinuousClock()

let corpus = try CorpusReader.readAll(path: options.corpus)
let queries = try QueryWorkload.read(path: options.queries)
let n = corpus.count
let targetItems = (0..<options.targetItems).map { corpus[$0 * n / options.targetItems] }
log("corpus \(n) items, \(queries.count) queries, target \(targetItems.count) items, \(options.users) other users")

let root = (options.workDir as NSString).appendingPathComponent("space-search-\(getpid())")
let alonePath = root + "/alone", sharedPath = root + "/shared"
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { if !options.keep { try? FileManager.default.removeItem(atPath: root) } }

// Setup, untimed by the measurement.
let alone = try IndexingRun.makeStore(path: alonePath, durability: options.durability)
var started = clock.now
try index(targetItems[...], user: target, batchSize: options.batchSize, into: alone)
log("alone: indexed \(targetItems.count) in \(clock.now - started)")

let shared = try IndexingRun.makeStore(path: sharedPath, durability: options.durability)
started = clock.now
for u in 0..<options.users {
    if u == options.users / 2 {
        try index(targetItems[...], user: target, batchSize: options.batchSize, into: shared)
    }
    let range = (u * n / options.users)..<((u + 1) * n / options.users)
    try index(corpus[range], user: String(format: "user-%03d", u), batchSize: options.batchSize, into: shared)
}
log("shared: indexed \(n + targetItems.count) in \(clock.now - started)")

let aloneSpace = alone.user(target), sharedSpace = shared.user(target)
let now = Date()

// Same answers in both stores, or the comparison means nothing.
var withHits = 0
for query in queries {
    let a = try aloneSpace.search(query, now: now), s = try sharedSpace.search(query, now: now)
    guard a == s else { fatalError("query \(query): alone \(a.prefix(3)) differs from shared \(s.prefix(3))") }
    if !a.isEmpty { withHits += 1 }
}
log("both stores return identical hits for all \(queries.count) queries; \(withHits) have hits")

for _ in 0..<options.warmup {
    for query in queries {
        _ = try aloneSpace.search(query, now: now)
        _ = try sharedSpace.search(query, now: now)
    }
}

var aloneSamples = [[Double]](repeating: [], count: queries.count)
var sharedSamples = [[Double]](repeating: [], count: queries.count)
let measureStart = clock.now
for round in 0..<options.rounds {
    for (q, query) in queries.enumerated() {
        for step in 0..<2 {
            let useAlone = (step == 0) == (round % 2 == 0)
            let space = useAlone ? aloneSpace : sharedSpace
            let before = clock.now
            let hits = try space.search(query, now: now)
            let elapsed = (clock.now - before).microseconds
            withExtendedLifetime(hits) {}
            if useAlone { aloneSamples[q].append(elapsed) } else { sharedSamples[q].append(elapsed) }
        }
    }
}
log("measured \(options.rounds) rounds in \(clock.now - measureStart)")

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
let aloneAll = LatencySummary(aloneSamples.flatMap { $0 })
let sharedAll = LatencySummary(sharedSamples.flatMap { $0 })
let aloneMedians = aloneSamples.map(median), sharedMedians = sharedSamples.map(median)
let aloneByQuery = LatencySummary(aloneMedians), sharedByQuery = LatencySummary(sharedMedians)
let perQueryRatios = zip(sharedMedians, aloneMedians).map { $0 / $1 }
let ratioSummary = LatencySummary(perQueryRatios)
let aloneBytes = DiskUsage.bytes(under: alonePath), sharedBytes = DiskUsage.bytes(under: sharedPath)

func f(_ x: Double) -> String { String(format: "%.1f", x) }
func r(_ x: Double) -> String { String(format: "%.3f", x) }
print("""
SpaceSearchBench: target user \(targetItems.count) items (corpus item i*\(n)/\(targetItems.count)); \
shared store: corpus \(n) items under \(options.users) other users + target; \
durability \(options.durability.rawValue) (setup), batch \(options.batchSize)
queries \(queries.count) (\(withHits) with hits), top 20, warm-up \(options.warmup) rounds, \
\(options.rounds) timed rounds = \(queries.count * options.rounds) samples per store
all samples (µs):        alone p50 \(f(aloneAll.p50)) p99 \(f(aloneAll.p99)) max \(f(aloneAll.max)) | \
shared p50 \(f(sharedAll.p50)) p99 \(f(sharedAll.p99)) max \(f(sharedAll.max)) | \
ratio p50 \(r(sharedAll.p50 / aloneAll.p50)) p99 \(r(sharedAll.p99 / aloneAll.p99))
per-query medians (µs):  alone p50 \(f(aloneByQuery.p50)) p99 \(f(aloneByQuery.p99)) | \
shared p50 \(f(sharedByQuery.p50)) p99 \(f(sharedByQuery.p99)) | \
ratio p50 \(r(sharedByQuery.p50 / aloneByQuery.p50)) p99 \(r(sharedByQuery.p99 / aloneByQuery.p99))
sum of per-query medians: alone \(f(aloneMedians.reduce(0, +))) µs, shared \(f(sharedMedians.reduce(0, +))) µs, \
ratio \(r(sharedMedians.reduce(0, +) / aloneMedians.reduce(0, +)))
per-query ratio shared/alone (of medians): p50 \(r(ratioSummary.p50)) p99 \(r(ratioSummary.p99)) max \(r(ratioSummary.max))
bytes on disk: alone \(aloneBytes), shared \(sharedBytes)
""")
