#!/usr/bin/env bash
# fuzz.sh FUZZTIME pkg:Target...: runs each fuzz target for FUZZTIME.
#
# A target fails the run when it finds an input that fails (go test writes it
# to pkg/testdata/fuzz/Target/). Go's fuzzing coordinator can also fail a
# target that found nothing, with a bare "context deadline exceeded", when
# -fuzztime ends while a worker is busy (a race in internal/fuzz, common on
# loaded 2-core machines): that is reported and retried, not counted as
# a finding (up to two times).
set -euo pipefail
fuzztime=$1
shift
go=${GO:-go}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # pkg name
	local dir="$1/testdata/fuzz/$2" before after status
	before=$(ls "$dir" 2>/dev/null || true)
	status=0
	"$go" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" 2>&1 | tee "$log" || status=$?
	[ "$status" -eq 0 ] && return 0
	after=$(ls "$dir" 2>/dev/null || true)
	if [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$log"; then
		return 3 # the coordinator's race: nothing was found
	fi
	return 1
}

for t in "$@"; do
	pkg=${t%%:*}
	name=${t##*:}
	echo "== $pkg $name ($fuzztime)"
	status=0
	run "$pkg" "$name" || status=$?
	for retry in 1 2; do
		[ "$status" -eq 3 ] || break
		echo "== $pkg $name: Go's fuzzing coordinator stopped with \"context deadline exceeded\" and no failing input; running it again ($retry of 2)"
		status=0
		run "$pkg" "$name" || status=$?
	done
	if [ "$status" -ne 0 ]; then
		echo "== $pkg $name: FAILED"
		exit 1
	fi
done
