#!/bin/sh
# foreign_ref.sh PROBE — two jobs, one after the other (each a one-rank job of its own): the first
# saves a ref and an actor handle to files, the second must refuse both (foreign_ref_main.cpp).
probe="$1"
dir="$(mktemp -d "${TMPDIR:-/tmp}/weft-foreign-ref-XXXXXX")" || exit 1
trap 'rm -rf "$dir"' EXIT
"$probe" --write "$dir/saved" || exit 1
"$probe" --read "$dir/saved"
