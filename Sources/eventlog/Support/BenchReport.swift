import Foundation
import IndexingWorkload

/// What `eventlog bench` found: the settings in the order run, the
/// recommendation, and how to read them (`--json` prints this object).
struct BenchReport: Codable {
    var settings: [IndexingResult]
    /// For the first durability and writer count given.
    var recommendation: BatchSizeRecommendation?
    /// One per durability and writer count.
    var recommendations: [BatchSizeRecommendation]
    /// The corpus file, or "generated".
    var source: String
    var maxCommits: Int

    init(settings: [IndexingResult], source: String, maxCommits: Int) {
        self.settings = settings
        recommendation = BatchSizeRecommendation(settings)
        recommendations = BatchSizeRecommendation.each(settings)
        self.source = source
        self.maxCommits = maxCommits
    }

    func printJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Output.line(String(decoding: try encoder.encode(self), as: UTF8.self))
    }

    static let csvHeader = [
        "batch_size", "durability", "writers", "pipeline", "items", "capped", "seconds", "items_per_second", "mb_per_second",
        "commits", "commit_p50_ms", "commit_p99_ms", "commit_max_ms", "lag_p50_ms", "lag_p99_ms", "lag_max_ms", "peak_rss_bytes", "peak_anon_bytes", "indexing_peak_anon_bytes", "bytes_on_disk",
        "replay_seconds", "replay_items_per_second", "replay_cpu_seconds", "replay_cores", "replay_verified", "queries", "query_p50_us", "query_p99_us", "users",
    ]

    func printCSV() {
        Output.line(Self.csvHeader.joined(separator: ","))
        for r in settings {
            let cells: [String] = [
                "\(r.setting.batchSize)", r.setting.durability.rawValue, "\(r.setting.writers)", "\(r.setting.pipeline)", "\(r.items)", "\(r.capped)",
                fixed(r.seconds, 4), fixed(r.itemsPerSecond, 1), fixed(r.megabytesPerSecond, 3),
                "\(r.commits)", fixed(r.commitLatency.p50, 3), fixed(r.commitLatency.p99, 3), fixed(r.commitLatency.max, 3),
                fixed(r.searchableLag.p50, 3), fixed(r.searchableLag.p99, 3), fixed(r.searchableLag.max, 3),
                "\(r.peakResidentBytes)", "\(r.peakAnonymousBytes)", "\(r.indexingPeakAnonymousBytes)", "\(r.bytesOnDisk)", fixed(r.replaySeconds, 4), fixed(r.replayItemsPerSecond, 1),
                fixed(r.replayCPUSeconds, 4), fixed(r.replayCores, 2), "\(r.replayVerified)", r.queries.map { "\($0.count)" } ?? "",
                r.queries.map { fixed($0.p50Microseconds, 1) } ?? "", r.queries.map { fixed($0.p99Microseconds, 1) } ?? "",
                r.setting.users.map { "\($0)" } ?? "",
            ]
            Output.line(cells.joined(separator: ","))
        }
    }

    /// The table, a bar of items/s per row, notes, the recommendation.
    func printTable() {
        let best = settings.map(\.itemsPerSecond).max() ?? 1
        let hasQueries = settings.contains { $0.queries != nil }
        var header = ["batch", "durability", "writers", "items", "items/s", "MB/s", "commit ms p50/p99/max", "lag ms p50/p99/max",
                      "peak RSS/own/indexing", "on disk", "replay items/s (cores)"]
        if hasQueries { header.append("query µs p50/p99") }
        header.append("")
        let rows = settings.map { r -> [String] in
            var row = [
                "\(r.setting.batchSize)", r.setting.durability.rawValue, "\(r.setting.writers)",
                grouped(r.items) + (r.capped ? "*" : ""), grouped(Int(r.itemsPerSecond.rounded())),
                fixed(r.megabytesPerSecond, 2),
                "\(fixed(r.commitLatency.p50, 2))/\(fixed(r.commitLatency.p99, 2))/\(fixed(r.commitLatency.max, 2))",
                "\(fixed(r.searchableLag.p50, 1))/\(fixed(r.searchableLag.p99, 1))/\(fixed(r.searchableLag.max, 1))",
                megabytes(r.peakResidentBytes) + "/" + megabytes(r.peakAnonymousBytes) + "/"
                    + megabytes(r.indexingPeakAnonymousBytes), megabytes(r.bytesOnDisk),
                grouped(Int(r.replayItemsPerSecond.rounded())) + " (\(fixed(r.replayCores, 2)))" + (r.replayVerified ? "" : " (differs!)"),
            ]
            if hasQueries {
                row.append(r.queries.map { "\(fixed($0.p50Microseconds, 0))/\(fixed($0.p99Microseconds, 0))" } ?? "")
            }
            row.append(bar(r.itemsPerSecond / best))
            return row
        }
        Output.table(header, rows)
        if settings.contains(where: \.capped) {
            Output.line("* capped at --max-commits \(grouped(maxCommits)) commits per setting (batch size × commits items);"
                + " raise --max-commits to index more")
        }
        Output.line("peak RSS: VmHWM, the store's memory-mapped pages included; own: the process's anonymous memory"
            + " (RssAnon), over the whole setting and up to the end of indexing (before the replay)")
        if let depth = settings.first?.setting.pipeline {
            Output.line(depth > 0
                ? "pipeline: each writer hands over up to \(depth) batches before the first is durable (tokenizing the next while one commits);"
                    + " commit latency is from hand-over to durable"
                : "pipeline: off (each batch waits for its commit before the next is handed over)")
        }
        Output.line("replay: a full rebuild of the views and the index from the log, compared with the live ones;"
            + " cores: its CPU time (every thread) over its wall time")
        Output.line("items/s: searchable, from the first write until the index covered the last; lag: from a write's"
            + " acknowledgment (durable in the log) until the index covered it")
        if let users = settings.first?.setting.users {
            Output.line("users: \(grouped(users)); item i belongs to u{i mod \(users)}, one operation an item, a batch's operations one transaction;"
                + " query k runs as u{k mod \(users)}")
        }
        if let queries = settings.compactMap(\.queries).first {
            Output.line("queries: \(queries.count), \(queries.withHits) with hits; each timed once after one warm-up pass")
        }
        for line in groupCommitLines() { Output.line(line) }
        for advice in recommendations {
            Output.line("recommended (\(advice.durability), \(advice.writers) writer\(advice.writers == 1 ? "" : "s")): "
                + "batch \(advice.batchSize): \(grouped(Int(advice.itemsPerSecond.rounded()))) items/s, "
                + "within 10% of the best \(grouped(Int(advice.bestItemsPerSecond.rounded()))) items/s; "
                + "commit p50 \(fixed(advice.commitP50, 2)) ms, p99 \(fixed(advice.commitP99, 2)) ms")
        }
    }

    /// What group commit gave: each batch size and durability measured with
    /// more than one writer, against its one-writer run.
    func groupCommitLines() -> [String] {
        var lines: [String] = []
        for r in settings where r.setting.writers > 1 {
            guard let single = settings.first(where: {
                $0.setting.writers == 1 && $0.setting.batchSize == r.setting.batchSize && $0.setting.durability == r.setting.durability
            }) else { continue }
            lines.append("group commit: batch \(r.setting.batchSize) \(r.setting.durability.rawValue), \(r.setting.writers) writers: "
                + "\(fixed(r.itemsPerSecond / single.itemsPerSecond, 2))× the items/s of 1 writer, "
                + "\(fixed(Double(r.commits) / Double(max(1, r.transactions)), 1)) writes a transaction")
        }
        for r in settings {
            guard let raw = r.rawLMDB else { continue }
            lines.append("raw LMDB alongside: batch \(r.setting.batchSize) \(r.setting.durability.rawValue): "
                + "\(grouped(Int(raw.commitsPerSecond.rounded()))) commits/s, one after each of the engine's; "
                + "the engine's commits (hand-over to durable) at \(fixed(raw.engineRatio, 2))× that rate")
        }
        return lines
    }

    private func bar(_ fraction: Double) -> String {
        let eighths = Int((max(0, min(1, fraction)) * 30 * 8).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8]
        return String(repeating: "█", count: eighths / 8) + partial
    }
}

private func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

private func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

/// 12345 → "12,345".
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return (value < 0 ? "-" : "") + out
}
