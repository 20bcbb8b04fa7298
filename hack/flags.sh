#!/usr/bin/env bash
# Regenerates docs/flags.md from the CLI definition (skein/src/config.rs and
# the flag structs it flattens). A unit test of the skein crate fails when
# the committed file differs from what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet -p skein --example flag_reference > docs/flags.md.tmp
mv docs/flags.md.tmp docs/flags.md
echo "wrote docs/flags.md ($(wc -l < docs/flags.md) lines)"
