import Flux

// guide:begin own-package-stores
/// The todo list's actions.
public enum Todo {
    public struct Item: Codable, Sendable, Hashable {
        public var id: String
        public var title: String
        public init(id: String, title: String) {
            self.id = id
            self.title = title
        }
    }

    public static let add = ActionType<Item>("todo.add")
    public static let complete = ActionType<String>("todo.complete")   // the item's id
}

/// The open and done items.
public final class TodoStore: Store {
    public struct State: Codable, Sendable, Hashable {
        public var open: [String: String] = [:]   // id: title
        public var done: [String] = []
        public init() {}
    }

    public static let name = "todo"
    public static let handlers = Handlers<TodoStore>()
        .on(Todo.add) { store, action, _ in store.state.open[action.payload.id] = action.payload.title }
        .on(Todo.complete) { store, action, _ in
            guard store.state.open.removeValue(forKey: action.payload) != nil else {
                throw ActionError("no open item `\(action.payload)`")
            }
            store.state.done.append(action.payload)
        }

    public var state = State()
    public init() {}
    public func output() -> State { state }
}

/// Counts, from the todo store's output: it waits for it, so it sees each action after the todo store applied it.
public final class StatsStore: Store {
    public struct State: Codable, Sendable, Hashable {
        public var open = 0
        public var done = 0
        public init() {}
    }

    public static let name = "stats"
    public static let dependencies = [TodoStore.name]
    public static let handlers = Handlers<StatsStore>()
        .on(Todo.add) { store, _, context in try store.count(context) }
        .on(Todo.complete) { store, _, context in try store.count(context) }

    public var state = State()
    public init() {}

    private func count(_ context: DispatchContext) throws {
        guard let todo = try context.output(of: TodoStore.name, as: TodoStore.State.self) else { return }
        state = State()
        state.open = todo.open.count
        state.done = todo.done.count
    }
}
// guide:end own-package-stores
