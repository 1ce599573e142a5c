# shellcheck shell=bash
# Sourced by the callgrind scripts of the engine micro benchmark (engine_instructions.sh,
# review_footprint.sh). admit_calls PROFILE prints how many times the benchmark's admit() called
# Admission::admit in a callgrind profile collected inside Admission::admit alone (its line in
# the caller tree gives the calls), or nothing when the profile has none. awk reads to the end:
# `grep -m1` would leave callgrind_annotate writing to a closed pipe, which pipefail reports as
# a failure.
admit_calls() {
    callgrind_annotate --tree=caller --threshold=100 "$1" |
        awk '/< .*\(anonymous namespace\)::admit\(benchmark::State/ && !found {
                 found = 1; sub(/^.*\(/, ""); sub(/x\).*$/, ""); gsub(",", ""); print }'
}
