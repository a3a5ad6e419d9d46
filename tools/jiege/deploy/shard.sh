#!/bin/sh
# One shard of `jiege compare` in a batch system: the shard index comes from
# a Kubernetes indexed Job (JOB_COMPLETION_INDEX, with SHARDS the Job's
# completions) or a Slurm array job (SLURM_ARRAY_TASK_ID, counted from
# SLURM_ARRAY_TASK_MIN, and SLURM_ARRAY_TASK_COUNT). Every shard writes
# OUT/leaderboard-shard-K-of-N.{json,md,html}; `jiege merge` joins them.
#
#   MANIFEST    the compare manifest (required)
#   OUT         the results directory all shards share (required)
#   JIEGE       the jiege binary (default: jiege on PATH)
#   JIEGE_FLAGS more compare flags, e.g. "--runs 5 --duration 20s"
set -eu
: "${JIEGE:=jiege}"
: "${MANIFEST:?set MANIFEST to the compare manifest}"
: "${OUT:?set OUT to the results directory the shards share}"
if [ -n "${JOB_COMPLETION_INDEX:-}" ]; then
	index=$JOB_COMPLETION_INDEX
	count=${SHARDS:?set SHARDS to the number of completions of the Job}
elif [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
	index=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
	count=${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT is not set}
else
	echo "shard.sh: neither JOB_COMPLETION_INDEX (Kubernetes indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm array job) is set" >&2
	exit 2
fi
echo "shard.sh: jiege compare $MANIFEST, shard $index of $count, into $OUT" >&2
status=0
# JIEGE_FLAGS is split into words on purpose.
# shellcheck disable=SC2086
"$JIEGE" compare "$MANIFEST" --shard "$index/$count" --out "$OUT" ${JIEGE_FLAGS:-} || status=$?
# Status 1 is a verdict (an attempt failed), not a failed shard: only 2
# (usage, environment, interrupt) makes the batch system retry.
[ "$status" -le 1 ]
