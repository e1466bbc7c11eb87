#!/usr/bin/env bash
# The API reference: DocC archives for the public modules, from the symbol graphs of the current debug build (run
# `swift build` first), with each module's landing page in Sources/MODULE/Documentation.docc. Fails on any DocC
# warning: a ``link`` that resolves to nothing, or a parameter missing from a `- Parameters:` list.
# Output: .build-docs/MODULE.doccarchive (`docc preview` or any static host serves it).
set -euo pipefail
cd "$(dirname "$0")/.."
docc=${DOCC:-$(command -v docc || echo /opt/swift/usr/bin/docc)}
out=.build-docs
mkdir -p "$out"
# dump-symbol-graph writes next to the debug build. It fails on test modules that `swift build` without
# --build-tests did not build, after writing the library modules' graphs, so its status is not the verdict: the
# graphs this script needs are, written afresh.
graphs="$(dirname "$(swift build --show-bin-path)")/symbolgraph"
rm -rf "$graphs"
swift package dump-symbol-graph > "$out/dump.log" 2>&1 || true
for module in Flux FluxStores FluxBusProtocol FluxBusClient FluxBus; do
    rm -rf "${out:?}/graphs/$module" "$out/$module.doccarchive"
    mkdir -p "$out/graphs/$module"
    [ -f "$graphs/$module.symbols.json" ] || { cat "$out/dump.log"; echo "no symbol graph for $module" >&2; exit 1; }
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
