import FluxBusProtocol

/// A plan as the log stores it: `store:dependency,dependency` per step, steps joined by `;`, in plan order. Store
/// names cannot hold `:`, `,` or `;` (BusName), so the text is unambiguous.
enum PlanText {
    static func encode(_ steps: [PlanStep]) -> String {
        steps.map { $0.store + ":" + $0.waitsFor.joined(separator: ",") }.joined(separator: ";")
    }

    /// The steps, or nil when the text is not a plan.
    static func decode(_ text: String) -> [PlanStep]? {
        guard !text.isEmpty else { return [] }
        var steps: [PlanStep] = []
        for part in text.split(separator: ";", omittingEmptySubsequences: false) {
            let fields = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2, BusName.isValid(String(fields[0])) else { return nil }
            let waitsFor = fields[1].isEmpty ? [] : fields[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard waitsFor.allSatisfy(BusName.isValid) else { return nil }
            steps.append(PlanStep(store: String(fields[0]), waitsFor: waitsFor))
        }
        return steps
    }
}
