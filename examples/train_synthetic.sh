#!/bin/sh
# A plain shell "training script" for mftune tune: it reads --x=, --y= and
# --epochs= options, computes a noisy validation loss whose bias shrinks with
# the epochs (noise seeded from MFTUNE_SEED), and prints it as the last line
#   mftune-score: <loss>
#   mftune tune examples/space_shell.toml -- sh examples/train_synthetic.sh
set -eu
x=0; y=0; epochs=1
for arg in "$@"; do
  case "$arg" in
    --x=*) x="${arg#--x=}" ;;
    --y=*) y="${arg#--y=}" ;;
    --epochs=*) epochs="${arg#--epochs=}" ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
if [ -n "${MFTUNE_TRACE:-}" ]; then
  echo "$MFTUNE_PULL_ID $x $y $epochs" >> "$MFTUNE_TRACE"
fi
awk -v x="$x" -v y="$y" -v e="$epochs" -v seed="${MFTUNE_SEED:-1}" 'BEGIN {
  srand(seed); u1 = rand(); u2 = rand(); if (u1 < 1e-12) u1 = 1e-12
  noise = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
  loss = (x - 0.3) ^ 2 + (y + 0.2) ^ 2 + 0.4 / e * (1 + 0.5 * x * x) + 0.02 * noise
  printf "training for %d epochs...\nmftune-score: %.6f\n", e, loss
}'
