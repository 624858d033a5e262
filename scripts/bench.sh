#!/usr/bin/env bash
# Benchmarks: medians of repeated runs, printed; nothing here asserts a time.
#   - my-chrome tab-list (the native client) vs the raw pinned CLI's
#     `-s=mychrome tab-list` on the same session, alternating (target: ratio
#     <= 0.05), and the same for `snapshot`;
#   - the peak RSS of `my-chrome tab-list` (GNU time; target <= 15 MiB), and
#     the daemon's own share of it: the request sent and its reply read
#     inside a fresh process (examples/daemon_cost.rs);
#   - connect (after disconnect), doctor --json, a no-op setup, on the
#     stand-in. The real extension's connect is the last benchmark below;
#   - the turn's share of a forwarded command: one uncontended take and
#     release of the session's lock, timed inside a fresh process
#     (examples/lease_cost.rs), with an explicit agent name and with the
#     derived one (target: <= 2 ms);
#   - who is asking: a chosen name proven by its key against the session's
#     registry (examples/identity_cost.rs; target: <= 0.3 ms), and a
#     derived name, in a fresh process;
#   - the per-command cost of keeping each agent in its own tabs: the tab
#     lists before and after, the book, the selection, timed inside a fresh
#     process (examples/tabs_cost.rs; target: <= 5 ms), with the agent's tab
#     current and with another agent's tab current (a selection);
#   - three agents at once, each reading its own page (snapshot and eval,
#     10 each), against one agent doing all 60 in a row, five rounds each,
#     alternating: the medians (target: <= 1.2x);
#   - one agent's command while another sends commands back to back,
#     against the same command alone (issue 46's fairness: target <= 2x, at
#     most the one running waited for: the turn is given in the order asked);
#   - one agent's command behind four never-settling commands under four
#     names (their bound 3 s, the caller's shortening): each steps aside
#     once the next is in line (Linux), so the wait is a moment per name,
#     not a bound (issue 46: against one command alone);
#   - one agent's command beside another agent's page that never yields
#     (issue 46: a page holds up no other agent), against it alone;
#   - the helper check's share: reading the record of the verified tree and
#     comparing all of <runtime>/cli with it, in a fresh process
#     (examples/manifest_cost.rs; target: <= 5 ms);
#   - the checks that keep a misled agent in its own tabs (the line read
#     once, settings, fingerprint, headers kept redacted, outputs staged, a
#     JSON reply redacted string by string), in a fresh process
#     (examples/checks_cost.rs; target: <= 2 ms);
#   - a "breakdown" block (issue 36: where a forwarded command's time goes),
#     for tab-list, snapshot, eval document.title and click body:
#     (a) the whole process, my-chrome and the raw CLI alternating (the
#         ratios above, and eval and click beside them);
#     (b) each daemon request the command made, from strace logs of runs of
#         their own (strace perturbs: never the timed runs): the requests
#         per run by label (the command written on the connection, "probe"
#         for one that wrote nothing), each label's median span from
#         connect to close (scripts/spans.py), and the whole minus them;
#     (c) my-chrome's own time: `my-chrome eval 1` against a daemon that
#         answers at once (examples/instant_daemon.rs, a runtime of its
#         own), beside `my-chrome --version` (the process start alone), and
#         perf stat's task-clock for it when perf is there;
#     (d) that own time by step: the library steps of a forwarded command
#         timed in a fresh process with the product's pub functions
#         (examples/forward_steps.rs), Start::open and take_turn also in
#         their pieces; a step no pub function reaches says n/a (private);
#   - with --against REV: the same forwarded commands by the binary of an
#     earlier commit (built in a worktree under target/), each on a session
#     of its own to a stand-in of its own (their state files differ), the
#     two alternating: the medians and the difference per command (the
#     cost of what changed since REV);
#   - last, connect on the real Playwright Extension 0.3.0 (issue 49;
#     tests/connect_bench.rs, the real-extension tests' world: Debian's
#     Chromium under Xvfb, the extension built from
#     ../shared/real-extension, its token in a private keyring; skipped,
#     and said, without that source): `my-chrome connect` and `disconnect`
#     against the raw pinned CLI's own `attach --extension` and `detach`
#     (the token in its environment, as the tool my-chrome replaces runs
#     it) and one Node load of the pinned core bundle, interleaved in one
#     browser, RUNS rounds (default 10) after one warm-up: the medians and
#     the ratios (targets: connect <= 1.0x the raw attach, <= 3x the core
#     bundle's load); then the phases of one more connect from strace -f
#     (each program started, each Unix socket connected to, each exit, in
#     ms from its start). --connect runs this one alone.
# It runs against the Chrome stand-in (a real headless Chromium) with a
# throw-away token in a private GNOME Keyring: never against your Chrome
# (the last one runs a Chromium of its own: no Chromium of yours may run
# meanwhile, as for tests/real_extension.rs).
#
# Usage: scripts/bench.sh [RUNS] [--against REV]     (default 20)
#        scripts/bench.sh --connect [RUNS]           (default 10)
set -Eeuo pipefail
# A step that fails names itself (its output is mostly sent to /dev/null).
trap 'echo "bench: line $LINENO failed (exit $?): $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
runs= against= connect_only=
while [ $# -gt 0 ]; do
  case $1 in
    --against) against=${2:?--against needs a commit}; shift 2 ;;
    --connect) connect_only=1; shift ;;
    *) runs=$1; shift ;;
  esac
done
# The real extension's connect (tests/connect_bench.rs): its rounds are RUNS
# when given, else 10 (a round takes seconds). A test target, run with
# `cargo test` and not nextest: it is both a token carrier (the raw CLI)
# and a test of Chromium by name, which nextest's groups keep apart. Run
# with the caller's HOME and PATH (cargo's), none of the stand-in's below.
connect_runs=${runs:-10} runs=${runs:-20}
cargo_home=$HOME cargo_path=$PATH
connect_bench() {
  local source=${REAL_EXTENSION_DIR:-../shared/real-extension}
  if [ ! -f "$source/build.sh" ]; then
    echo "connect on the real extension: skipped ($source/build.sh is missing)"
    return 0
  fi
  env -u MY_CHROME_RUNTIME_DIR -u MY_CHROME_CHROME -u MY_CHROME_USER_DATA_DIR -u DBUS_SESSION_BUS_ADDRESS \
    HOME="$cargo_home" PATH="$cargo_path" BENCH_CONNECT_RUNS="$connect_runs" CARGO_TARGET_DIR="$PWD/target" \
    cargo test --release --quiet --test connect_bench -- --ignored --nocapture
}
if [ -n "$connect_only" ]; then
  connect_bench
  exit 0
fi

# The binaries timed are this checkout's, whatever CARGO_TARGET_DIR says.
export CARGO_TARGET_DIR=$PWD/target
cargo build --release --quiet --workspace
cargo build --release --quiet --example lease_cost --example identity_cost --example manifest_cost --example daemon_cost --example tabs_cost --example checks_cost \
  --example instant_daemon --example forward_steps
if [ -n "$against" ]; then
  # The earlier binary, built once per commit in a worktree of its own.
  old_tree=$PWD/target/bench-against/$(git rev-parse --short "$against")
  [ -d "$old_tree" ] || git worktree add --detach "$old_tree" "$against" >/dev/null
  (cd "$old_tree" && CARGO_TARGET_DIR="$old_tree/target" cargo build --release --quiet --bin my-chrome)
  old_bin=$old_tree/target/release/my-chrome
fi
command -v python3 >/dev/null || { echo "bench: python3 is missing (it serves the agents' pages)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: GNU time (/usr/bin/time) is missing: scripts/prerequisites.sh test installs it" >&2; exit 1; }
bin=$PWD/target/release/my-chrome
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home MY_CHROME_RUNTIME_DIR=$work/runtime PATH=/usr/bin:/bin
mkdir -p "$HOME" "$work/standin"
"$bin" setup >/dev/null 2>&1

# A private Secret Service holding a throw-away token.
dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/bus" >/dev/null 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
for _ in $(seq 100); do [ -S "$work/bus" ] && break; sleep 0.05; done
printf bench-keyring-password | gnome-keyring-daemon --unlock --foreground --components=secrets >/dev/null 2>&1 &
pids+=($!)
sleep 1
token=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 43)
printf '%s' "$token" | "$bin" token store --stdin >/dev/null

# The stand-in: "the user's Chrome", whose extension accepts that token.
cp target/release/chrome-standin "$work/standin/chrome"
printf '%s' "$token" >"$work/standin/token" && chmod 600 "$work/standin/token"
# Its person confirms the connect my-chrome asks them for.
STANDIN_PERSON=confirm STANDIN_TOKEN_FILE=$work/standin/token "$work/standin/chrome" >"$work/standin/out" 2>/dev/null &
pids+=($!)
for _ in $(seq 200); do grep -q READY "$work/standin/out" 2>/dev/null && break; sleep 0.05; done
export MY_CHROME_CHROME=$work/standin/chrome MY_CHROME_USER_DATA_DIR=$HOME/.config/google-chrome
unset token

median_ms() { # command...
  local times=() start end
  for _ in $(seq "$runs"); do
    start=$(date +%s%N); "$@" >/dev/null 2>&1 || true; end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

"$bin" connect >/dev/null
"$bin" goto "about:blank" >/dev/null
raw() { (cd "$MY_CHROME_RUNTIME_DIR" && umask 077 && env -i HOME="$HOME" PATH=/usr/bin:/bin \
  TMPDIR="$MY_CHROME_RUNTIME_DIR/tmp" NO_UPDATE_NOTIFIER=1 USER="$(id -un)" \
  "$(command -v node)" cli/node_modules/@playwright/cli/playwright-cli.js -s=mychrome "$@"); }
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# A chosen name is the agent's that registered it: its first command prints
# the key (stderr, the line after the notice), and every later command
# carries NAME:KEY (docs/DESIGN.md, "Who is asking"). Names end with the
# session and with `release`: registered again after either.
declare -A keys=()
register() { # names...
  local n
  for n in "$@"; do
    keys[$n]=$(MY_CHROME_AGENT=$n "$bin" tab-list 2>&1 >/dev/null | sed -n '/is now registered to you/{n;p;q}')
    [ -n "${keys[$n]}" ] || { echo "bench: agent $n was not registered" >&2; exit 1; }
  done
}
as() { echo "$1:${keys[$1]}"; } # NAME:KEY
# Alternating runs of `my-chrome ARGS` and the raw CLI with the same ARGS:
# sets $w and $r, medians in microseconds, read from bash's own clock (a
# `date` per reading would add its own start-up to a 15 ms command).
alternate() {
  local wrapped=() raws=() s e
  for _ in $(seq "$runs"); do
    s=${EPOCHREALTIME/[.,]/}; "$bin" "$@" >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; wrapped+=($((e - s)))
    s=${EPOCHREALTIME/[.,]/}; raw "$@" >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; raws+=($((e - s)))
  done
  w=$(med "${wrapped[@]}"); r=$(med "${raws[@]}")
}
# Five untimed rounds first: the daemon's JavaScript warms up on its first
# requests, whichever client sends them.
for _ in $(seq 5); do "$bin" tab-list >/dev/null 2>&1; raw tab-list >/dev/null 2>&1; done
alternate tab-list; w_list=$w r_list=$r
alternate snapshot; w_snap=$w r_snap=$r
alternate eval document.title; w_eval=$w r_eval=$r
alternate click body; w_click=$w r_click=$r
# The breakdown's daemon requests: strace logs of runs of their own, by
# an agent named for them (under strace the derived name would be strace's,
# a new agent each run, opening a tab each time), its tab opened and made
# current by an untraced run first.
traced=(tab-list snapshot "eval document.title" "click body")
mkdir -p "$work/strace"
if command -v strace >/dev/null; then
  register bench-traced
  for c in "${traced[@]}"; do
    # shellcheck disable=SC2086 # the command's words
    MY_CHROME_AGENT=$(as bench-traced) "$bin" $c >/dev/null 2>&1 || true
    for i in $(seq "$runs"); do
      # shellcheck disable=SC2086
      MY_CHROME_AGENT=$(as bench-traced) strace -f -ttt -T -e trace=connect,write,sendto,close -s 300 \
        -o "$work/strace/${c// /_}.$i" "$bin" $c >/dev/null 2>&1 || true
    done
  done
  MY_CHROME_AGENT=$(as bench-traced) "$bin" release >/dev/null 2>&1 || true
fi
rss=$(for _ in $(seq "$runs"); do
  /usr/bin/time -f %M "$bin" tab-list 2>&1 >/dev/null | tail -1
done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
daemon=$(for _ in $(seq "$runs"); do target/release/examples/daemon_cost; done |
  sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')

# Each agent in its own tabs: what it adds to a command, with the agent's
# tab current, and with another agent's current (then a selection too).
site=$work/site && mkdir -p "$site"
for a in one two three; do printf '<title>%s</title><h1>Page of %s</h1>' "$a" "$a" >"$site/$a.html"; done
python3 -m http.server --bind 127.0.0.1 --directory "$site" 18765 >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/18765) 2>/dev/null && break; sleep 0.05; done
register one two three
for a in one two three; do MY_CHROME_AGENT=$(as $a) "$bin" goto "http://127.0.0.1:18765/$a.html" >/dev/null; done
tabs_us() { # agent, and whose tab is to be current first
  for _ in $(seq "$runs"); do
    MY_CHROME_AGENT=$(as "$2") "$bin" eval 1 >/dev/null 2>&1
    MY_CHROME_AGENT=$(as "$1") target/release/examples/tabs_cost
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
tabs_own=$(tabs_us one one)
tabs_switch=$(tabs_us one two)
reads() { # agent count
  for _ in $(seq "$2"); do
    MY_CHROME_AGENT=$(as "$1") "$bin" snapshot >/dev/null && MY_CHROME_AGENT=$(as "$1") "$bin" eval document.title >/dev/null
  done
}
# Five rounds of each, alternating; the medians.
serials=() togethers=()
for _ in $(seq 5); do
  s=${EPOCHREALTIME/[.,]/}; reads one 30; e=${EPOCHREALTIME/[.,]/}; serials+=($((e - s)))
  s=${EPOCHREALTIME/[.,]/}
  reads one 10 & r1=$!; reads two 10 & r2=$!; reads three 10 & r3=$!
  wait "$r1" "$r2" "$r3"
  e=${EPOCHREALTIME/[.,]/}; togethers+=($((e - s)))
done
serial=$(med "${serials[@]}"); together=$(med "${togethers[@]}")
# Fairness: while agent one sends commands back to back, agent two's one
# command against the same command with nobody else.
alones=() besides=()
for _ in $(seq 5); do
  s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=$(as two) "$bin" eval 1 >/dev/null; e=${EPOCHREALTIME/[.,]/}
  alones+=($((e - s)))
  (for _ in $(seq 15); do MY_CHROME_AGENT=$(as one) "$bin" eval 1 >/dev/null; done) &
  loop=$!
  sleep 0.3
  s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=$(as two) "$bin" eval 1 >/dev/null; e=${EPOCHREALTIME/[.,]/}
  besides+=($((e - s)))
  wait "$loop"
done
alone=$(med "${alones[@]}"); beside=$(med "${besides[@]}")
# Many names, many bounds: four never-settling evals under four new names
# (their bound shortened to 3 s, as a caller may), sent at once; agent
# two's one command asked 0.3 s in, timed from its start. Each round new
# names (an agent's next command waits for its own late one).
behinds=()
for i in $(seq 5); do
  stuck=()
  for n in 1 2 3 4; do
    register "late$i-$n"
    MY_CHROME_AGENT=$(as "late$i-$n") "$bin" tab-new about:blank >/dev/null
  done
  for n in 1 2 3 4; do
    MY_CHROME_AGENT=$(as "late$i-$n") MY_CHROME_COMMAND_TIMEOUT_SECS=3 "$bin" eval 'new Promise(() => {})' >/dev/null 2>&1 &
    stuck+=($!)
  done
  sleep 0.3
  s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=$(as two) "$bin" eval 1 >/dev/null; e=${EPOCHREALTIME/[.,]/}
  behinds+=($((e - s)))
  wait "${stuck[@]}" || true
  for n in 1 2 3 4; do MY_CHROME_AGENT=$(as "late$i-$n") "$bin" release >/dev/null 2>&1 || true; done
done
behind=$(med "${behinds[@]}")
# Beside a page that never yields: agent "spin"'s page runs a script that
# never returns; agent two's one command, five times, against it alone
# (each tab description waits on that page at most 500 ms, then 100 ms).
register spin
MY_CHROME_AGENT=$(as spin) "$bin" tab-new about:blank >/dev/null
MY_CHROME_AGENT=$(as spin) "$bin" eval 'setTimeout(() => { for (;;) {} }, 300), 1' >/dev/null
sleep 1
spins=()
for _ in $(seq 5); do
  s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=$(as two) "$bin" eval 1 >/dev/null; e=${EPOCHREALTIME/[.,]/}
  spins+=($((e - s)))
done
spun=$(med "${spins[@]}")
MY_CHROME_AGENT=$(as spin) "$bin" release >/dev/null 2>&1 || true
for a in one two three; do MY_CHROME_AGENT=$(as $a) "$bin" release >/dev/null 2>&1 || true; done

connects=()
for _ in $(seq 5); do
  "$bin" disconnect >/dev/null 2>&1
  s=$(date +%s%N); "$bin" connect >/dev/null 2>&1; e=$(date +%s%N); connects+=($(( (e - s) / 1000000 )))
done
c=$(med "${connects[@]}")
doctor=$(median_ms "$bin" doctor --json)
setup=$(median_ms "$bin" setup)
lease_us() { # runtime [agent]
  for _ in $(seq "$runs"); do target/release/examples/lease_cost "$@"; done |
    sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
manifest=$(for _ in $(seq "$runs"); do target/release/examples/manifest_cost "$MY_CHROME_RUNTIME_DIR"; done |
  sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
checks=$(for _ in $(seq "$runs"); do target/release/examples/checks_cost; done |
  sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
lease_named=$(lease_us "$work/lease-named" bench)
lease_derived=$(lease_us "$work/lease-derived")
# Who is asking: a chosen name registered by a first run (its key read
# from that run's stderr), then proven with NAME:KEY by each timed run;
# and a derived name.
identity_us() { # runtime [NAME:KEY]
  for _ in $(seq "$runs"); do target/release/examples/identity_cost "$@"; done |
    sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
bench_key=$(target/release/examples/identity_cost "$work/identity" bench 2>&1 >/dev/null |
  sed -n '/is now registered to you/{n;p;q}')
identity_keyed=$(identity_us "$work/identity" "bench:$bench_key")
identity_derived=$(identity_us "$work/identity")

# my-chrome's own time: a runtime of its own, whose session's daemon
# answers every request at once, timed while the stand-in's session is
# idle (its disconnect keeps the machine busy for a while). Its first
# command opens the agent's tab; five untimed rounds, then `eval 1` and the
# process start alone, alternating.
instant=$work/instant-runtime
MY_CHROME_RUNTIME_DIR=$instant "$bin" setup >/dev/null 2>&1
MY_CHROME_RUNTIME_DIR=$instant target/release/examples/instant_daemon >"$work/instant.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q READY "$work/instant.out" 2>/dev/null && break; sleep 0.05; done
inst() { MY_CHROME_RUNTIME_DIR=$instant "$@"; }
for _ in $(seq 5); do inst "$bin" eval 1 >/dev/null 2>&1; done
owns=() starts=()
for _ in $(seq "$runs"); do
  s=${EPOCHREALTIME/[.,]/}; inst "$bin" eval 1 >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; owns+=($((e - s)))
  s=${EPOCHREALTIME/[.,]/}; "$bin" --version >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; starts+=($((e - s)))
done
own=$(med "${owns[@]}") floor=$(med "${starts[@]}")
perf_line=
if command -v perf >/dev/null && perf_out=$(inst perf stat -r 20 -e task-clock "$bin" eval 1 2>&1 >/dev/null); then
  perf_line=$(printf '%s\n' "$perf_out" | awk '
    /task-clock/ { cpu = $1 } /seconds time elapsed/ { wall = $1 * 1000 }
    END { if (cpu != "") printf "task-clock %.1f ms (CPU), elapsed %.1f ms", cpu, wall }')
fi
# Its steps: RUNS fresh processes each way; the median of each step.
steps() { # FORWARD_STEPS_START value
  for _ in $(seq "$runs"); do
    MY_CHROME_RUNTIME_DIR=$instant FORWARD_STEPS_START=$1 target/release/examples/forward_steps eval 1 |
      grep $'\t' || true
  done | awk -F'\t' '
    !($1 in n) { order[++k] = $1 } { n[$1]++; v[$1, n[$1]] = $2 }
    END {
      for (i = 1; i <= k; i++) {
        s = order[i]; m = n[s]
        if (v[s, 1] ~ /n\/a/) { printf "    %-72s %s\n", s, v[s, 1]; continue }
        for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++)
          if (v[s, b] + 0 < v[s, a] + 0) { t = v[s, a]; v[s, a] = v[s, b]; v[s, b] = t }
        printf "    %-72s %6d us\n", s, v[s, int((m + 1) / 2)]
      }
    }'
}
steps_whole=$(steps whole)
steps_pieces=$(steps pieces)
"$bin" disconnect >/dev/null 2>&1 || true

ms() { awk -v u="$1" 'BEGIN { printf "%.1f ms", u / 1000 }'; }
echo "runs: $runs each, alternating (release build, stand-in Chromium)"
echo "raw playwright-cli -s=mychrome tab-list: median $(ms "$r_list")"
echo "my-chrome tab-list:                      median $(ms "$w_list")"
awk -v w="$w_list" -v r="$r_list" 'BEGIN { printf "ratio my-chrome / raw:                   %.3f (target <= 0.05)\n", w / r }'
echo "raw playwright-cli -s=mychrome snapshot: median $(ms "$r_snap")"
echo "my-chrome snapshot:                      median $(ms "$w_snap")"
awk -v w="$w_snap" -v r="$r_snap" 'BEGIN { printf "ratio my-chrome / raw (snapshot):        %.3f\n", w / r }'
awk -v k="$rss" 'BEGIN { printf "peak RSS of my-chrome tab-list:          median %.1f MiB (target <= 15)\n", k / 1024 }'
echo "  of which the daemon's round trip:      median $(ms "$daemon")"
awk -v w="$w_list" -v d="$daemon" 'BEGIN { printf "  start, lease and checks (the rest):    %.1f ms\n", (w - d) / 1000 }'
echo "my-chrome connect (5 runs):              median ${c} ms"
echo "my-chrome doctor --json:                 median ${doctor} ms"
echo "my-chrome setup (no-op):                 median ${setup} ms"
echo "turn take+release, MY_CHROME_AGENT set:   median ${lease_named} us (target <= 2000)"
echo "turn take+release, derived agent name:    median ${lease_derived} us (target <= 2000)"
echo "who is asking, NAME:KEY proven:           median ${identity_keyed} us (target <= 300)"
echo "who is asking, the derived name:          median ${identity_derived} us"
echo "own tabs, per command (own tab current):  median ${tabs_own} us (target <= 5000)"
echo "own tabs, per command (another's current): median ${tabs_switch} us (a selection too)"
echo "60 reads, one agent in a row:             median $(ms "$serial") (5 rounds)"
echo "60 reads, three agents at once (20 each): median $(ms "$together") (5 rounds)"
awk -v t="$together" -v s="$serial" 'BEGIN { printf "ratio three at once / one in a row:       %.2f (target <= 1.2)\n", t / s }'
echo "one command, nobody else:                 median $(ms "$alone") (5 rounds)"
echo "one command, another sending back to back: median $(ms "$beside")"
awk -v b="$beside" -v a="$alone" 'BEGIN { printf "ratio beside / alone:                     %.2f (target <= 2: it waits for at most the one running)\n", b / a }'
echo "one command behind 4 stuck under 4 names: median $(ms "$behind") (their bound 3 s; one command alone: $(ms "$alone"))"
echo "one command, another's page never yields: median $(ms "$spun") (one command alone: $(ms "$alone"))"
echo "helper tree unchanged since verified:     median ${manifest} us (target <= 5000, $(wc -l <"$MY_CHROME_RUNTIME_DIR/cli-manifest.txt") entries)"
echo "isolation checks, per command:            median ${checks} us (target <= 2000)"

echo
echo "breakdown (issue 36: where a forwarded command's time goes; medians of $runs runs)"
echo " (a) the whole process, my-chrome and the raw CLI alternating:"
whole() { # label, my-chrome us, raw us
  awk -v l="$1" -v w="$2" -v r="$3" \
    'BEGIN { printf "    %-22s my-chrome %7.1f ms   raw %7.1f ms   ratio %.3f\n", l, w / 1000, r / 1000, w / r }'
}
whole tab-list "$w_list" "$r_list"
whole snapshot "$w_snap" "$r_snap"
whole "eval document.title" "$w_eval" "$r_eval"
whole "click body" "$w_click" "$r_click"
echo " (b) the daemon requests each made (strace -f, runs of their own; span = connect to close):"
if command -v strace >/dev/null; then
  for c in "${traced[@]}"; do
    spans=$(python3 scripts/spans.py "$work/strace/${c// /_}".*)
    case $c in tab-list) w=$w_list ;; snapshot) w=$w_snap ;; eval*) w=$w_eval ;; *) w=$w_click ;; esac
    printf '    %s: %s\n' "$c" "$(head -1 <<<"$spans")"
    tail -n +2 <<<"$spans" | sed 's/^/    /'
    awk -v w="$w" -v d="$(head -1 <<<"$spans" | sed -n 's/.*median \([0-9.]*\) ms$/\1/p')" \
      'BEGIN { printf "      the whole (a) minus its requests: %.1f ms (rough: the spans are traced)\n", w / 1000 - d }'
  done
else
  echo "    strace is missing: skipped"
fi
echo " (c) my-chrome's own time (against examples/instant_daemon, which answers at once):"
echo "    my-chrome eval 1:                  median $(ms "$own")"
echo "    my-chrome --version (the start):   median $(ms "$floor")"
awk -v o="$own" -v s="$floor" 'BEGIN { printf "    eval 1 less the start:             %.1f ms\n", (o - s) / 1000 }'
[ -z "$perf_line" ] || echo "    perf stat -r 20 eval 1:            $perf_line"
echo " (d) that own time by step (examples/forward_steps eval 1, fresh processes):"
printf '%s\n' "$steps_whole"
echo "   Start::open and take_turn in their pieces (FORWARD_STEPS_START=pieces):"
printf '%s\n' "$steps_pieces" | grep -E '^ +(start|turn|the request|all of)'

if [ -n "$against" ]; then
  # The same commands by the earlier binary, on a world of its own: a second
  # stand-in (its own HOME and user data), a second runtime, the same
  # keyring item. Alternating, one command of each at a time.
  old_home=$work/old-home old_runtime=$work/old-runtime
  mkdir -p "$old_home" "$work/old-standin"
  old() { HOME=$old_home MY_CHROME_RUNTIME_DIR=$old_runtime MY_CHROME_USER_DATA_DIR=$old_home/.config/google-chrome \
    MY_CHROME_CHROME=$work/old-standin/chrome "$old_bin" "$@"; }
  old setup >/dev/null 2>&1
  cp target/release/chrome-standin "$work/old-standin/chrome"
  cp "$work/standin/token" "$work/old-standin/token"
  HOME=$old_home STANDIN_PERSON=confirm STANDIN_TOKEN_FILE=$work/old-standin/token "$work/old-standin/chrome" >"$work/old-standin/out" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 200); do grep -q READY "$work/old-standin/out" 2>/dev/null && break; sleep 0.05; done
  "$bin" connect >/dev/null 2>&1
  old connect >/dev/null 2>&1
  # The earlier binary knows no keys: its agents go by their names alone.
  register one two
  for w in new old; do
    for a in one two; do
      if [ $w = new ]; then MY_CHROME_AGENT=$(as $a) "$bin" goto "http://127.0.0.1:18765/$a.html" >/dev/null
      else MY_CHROME_AGENT=$a old goto "http://127.0.0.1:18765/$a.html" >/dev/null; fi
    done
  done
  ab() { # args: alternating runs by agent one, with agent two's tab current first
    local news=() olds=() s e
    for _ in $(seq "$runs"); do
      MY_CHROME_AGENT=$(as two) "$bin" eval 1 >/dev/null 2>&1; MY_CHROME_AGENT=two old eval 1 >/dev/null 2>&1
      s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=$(as one) "$bin" "$@" >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; news+=($((e - s)))
      s=${EPOCHREALTIME/[.,]/}; MY_CHROME_AGENT=one old "$@" >/dev/null 2>&1; e=${EPOCHREALTIME/[.,]/}; olds+=($((e - s)))
    done
    local n o; n=$(med "${news[@]}"); o=$(med "${olds[@]}")
    printf '%-28s now %s, at %s %s: %+.1f ms\n' "$*" "$(ms "$n")" "$against" "$(ms "$o")" \
      "$(awk -v n="$n" -v o="$o" 'BEGIN { print (n - o) / 1000 }')"
  }
  echo "against $against (each on its own stand-in; another agent's tab current first):"
  ab tab-list
  ab snapshot
  ab eval document.title
  ab click body
  "$bin" disconnect >/dev/null 2>&1 || true
  old disconnect >/dev/null 2>&1 || true
fi

# Last, on a world of its own: the stand-in's processes go first.
cleanup
connect_bench
