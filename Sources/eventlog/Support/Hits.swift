import ActivityDomain
import TextIndex

/// `search` and `query` print the same shape: `[{"kind","identifier","score"}]`,
/// in the order the index returned them (by score then identifier for a
/// search, by identifier for a query).
func printHits(_ hits: [SearchHit], json: Bool) throws {
    if json {
        Output.jsonArray(try hits.map(ViewJSON.value))
    } else {
        Output.table(["KIND", "IDENTIFIER", "SCORE"], hits.map { [$0.kind, $0.identifier, String(format: "%.4f", $0.score)] })
    }
}
