# A cmocka test binary's output -> one "STATUS<TAB>case<TAB>reason" line per
# case (STATUS PASS, FAIL or SKIP), for tests/run-tests.sh and the harness
# case unit_on_nested_kvm (busybox awk). cmocka lists the failed and
# skipped cases again after "[====]": only the lines before that count. A
# skipped case's reason is the last line it printed itself (by convention
# "SKIP: reason").
/^\[==========\] .* run\./ { exit }
/^\[ RUN      \] / { why = ""; next }
/^\[       OK \] / { print "PASS\t" $4 "\t"; next }
/^\[  FAILED  \] / { print "FAIL\t" $4 "\t"; next }
/^\[  SKIPPED \] / { print "SKIP\t" $4 "\t" (why == "" ? "skipped by the test" : why); next }
!/^\[/ && NF { why = $0; sub(/^SKIP: */, "", why) }
