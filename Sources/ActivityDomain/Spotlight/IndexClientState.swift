import Foundation

/// The client state the last committed batch of a named index stored.
///
/// ```swift
/// for state in try store.clientStates() { print(state.index, state.clientState.base64EncodedString()) }
/// ```
public struct IndexClientState: Sendable, Hashable {
    /// The index's name, as given to `beginIndexBatch`.
    public var index: String
    /// At most 250 bytes.
    public var clientState: Data

    public init(index: String, clientState: Data) {
        self.index = index
        self.clientState = clientState
    }
}
