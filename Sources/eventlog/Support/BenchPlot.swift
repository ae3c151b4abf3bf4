import EventLog
import Foundation
import IndexingWorkload
import LMDB

/// `eventlog bench --plot FILE.svg`: the sweep as a chart, since people
/// would rather look at a sweep than read it. Two panels over batch size
/// (log scale): items/s, and commit latency p50 (solid) and p99 (dashed),
/// one series per durability and writer count. Plain SVG 1.1, no script;
/// every point is a `<circle>` with `data-*` attributes giving its setting
/// and value, so a test (or a reader's tool) can check it.
///
/// ```swift
/// try BenchPlot(results).svg.write(toFile: "bench.svg", atomically: true, encoding: .utf8)
/// ```
struct BenchPlot {
    let results: [IndexingResult]

    init(_ results: [IndexingResult]) { self.results = results }

    static let panelWidth = 420.0, panelHeight = 300.0
    static let left = 70.0, top = 50.0, gap = 90.0
    static let width = left + 2 * panelWidth + gap + 40
    static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]

    /// The series: one per (durability, writers), in the order the sweep ran them.
    var series: [(label: String, points: [IndexingResult])] {
        var order: [String] = []
        var groups: [String: [IndexingResult]] = [:]
        for result in results {
            let label = result.setting.durability.rawValue + (result.setting.writers > 1 ? " ×\(result.setting.writers) writers" : "")
            if groups[label] == nil { order.append(label) }
            groups[label, default: []].append(result)
        }
        return order.map { ($0, groups[$0]!.sorted { $0.setting.batchSize < $1.setting.batchSize }) }
    }

    var svg: String {
        let batches = results.map { Double($0.setting.batchSize) }
        let rates = results.map(\.itemsPerSecond)
        let latencies = results.flatMap { [$0.commitLatency.p50, $0.commitLatency.p99] }.filter { $0 > 0 }
        let x = LogScale(values: batches, length: Self.panelWidth)
        let rate = LinearScale(maximum: (rates.max() ?? 1) * 1.1, length: Self.panelHeight)
        let latency = LogScale(values: latencies.isEmpty ? [1] : latencies, length: Self.panelHeight)
        let height = Self.top + Self.panelHeight + 70 + Double(series.count) * 18
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(Int(Self.width))" height="\(Int(height))" \
            font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>

            """
        let panels: [(title: String, originX: Double)] = [
            ("Items per second", Self.left), ("Commit latency, ms (p50 solid, p99 dashed)", Self.left + Self.panelWidth + Self.gap),
        ]
        for (title, originX) in panels {
            out += "<text x=\"\(f(originX))\" y=\"\(f(Self.top - 20))\" font-size=\"14\">\(escape(title))</text>\n"
            out += "<rect x=\"\(f(originX))\" y=\"\(f(Self.top))\" width=\"\(f(Self.panelWidth))\" height=\"\(f(Self.panelHeight))\" fill=\"none\" stroke=\"#888\"/>\n"
            for b in Set(batches).sorted() {
                let px = originX + x.position(b)
                out += "<text x=\"\(f(px))\" y=\"\(f(Self.top + Self.panelHeight + 16))\" text-anchor=\"middle\">\(Int(b))</text>\n"
            }
            out += "<text x=\"\(f(originX + Self.panelWidth / 2))\" y=\"\(f(Self.top + Self.panelHeight + 34))\" text-anchor=\"middle\">batch size (items per commit)</text>\n"
        }
        for tick in rate.ticks {
            let py = Self.top + Self.panelHeight - rate.position(tick)
            out += "<text x=\"\(f(Self.left - 6))\" y=\"\(f(py + 4))\" text-anchor=\"end\">\(grouped(Int(tick)))</text>\n"
        }
        let right = Self.left + Self.panelWidth + Self.gap
        for tick in latency.ticks {
            let py = Self.top + Self.panelHeight - latency.position(tick)
            out += "<text x=\"\(f(right - 6))\" y=\"\(f(py + 4))\" text-anchor=\"end\">\(tick < 1 ? String(format: "%.2g", tick) : grouped(Int(tick)))</text>\n"
        }
        for (index, (label, points)) in series.enumerated() {
            let color = Self.colors[index % Self.colors.count]
            func polyline(_ coordinates: [(Double, Double)], dashed: Bool) -> String {
                "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dashed ? " stroke-dasharray=\"5,4\"" : "") points=\""
                    + coordinates.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ") + "\"/>\n"
            }
            let ratePoints = points.map { (Self.left + x.position(Double($0.setting.batchSize)),
                                           Self.top + Self.panelHeight - rate.position($0.itemsPerSecond)) }
            out += polyline(ratePoints, dashed: false)
            for (result, point) in zip(points, ratePoints) {
                out += circle(point, color: color, kind: "itemsPerSecond", result, value: result.itemsPerSecond)
            }
            for (percentile, dashed) in [("p50", false), ("p99", true)] {
                let values = points.map { percentile == "p50" ? $0.commitLatency.p50 : $0.commitLatency.p99 }
                let coordinates = values.indices.map { i in
                    (right + x.position(Double(points[i].setting.batchSize)),
                     Self.top + Self.panelHeight - latency.position(max(values[i], latency.minimum)))
                }
                out += polyline(coordinates, dashed: dashed)
                for (i, point) in coordinates.enumerated() {
                    out += circle(point, color: color, kind: "commit" + percentile, points[i], value: values[i])
                }
            }
            let legendY = Self.top + Self.panelHeight + 64 + Double(index) * 18
            out += "<rect x=\"\(f(Self.left))\" y=\"\(f(legendY - 10))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>\n"
            out += "<text x=\"\(f(Self.left + 18))\" y=\"\(f(legendY))\">\(escape(label))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    private func circle(_ point: (Double, Double), color: String, kind: String, _ result: IndexingResult, value: Double) -> String {
        "<circle class=\"\(kind)\" cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"3.5\" fill=\"\(color)\" "
            + "data-batch-size=\"\(result.setting.batchSize)\" data-durability=\"\(result.setting.durability.rawValue)\" "
            + "data-writers=\"\(result.setting.writers)\" data-value=\"\(value)\"><title>"
            + escape("batch \(result.setting.batchSize), \(result.setting.durability.rawValue), \(result.setting.writers) writer(s): \(value)")
            + "</title></circle>\n"
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A log₁₀ axis over the values' range, padded by a quarter decade.
private struct LogScale {
    let low: Double, high: Double, length: Double
    var minimum: Double { pow(10, low) }

    init(values: [Double], length: Double) {
        let positive = values.filter { $0 > 0 }
        let lo = log10(positive.min() ?? 1), hi = log10(positive.max() ?? 10)
        low = lo - 0.25
        high = max(hi + 0.25, low + 0.5)
        self.length = length
    }

    func position(_ value: Double) -> Double { (log10(max(value, 1e-12)) - low) / (high - low) * length }

    var ticks: [Double] {
        let first = Int(low.rounded(.up)), last = Int(high.rounded(.down))
        return first <= last ? (first...last).map { pow(10, Double($0)) } : []
    }
}

/// A linear axis from 0, with about five round ticks.
private struct LinearScale {
    let maximum: Double, length: Double

    func position(_ value: Double) -> Double { value / max(maximum, 1e-12) * length }

    var ticks: [Double] {
        let raw = maximum / 5
        let magnitude = pow(10, (log10(max(raw, 1e-12))).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        return stride(from: 0, through: maximum, by: step).map { $0 }
    }
}
