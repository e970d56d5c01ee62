#!/usr/bin/env bash
# The nightly ingest, as .github/workflows/nightly-ingest.yml runs it (and tests/test_nightly.py):
# index run → optional eval gate → job summary → pack the new generation for servers.
#
#   .github/scripts/nightly-ingest.sh install   # the package (and the local model, for PROVIDER=local)
#   .github/scripts/nightly-ingest.sh run
#
# Environment (all optional but the secrets a config needs):
#   STATIC_RAG_CONFIG     config file (default: index.toml); STATIC_RAG_ARTIFACTS overrides its artifacts folder
#   PROVIDER              spaces to rebuild (default: gemini); NOTION_TOKEN, GEMINI_API_KEY: secrets
#   FULL_REFRESH, DRY_RUN "true" to pass --full-refresh / --dry-run
#   MAX_COST              USD: passed as --max-cost, what one night may spend on embeddings at most
#   ALLOW_MASS_DELETE     "true" to pass --allow-mass-delete (a run by hand, after the delete guard stopped a night)
#   REEMBED               "true" to pass --reembed (a run by hand, after a night stopped because the provider's model changed)
#   EVAL_GATE             a floors TOML: the new generation must pass `index eval --gate` to be packed,
#                         on EVAL_DATASET, EVAL_OFF_TOPIC or both
#   EVAL_DATASET          a BEIR folder labeled against your own documents
#   EVAL_OFF_TOPIC        folders of questions your documents should not answer, separated by ":"
#                         (e.g. a copy of bench/everyday): `--off-topic` for the gate's [answerable] limits
#   CHECK_LINKS           how many document URLs `index check-links` requests after the run (default 20;
#                         0: none); one that answers 404 or lacks a linked heading is a warning in the summary, never a failed job
#   OUT                   where run.json, run.log and the archive go (default: dist)
#   INDEX                 the index command (default: index)
#   STATIC_RAG_PACKAGE    what `install` installs (default: this checkout, "."; in your own repository a
#                         pinned requirement such as "static-rag @ git+https://github.com/YOUR-ORG/static-rag@v0.1.0")
#
# Exit codes: 0 published (a run with failed documents, index run's 4, also counts: the failed
# documents keep their last good version and the summary lists them); 1, 2, 3, 5 as `index run`
# (nothing published); 6 the eval gate failed (the new generation is rolled back, not packed).
set -uo pipefail

if [[ ${1:-} == install ]]; then
  package=${STATIC_RAG_PACKAGE:-.}
  if [[ $package == . && ! -f pyproject.toml ]]; then
    echo "::error::this repository is not a copy of static-rag: set the variable STATIC_RAG_PACKAGE to a pinned requirement," \
         "e.g. static-rag @ git+https://github.com/YOUR-ORG/static-rag@v0.1.0 (README, Deploy)" >&2
    exit 2
  fi
  python -m pip install --upgrade 'pip>=24.2' || exit 1
  if [[ ${PROVIDER:-gemini} == local ]]; then
    [[ $package == . ]] && package='.[local]'  # another requirement names its extras itself: static-rag[local] @ git+…
    python -m pip install torch==2.13.0 || exit 1  # the CPU build first, as the Makefile does
  fi
  exec python -m pip install "$package"
elif [[ ${1:-} != run ]]; then
  echo "usage: $0 install | run" >&2
  exit 2
fi

INDEX=${INDEX:-index}
OUT=${OUT:-dist}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/stdout}
OUTPUTS=${GITHUB_OUTPUT:-/dev/null}
export STATIC_RAG_CONFIG=${STATIC_RAG_CONFIG:-index.toml}
mkdir -p "$OUT"

args=(run --provider "${PROVIDER:-gemini}" --json)
[[ ${FULL_REFRESH:-false} == true ]] && args+=(--full-refresh)
[[ ${DRY_RUN:-false} == true ]] && args+=(--dry-run)
[[ -n ${MAX_COST:-} ]] && args+=(--max-cost "$MAX_COST")
[[ ${ALLOW_MASS_DELETE:-false} == true ]] && args+=(--allow-mass-delete)
[[ ${REEMBED:-false} == true ]] && args+=(--reembed)

# What is there to build on? A run from nothing reads and embeds everything: on a night after others,
# the cache that carries artifacts/ was lost, and the summary says so, not only the bill.
status_said=$("$INDEX" status --json 2>&1 >/dev/null) && status_said=""

from_nothing() {
  local reason=${status_said#Error: }
  reason=${reason%% (run \`index run\` first*}
  echo
  echo "#### Started from nothing"
  echo
  echo "There was no generation to build on${reason:+ (\`index status\`: $reason)}: every document is"
  echo "read and every chunk embedded. On the first night that is expected. After earlier nights, the Actions cache"
  echo "that carries \`artifacts/\` from night to night was lost: GitHub removes a cache unused for 7 days and, once a"
  echo "repository's caches pass 10 GB, the least recently used. The variable \`STATIC_RAG_MAX_COST\` bounds what such a"
  echo "night spends."
}

"$INDEX" "${args[@]}" >"$OUT/run.json" 2>"$OUT/run.log"
status=$?
cat "$OUT/run.log" >&2

case $status in
  0 | 4) "$INDEX" report "$OUT/run.json" --markdown >>"$SUMMARY" || exit 1 ;;
  *)
    {
      echo "### static-rag ingest failed: \`index run\` exited $status; nothing was published"
      echo
      echo '```'
      tail -n 20 "$OUT/run.log"
      echo '```'
      [[ $status_said == *"artifacts folder not found"* || $status_said == *"no generation published"* ]] && from_nothing
      if [[ $status == 3 ]]; then
        echo
        echo "If these deletions are intended, run this workflow by hand (Actions → nightly-ingest → Run workflow) with"
        echo "\`allow_mass_delete\` ticked; if not, check the source: the nights after keep stopping here, serving the last generation."
      fi
      if grep -q "index run --reembed" "$OUT/run.log"; then
        echo
        echo "The provider's model changed under its name: run this workflow by hand with \`reembed\` ticked to embed every"
        echo "chunk anew (a dry run with it ticked shows the cost); until then each night stops here, serving the last generation."
      fi
    } >>"$SUMMARY"
    echo "::error::index run exited $status; nothing was published (see the job summary)"
    exit "$status"
    ;;
esac
if [[ $status == 4 ]]; then
  # A failure that repeats night after night is a stale page, not a blip: say the longest.
  longest=$(python3 -c 'import json, sys
e = max(json.load(open(sys.argv[1]))["errors"], key=lambda e: e.get("failed_runs", 1))
print("; one has failed %d runs in a row, since %s" % (e["failed_runs"], e["failing_since"][:10]) if e.get("failed_runs", 1) > 1 else "")' \
    "$OUT/run.json" 2>/dev/null)
  echo "::warning::some documents failed; each keeps its last good version (errors by code in the job summary)${longest}"
fi
built_on=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("built_on") or "")' "$OUT/run.json") || exit 1
if [[ -z $built_on ]]; then
  from_nothing >>"$SUMMARY"
  echo "::notice::no generation to build on: a run from nothing (see the job summary)"
fi
[[ ${DRY_RUN:-false} == true ]] && exit 0

read -r generation artifacts < <("$INDEX" status --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["generation"], s["artifacts"])')
[[ -n ${generation:-} ]] || exit 1

if [[ -n ${EVAL_GATE:-} && ( -n ${EVAL_DATASET:-} || -n ${EVAL_OFF_TOPIC:-} ) ]]; then
  # The new generation itself, on queries labeled against its own documents (corpus ids = doc ids)
  # and on questions it should not answer.
  eval_args=(eval --gate "$EVAL_GATE" --artifacts "$artifacts" --quiet)
  [[ -n ${EVAL_DATASET:-} ]] && eval_args+=(--dataset "$EVAL_DATASET")
  IFS=: read -ra off_topic <<<"${EVAL_OFF_TOPIC:-}"
  for folder in "${off_topic[@]}"; do
    [[ -n $folder ]] && eval_args+=(--off-topic "$folder")
  done
  "$INDEX" "${eval_args[@]}" >"$OUT/eval.txt" 2>&1
  gate=$?
  cat "$OUT/eval.txt"
  if [[ $gate != 0 ]]; then
    "$INDEX" rollback >&2 || true  # servers and the next run keep the last generation that passed
    {
      echo
      echo "#### Evaluation gate: failed (exit $gate); generation $generation rolled back, not published"
      echo
      echo '```'
      tail -n 20 "$OUT/eval.txt"
      echo '```'
    } >>"$SUMMARY"
    echo "::error::the evaluation gate failed; $generation was rolled back and not published"
    exit "$gate"
  fi
  printf '\n#### Evaluation gate: passed\n' >>"$SUMMARY"
fi

if [[ ${CHECK_LINKS:-20} != 0 ]]; then
  # Do the hits' links open? A url_template that does not match the site, or a site that moved its
  # pages, sends every visitor a chatbot cites to an error page, and nothing else would say so.
  "$INDEX" check-links --sample "${CHECK_LINKS:-20}" >"$OUT/links.txt" 2>&1
  links=$?
  if [[ $links == 4 ]]; then
    {
      echo
      echo "#### Links: some hits link to a missing page or heading"
      echo
      echo '```'
      head -n 30 "$OUT/links.txt"
      echo '```'
    } >>"$SUMMARY"
    echo "::warning::some document URLs answer 404, or their pages lack headings the hits link to (see the job summary)"
  elif [[ $links != 0 ]]; then
    echo "::notice::the document URLs could not be checked (index check-links exited $links): $(tail -n 1 "$OUT/links.txt")"
  fi
fi

"$INDEX" pack "$generation" -o "$OUT/generation.tar.gz" --latest || exit 1  # latest.json: what `index pull` reads
echo "generation=$generation" >>"$OUTPUTS"
printf '\nPacked for servers: `generation.tar.gz` (sha256 `%s`)\n' "$(cut -d' ' -f1 "$OUT/generation.tar.gz.sha256")" >>"$SUMMARY"
