#!/bin/bash
# lint/layers: the tree's includes keep the layer order of
# tests/lint/layers.txt, with no violation beyond tests/lint/layers-baseline.txt
# and none listed there that is gone (tests/lint/layers.py says how).
set -u
cd "$(dirname "$0")/../.."
exec python3 tests/lint/layers.py
