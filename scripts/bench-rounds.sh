# Sourced by scripts/services-bench.sh and scripts/services-bench-binding.sh: their alternation
# and their table of medians. The sourcing script defines run KIND SHAPE, which prints one line of
# space-separated figures.

# rounds_alternate WORK ROUNDS "SHAPES" "KINDS": for each shape, ROUNDS rounds, each running every
# kind in turn; prints each result and keeps it in WORK/SHAPE-KIND.
rounds_alternate() {
  local work=$1 rounds=$2 shapes=$3 kinds=$4 shape kind r result
  for shape in $shapes; do
    for kind in $kinds; do : > "$work/$shape-$kind"; done
    for r in $(seq "$rounds"); do
      for kind in $kinds; do
        result=$(run "$kind" "$shape")
        echo "$shape round $r $kind: $result"
        echo "$result" >> "$work/$shape-$kind"
      done
    done
  done
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# rounds_table WORK "SHAPES" "KINDS" COLUMNS: a markdown row per shape and kind, the median of each
# of the first COLUMNS figures (the header is the caller's).
rounds_table() {
  local work=$1 shapes=$2 kinds=$3 columns=$4 shape kind c row
  for shape in $shapes; do
    for kind in $kinds; do
      row="| $shape | $kind |"
      for c in $(seq "$columns"); do
        row+=" $(cut -d' ' -f"$c" "$work/$shape-$kind" | median) |"
      done
      echo "$row"
    done
  done
}
