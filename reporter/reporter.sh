#!/bin/sh
# fleetwarden reporter: runs on a rented GPU instance and posts a signed instance report
# (Standard Webhooks: HMAC-SHA256 of "id.timestamp.body") to fleetwarden every
# FLEETWARDEN_INTERVAL_S seconds: state running, GPU use from nvidia-smi (or "no telemetry"),
# disk use of the workspace and a progress counter. Needs only sh, curl and openssl (or python3).
# One process at a time (a lock directory); it never prints the key. It may be piped to `sh -s`:
# nothing in it reads standard input, which holds the rest of the script then.
#
#   FLEETWARDEN_URL          fleetwarden's public URL (required)
#   FLEETWARDEN_AGENT        the agent (default: default)
#   FLEETWARDEN_KEY          this instance's key, or the agent's webhook secret (required; whsec_...)
#   FLEETWARDEN_INSTANCE_ID  the instance id (else CONTAINER_ID on Vast.ai, else RUNPOD_POD_ID)
#   FLEETWARDEN_INTERVAL_S   seconds between reports (default 60, at least 5; a random 0-10 % is added)
#   FLEETWARDEN_WORKSPACE    the directory whose disk use is sent (default /workspace, else .)
#   FLEETWARDEN_PROGRESS_FILE  a file whose first number is a counter that grows with useful work
#   FLEETWARDEN_PROGRESS_CMD   or a command that prints it
#   FLEETWARDEN_RETRIES      attempts per report (default 3, backing off 2 s, 4 s, ...)
#   FLEETWARDEN_LOCK         the lock directory (default ${TMPDIR:-/tmp}/fleetwarden-reporter.lock)
#
# Usage: reporter.sh [--once]     --once sends one report and exits (0 when it was accepted).
set -u

me="fleetwarden-reporter"
say() { printf '%s: %s\n' "$me" "$*" >&2; }
die() { say "$*"; exit 2; }

once=0
for arg in "$@"; do
  case $arg in
    --once) once=1 ;;
    -h | --help) sed -n '2,/^# Usage/p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (use --once or nothing)" ;;
  esac
done

url=${FLEETWARDEN_URL:-}
agent=${FLEETWARDEN_AGENT:-default}
instance=${FLEETWARDEN_INSTANCE_ID:-${CONTAINER_ID:-${RUNPOD_POD_ID:-}}}
interval=${FLEETWARDEN_INTERVAL_S:-60}
retries=${FLEETWARDEN_RETRIES:-3}
lock=${FLEETWARDEN_LOCK:-${TMPDIR:-/tmp}/fleetwarden-reporter.lock}
workspace=${FLEETWARDEN_WORKSPACE:-/workspace}
[ -d "$workspace" ] || workspace=$(pwd)

[ -n "$url" ] || die "FLEETWARDEN_URL is not set"
url=${url%/}
[ -n "${FLEETWARDEN_KEY:-}" ] || die "FLEETWARDEN_KEY is not set"
case ${FLEETWARDEN_KEY} in whsec_*) ;; *) die "FLEETWARDEN_KEY must start with whsec_" ;; esac
[ -n "$instance" ] || die "no instance id: set FLEETWARDEN_INSTANCE_ID (or run where CONTAINER_ID or RUNPOD_POD_ID is set)"
case $instance in *[!A-Za-z0-9._:-]*) die "instance id must be word characters, '.', ':' or '-'" ;; esac
case $agent in '' | *[!A-Za-z0-9_-]*) die "FLEETWARDEN_AGENT must be word characters or '-'" ;; esac
case $interval in '' | *[!0-9]*) die "FLEETWARDEN_INTERVAL_S must be a whole number of seconds" ;; esac
[ "$interval" -ge 5 ] || die "FLEETWARDEN_INTERVAL_S must be at least 5"
case $retries in '' | *[!0-9]*) die "FLEETWARDEN_RETRIES must be a whole number" ;; esac
[ "$retries" -ge 1 ] || retries=1
command -v curl >/dev/null 2>&1 || die "curl is missing"

# The signer: openssl, else python3 (FLEETWARDEN_SIGNER forces one).
signer=${FLEETWARDEN_SIGNER:-}
if [ -z "$signer" ]; then
  if command -v openssl >/dev/null 2>&1; then signer=openssl
  elif command -v python3 >/dev/null 2>&1; then signer=python3
  else die "neither openssl nor python3 is available to sign reports"
  fi
fi

# One process: a lock directory holding the owner's pid; a lock whose owner is gone is taken over.
take_lock() {
  if mkdir "$lock" 2>/dev/null; then
    echo $$ >"$lock/pid"
    return 0
  fi
  owner=$(cat "$lock/pid" 2>/dev/null || true)
  if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then
    say "already running (pid $owner, lock $lock): not starting a second one"
    exit 0
  fi
  rm -rf "$lock"
  mkdir "$lock" 2>/dev/null || die "cannot take the lock $lock"
  echo $$ >"$lock/pid"
}
take_lock
tmp=$(mktemp "${TMPDIR:-/tmp}/fleetwarden-reporter.XXXXXX") || die "cannot make a temporary file"
sleeper=""
trap 'rm -rf "$lock" "$tmp"; [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null' EXIT
trap 'exit 0' INT TERM HUP

random() { od -An -N2 -tu2 /dev/urandom 2>/dev/null | tr -d ' \n' || echo 0; }

first_number() { awk 'match($0, /[0-9]+(\.[0-9]+)?/) { print substr($0, RSTART, RLENGTH); exit }'; }

json_string() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\000-\037')"; }

# "gpuUtil,gpus,note": the busiest GPU (so one busy GPU of eight is not idle) and every GPU.
gpu_fields() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    note="no telemetry: nvidia-smi not found"
    return
  fi
  if ! out=$(nvidia-smi --query-gpu=utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits </dev/null 2>/dev/null); then
    note="no telemetry: nvidia-smi failed"
    return
  fi
  parsed=$(printf '%s\n' "$out" | awk -F, '
    function num(v) { gsub(/[ \t\r]/, "", v); return (v ~ /^[0-9]+(\.[0-9]+)?$/) ? v : "" }
    NF >= 3 {
      u = num($1); used = num($2); total = num($3)
      if (u == "" || u > 100) next
      list = list (n ? "," : "") "{\"util\":" u (used != "" ? ",\"memUsedMiB\":" used : "") (total != "" ? ",\"memTotalMiB\":" total : "") "}"
      if (n == 0 || u + 0 > max + 0) max = u
      n++
    }
    END { if (n) printf "%s|%s|%d", max, list, n }')
  if [ -z "$parsed" ]; then
    note="no telemetry: nvidia-smi printed nothing readable"
    return
  fi
  gpu_util=${parsed%%|*}
  rest=${parsed#*|}
  gpus="[${rest%|*}]"
  note="${rest##*|} GPU(s)"
}

read_progress() {
  progress=""
  if [ -n "${FLEETWARDEN_PROGRESS_FILE:-}" ] && [ -r "$FLEETWARDEN_PROGRESS_FILE" ]; then
    progress=$(first_number <"$FLEETWARDEN_PROGRESS_FILE")
  elif [ -n "${FLEETWARDEN_PROGRESS_CMD:-}" ]; then
    progress=$(sh -c "$FLEETWARDEN_PROGRESS_CMD" </dev/null 2>/dev/null | first_number)
  fi
}

build_body() {
  gpu_util="" gpus="" note=""
  gpu_fields
  read_progress
  disk=$(df -P "$workspace" 2>/dev/null | awk 'NR == 2 { sub(/%/, "", $5); print $5 }')
  case $disk in '' | *[!0-9]*) disk="" ;; esac
  body="{\"instanceId\":$(json_string "$instance"),\"state\":\"running\",\"at\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  [ -n "$gpu_util" ] && body="$body,\"gpuUtil\":$gpu_util,\"gpus\":$gpus"
  [ -n "$disk" ] && body="$body,\"diskUsedPct\":$disk"
  [ -n "$progress" ] && body="$body,\"progress\":$progress"
  body="$body,\"message\":$(json_string "reporter: $note")}"
}

# base64 HMAC-SHA256 of stdin with the key (the base64 after whsec_). openssl takes the key as a
# hex argument (visible in this box's process list for the instant it runs); python3 reads it
# from its environment.
sign() {
  secret=${FLEETWARDEN_KEY#whsec_}
  if [ "$signer" = openssl ]; then
    hexkey=$(printf '%s' "$secret" | openssl base64 -d -A | od -An -v -tx1 | tr -d ' \n')
    openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | openssl base64 -A
  else
    FW_SECRET=$secret python3 -c 'import base64, hashlib, hmac, os, sys
key = base64.b64decode(os.environ["FW_SECRET"])
sys.stdout.write(base64.b64encode(hmac.new(key, sys.stdin.buffer.read(), hashlib.sha256).digest()).decode())'
  fi
}

# One report, up to $retries attempts (a refusal other than 408/429 is not retried).
report() {
  build_body
  id="msg_$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  attempt=1
  while :; do
    ts=$(date +%s)
    signature=$(printf '%s.%s.%s' "$id" "$ts" "$body" | sign) || signature=""
    [ -n "$signature" ] || { say "signing failed ($signer)"; return 1; }
    code=$(curl -sS -o "$tmp" -w '%{http_code}' --max-time 15 -X POST \
      -H 'content-type: application/json' -H "webhook-id: $id" -H "webhook-timestamp: $ts" \
      -H "webhook-signature: v1,$signature" --data-binary "$body" "$url/webhooks/$agent/instances" 2>/dev/null) || code=000
    case $code in
      2??) say "reported $instance ($code): ${gpu_util:+gpu ${gpu_util} % }${progress:+progress $progress }${note}"; return 0 ;;
      000 | 408 | 429 | 5??) ;;
      *) say "refused ($code): $(head -c 300 "$tmp" 2>/dev/null)"; return 1 ;;
    esac
    if [ "$attempt" -ge "$retries" ]; then
      say "giving up on this report after $attempt attempt(s) (last: $code)"
      return 1
    fi
    sleep $((1 << attempt))
    attempt=$((attempt + 1))
  done
}

if [ "$once" = 1 ]; then
  report
  exit $?
fi
# The sleep runs in the background and is waited for, so a TERM ends the loop at once.
while :; do
  report || true
  sleep $((interval + $(random) % (interval / 10 + 1))) &
  sleeper=$!
  wait "$sleeper"
  sleeper=""
done
