#!/usr/bin/env bash
# The API reference: DocC archives for the public modules, from the symbol graphs of the current debug build (run
# `swift build` first), with each module's landing page in Sources/MODULE/Documentation.docc. Fails on any DocC
# warning: a ``link`` that resolves to nothing, or a parameter missing from a `- Parameters:` list.
# Output: .build-docs/MODULE.doccarchive (`docc preview` or any static host serves it).
set -euo pipefail
cd "$(dirname "$0")/.."
docc=${DOCC:-$(command -v docc || echo /opt/swift/usr/bin/docc)}
out=.build-docs
graphs=$(swift package dump-symbol-graph 2>&1 | sed -n 's/^Files written to //p')
[ -d "$graphs" ] || { echo "swift package dump-symbol-graph wrote no symbol graphs" >&2; exit 1; }
for module in Flux FluxStores FluxBusProtocol FluxBusClient FluxBus; do
    rm -rf "${out:?}/graphs/$module" "$out/$module.doccarchive"
    mkdir -p "$out/graphs/$module"
    cp "$graphs/$module.symbols.json" "$out/graphs/$module/"
    # MODULE@OTHER.symbols.json: what MODULE adds to OTHER's types.
    for extension in "$graphs/$module"@*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$out/graphs/$module/"
    done
    "$docc" convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$out/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "fluxbus.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors --diagnostics-file "$out/$module.diagnostics.json" \
        > "$out/$module.log" 2>&1 || { cat "$out/$module.log"; echo "DocC: $module has warnings (above)" >&2; exit 1; }
    echo "ok: $module's API reference in $out/$module.doccarchive"
done
