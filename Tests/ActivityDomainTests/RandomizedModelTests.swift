import EventLog
import Foundation
import Testing
@testable import ActivityDomain

@Suite("Randomized commands against a reference model")
struct RandomizedModelTests {
    /// The store's views, in the model's shape.
    static func observed(_ store: ActivityStore) throws -> ReferenceModel {
        try store.eventStore.read { txn in
            var model = ReferenceModel()
            model.types = Set(try store.views.registry.declaredTypes(in: txn))
            for record in try store.views.registry.allRecords(space: 0, in: txn) {
                model.activities[record.activity.activity] = (record.activity, record.state)
            }
            for current in try store.views.current.all(space: 0, registry: store.views.registry, in: txn) {
                model.current[current.device] = current.activity.activity
            }
            for saved in try store.views.saved.all(space: 0, in: txn) { model.saved[saved.key] = saved.activity }
            return model
        }
    }

    static func expectEqual(_ store: ActivityStore, _ model: ReferenceModel, step: Int, seed: UInt64,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let seen = try observed(store)
        #expect(seen.types == model.types, "types differ at step \(step) (seed \(seed))", sourceLocation: sourceLocation)
        #expect(seen.current == model.current, "current differs at step \(step) (seed \(seed))", sourceLocation: sourceLocation)
        #expect(seen.saved == model.saved, "saved differs at step \(step) (seed \(seed))", sourceLocation: sourceLocation)
        #expect(seen.activities.keys.sorted() == model.activities.keys.sorted(), "activity ids differ at step \(step) (seed \(seed))",
                sourceLocation: sourceLocation)
        for (id, entry) in model.activities {
            #expect(seen.activities[id]?.activity == entry.activity, "\(id) differs at step \(step) (seed \(seed))", sourceLocation: sourceLocation)
            #expect(seen.activities[id]?.state == entry.state, "\(id)'s state differs at step \(step) (seed \(seed))", sourceLocation: sourceLocation)
        }
    }

    @Test("thousands of random commands: the views equal the model after every step; rejected commands write nothing",
          arguments: [UInt64(1), 2, 3])
    func randomized(seed: UInt64) throws {
        let steps = 3000
        try withStore { store in
            var generator = RandomCommands(seed: seed)
            var model = ReferenceModel()
            var counts: [String: Int] = [:]
            var step = 0
            while step < steps {
                let time = at(Double(step))
                let head = try store.head()
                if generator.chance(0.1) {
                    // A batch: all of its commands or none.
                    let commands = (0..<Int.random(in: 2...4, using: &generator.rng)).map { _ in generator.command(step: step) }
                    var batchModel = model
                    var expectedFailure: (index: Int, code: ActivityError.Code)?
                    for (index, command) in commands.enumerated() {
                        if case .rejected(let code) = batchModel.apply(command, at: time) {
                            expectedFailure = (index, code)
                            break
                        }
                    }
                    do {
                        try store.write(commands, at: time)
                        #expect(expectedFailure == nil, "batch at step \(step) should fail with \(String(describing: expectedFailure)) (seed \(seed))")
                        model = batchModel
                        counts["batch ok", default: 0] += 1
                    } catch let error as ActivityError {
                        #expect(error.code == expectedFailure?.code, "step \(step): \(error) (seed \(seed))")
                        #expect(error.commandIndex == expectedFailure?.index, "step \(step) (seed \(seed))")
                        #expect(try store.head() == head, "a rejected batch wrote (step \(step), seed \(seed))")
                        counts["batch rejected", default: 0] += 1
                    }
                } else {
                    let command = generator.command(step: step)
                    let expected = model.apply(command, at: time)
                    do {
                        let result = try store.write([command], at: time)[0]
                        let newHead = try store.head()
                        switch expected {
                        case .changed:
                            #expect(result.changed && newHead > head, "step \(step): \(command.operation) (seed \(seed))")
                        case .unchanged:
                            #expect(!result.changed && newHead == head, "step \(step): \(command.operation) (seed \(seed))")
                        case .rejected(let code):
                            Issue.record("step \(step): \(command.operation) should be rejected with \(code) (seed \(seed))")
                        }
                        counts["\(command.operation) \(result.changed ? "changed" : "unchanged")", default: 0] += 1
                    } catch let error as ActivityError {
                        #expect(expected == .rejected(error.code), "step \(step): \(command.operation) threw \(error), model: \(expected) (seed \(seed))")
                        #expect(try store.head() == head, "a rejected command wrote (step \(step), seed \(seed))")
                        counts["\(command.operation) rejected \(error.code)", default: 0] += 1
                    }
                }
                try Self.expectEqual(store, model, step: step, seed: seed)
                step += 1
            }
            // The workload must have exercised the interesting paths.
            #expect(counts["becomeCurrent changed", default: 0] > 200)
            #expect(counts.keys.contains { $0.hasSuffix("rejected missingRequiredUserInfoKeys") })
            #expect(counts.keys.contains { $0.hasPrefix("becomeCurrent rejected activityInvalidated") })
            #expect(counts.keys.contains { $0.hasPrefix("createActivity rejected activityAlreadyExists") })
            #expect(counts["batch ok", default: 0] > 0 && counts["batch rejected", default: 0] > 0)
            #expect(!model.saved.isEmpty || counts["deleteAllSavedUserActivities changed", default: 0] > 0)
        }
    }
}
