# Prints what each failed test of a `go test -v` log said, and nothing of the
# tests that passed: a failed step of tools/dev/test.sh shows these lines
# (a failure's own message is often far from the log's end, where other
# packages' output lands).
#
#   awk -v max=60 -f tools/dev/failed-go-tests.awk build/logs/go-test.log
#
# A test's lines are what its _test.go files logged (t.Log, t.Error: the
# "    x_test.go:12: " lines, with at most 3 continuation lines each; not
# the logs of components it forwards through a helper in another file)
# after its "=== RUN/CONT/NAME" marker until the next marker; go test prints one package's output at a time and ends it
# with its "ok"/"FAIL" line, so names are only matched within a package.
# At most `max` lines per test are kept (its last ones).

function flush(   name, i, first) {
  for (name in failed) {
    first = n[name] > max ? n[name] - max + 1 : 1
    printf "--- %s, %s%s:\n", name, pkg, (first > 1 ? sprintf(" (its last %d lines)", max) : "")
    for (i = first; i <= n[name]; i++) print line[name, i % max]
  }
  delete failed
  delete n
  delete line
  current = ""
}

BEGIN { if (max == "") max = 60 }

/^=== (RUN|CONT|NAME|PAUSE) / { current = $3; keep = 0; next }

/^[[:space:]]*--- FAIL: / { failed[$3] = 1 }

/^(ok|FAIL)[[:space:]]+[^[:space:]]+[[:space:]]/ || /^FAIL[[:space:]]+[^[:space:]]+$/ {
  pkg = $2
  flush()
  next
}

# A new record: from a _test.go file or not.
/^[[:space:]]+[^[:space:]]+\.go:[0-9]+: / {
  keep = ($1 ~ /_test\.go:[0-9]+:$/)
  more = 0
  if (keep) add($0)
  next
}

keep && /^[[:space:]]/ && more++ < 3 { add($0) }

function add(text) {
  if (current == "") return
  n[current]++
  line[current, n[current] % max] = text
}
