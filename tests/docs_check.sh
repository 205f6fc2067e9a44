#!/usr/bin/env bash
# The docs speak of the project: no "issue N" (the tracker is not part of it) and no path
# out of the checkout (../shared). Prints every offending line and fails.
set -u
root=$1
bad=$(grep -rnE -i 'issue [0-9]+|issues? #[0-9]+|\.\./shared' "$root/docs" "$root/README.md" || true)
if [ -n "$bad" ]; then
    echo "docs_check: FAIL: the docs name the tracker or a path outside the checkout:"
    echo "$bad"
    exit 1
fi
echo "docs_check: ok"
