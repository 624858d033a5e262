#!/usr/bin/env bash
# Mutation testing of the modules that keep the user safe (docs/TESTING.md):
# cargo-mutants bends each line of a safeguard (a comparison flipped, a
# branch taken away, a function returning early) and runs the tests that
# cover that module and are cheap and safe to run many times; a mutant no
# test notices is a safeguard the suite does not guard.
#
# Usage: scripts/mutants.sh [MODULE...]      (default: every module below)
#        scripts/mutants.sh --in-diff FILE [MODULE...]   (only the lines FILE's diff changed)
#        scripts/mutants.sh --iterate [MODULE...]   (only what the last run did not catch)
#        scripts/mutants.sh --summary [MODULE...]   (the last runs' counts; runs nothing)
#        scripts/mutants.sh --list-modules
#
# It installs cargo-mutants $VERSION (cargo install --locked) when it is
# missing. It never edits the working tree: it copies the tree (tracked and
# untracked files, not what .gitignore names) to target/mutants/tree, whose
# own target/ is kept between runs so that a second run builds only what
# changed, and mutates that copy in place, one mutant at a time (the build
# takes both cores). Then it prints caught / missed / unviable / timed out
# per module, and where the missed ones are listed.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=27.0.0
say() { printf 'mutants.sh: %s\n' "$*"; }

# The safeguard modules: their files, and the tests each mutant of them runs
# (every unit test, plus the integration tests that cover the module, take
# seconds, and make their own sandboxes; turns.rs starts a browser for one
# test of the log, identity.rs for the names proven in a real session).
ORDER=(redact minimist file-args file-owners command-table policy tabs token-shape identity consent settings lease session-output ending runtime handoff manifest request cleanup-record removal)
declare -A FILES=(
  [redact]="src/redact/mod.rs src/redact/patterns.rs src/redact/known.rs src/redact/fingerprint.rs src/redact/controls.rs"
  [minimist]="src/minimist.rs"
  [file-args]="src/policy/files.rs src/file_args.rs"
  [file-owners]="src/file_owners.rs"
  [command-table]="src/pinned_commands.rs"
  [policy]="src/policy/mod.rs src/policy/line.rs src/policy/holds.rs"
  [tabs]="src/policy/tabs.rs src/tabs/book/model.rs src/tabs/book/sync.rs src/tabs/book/resolve.rs src/tabs/book/moves.rs src/tabs/book/holds.rs src/tabs/align.rs src/tabs/listing.rs src/tabs/notice.rs src/tabs/proof.rs src/tabs/stay.rs src/tabs/number.rs"
  [token-shape]="src/token_shape.rs"
  [identity]="src/identity/mod.rs src/agent_key.rs src/identity/registry.rs src/identity/derived.rs"
  [consent]="src/consent/server.rs src/consent/page.rs"
  [settings]="src/settings.rs"
  [lease]="src/lease/mod.rs src/lease/late.rs"
  [session-output]="src/session_output.rs"
  [ending]="src/command/ending.rs"
  [runtime]="src/runtime/mod.rs src/runtime/claim.rs src/runtime/private.rs src/runtime/state.rs src/runtime/log.rs src/runtime/lock.rs src/runtime/turn.rs"
  [handoff]="src/handoff.rs"
  [manifest]="src/helper/manifest.rs"
  [request]="src/daemon/request.rs"
  [cleanup-record]="src/session/bootstrap.rs src/session/leftovers.rs"
  [removal]="src/removal.rs src/installed.rs"
)
declare -A TESTS=(
  [redact]="--lib"
  [minimist]="--lib --test minimist"
  [file-args]="--lib --test policy"
  [file-owners]="--lib"
  [command-table]="--lib --test policy --test scope"
  [policy]="--lib --test policy --test scope --test one_reading"
  [tabs]="--lib --test scope --test stay"
  [token-shape]="--lib --test token --test policy"
  [identity]="--lib --test identity"
  [consent]="--lib"
  [settings]="--lib"
  [lease]="--lib --test turns"
  [session-output]="--lib"
  [ending]="--lib"
  [runtime]="--lib --test runtime --test helper"
  [handoff]="--lib --test handoff"
  [manifest]="--lib --test helper"
  [request]="--lib --test minimist"
  [cleanup-record]="--lib --test bound"
  [removal]="--lib --test uninstall"
)

in_diff=()
iterate=()
summary=
modules=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list-modules)
      for m in "${ORDER[@]}"; do printf '%-15s %-70s tests: %s\n' "$m" "${FILES[$m]}" "${TESTS[$m]}"; done
      exit 0 ;;
    --in-diff)
      [ $# -ge 2 ] || { say "--in-diff needs a diff file (git diff main > /tmp/changes.diff)" >&2; exit 2; }
      [ -f "$2" ] || { say "--in-diff: no such file: $2" >&2; exit 2; }
      in_diff=(--in-diff "$(realpath "$2")"); shift 2 ;;
    # Tests only added since the last run: the mutants it caught stay
    # caught, and only the missed and timed-out ones are run again
    # (cargo-mutants' --iterate; the counts below add both runs).
    --iterate) iterate=(--iterate); shift ;;
    --summary) summary=1; shift ;;
    -*) say "unknown option $1 (the usage is at the top of $0)" >&2; exit 2 ;;
    *)
      if [ -z "${FILES[$1]+x}" ]; then
        say "unknown module '$1'; the modules are: ${ORDER[*]}" >&2
        exit 2
      fi
      modules+=("$1"); shift ;;
  esac
done
[ ${#modules[@]} -gt 0 ] || modules=("${ORDER[@]}")

work=$PWD/target/mutants
took=0
status=0
# (--summary: straight to the counts.)
if [ -z "$summary" ]; then

if ! cargo mutants --version 2>/dev/null | grep -qx "cargo-mutants $VERSION"; then
  say "installing cargo-mutants $VERSION (cargo install --locked; a few minutes)"
  if ! cargo install --locked --quiet cargo-mutants --version "$VERSION"; then
    say "could not install cargo-mutants $VERSION (is crates.io reachable?); nothing was run or changed" >&2
    exit 1
  fi
fi

# The copy: the working tree as it is now, over the previous copy's sources
# (its target/ stays).
copy=$work/tree
mkdir -p "$copy"
find "$copy" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
# (-m: every file copied counts as changed now, so cargo never takes a
# build of a mutated file for a build of the original.) The sources as
# they were are kept aside too, for the restores between modules: the
# working tree may change meanwhile.
pristine=$work/pristine.tar
git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -cf "$pristine"
tar -xmf "$pristine" -C "$copy"

# The integration tests share one install of the pinned CLI, the golden
# runtime in the copy's target/tmp, and each test binary runs the (mutated)
# `my-chrome setup` on it: a mutant of the runtime or the helper checks can
# leave it in a state the next mutants' tests fail on, which would count
# them caught. So cargo is called through a wrapper: each module's baseline
# (the unmutated code) makes the golden afresh and it is kept; before every
# later test run it is put back exactly as kept.
golden=$copy/target/tmp/golden-runtime
kept=$work/golden.tar
wrapper=$work/cargo
real_cargo=$(command -v cargo)
cat >"$wrapper" <<WRAPPER
#!/usr/bin/env bash
set -euo pipefail
if [ "\${1:-}" = test ] && [[ " \$* " != *" --no-run "* ]]; then
  if [ -f "$kept" ]; then
    rm -rf "$golden"
    tar -xpf "$kept" -C "$(dirname "$golden")"
  else
    code=0
    "$real_cargo" "\$@" || code=\$?
    if [ "\$code" -eq 0 ] && [ -d "$golden" ]; then
      # Without its record of the tree (inodes change on the way back):
      # the first check of each run makes it anew.
      tar -cpf "$kept" --exclude="$(basename "$golden")/cli-manifest.txt" \\
        -C "$(dirname "$golden")" "$(basename "$golden")"
    fi
    exit "\$code"
  fi
fi
exec "$real_cargo" "\$@"
WRAPPER
chmod 700 "$wrapper"

start=$(date +%s)
for m in "${modules[@]}"; do
  files=()
  for f in ${FILES[$m]}; do files+=(--file "$f"); done
  # Given to every cargo command (the build as well as the run), so that
  # each mutant builds only the targets its tests need.
  tests=()
  for t in ${TESTS[$m]}; do
    case "$t" in
      --lib) tests+=(--cargo-arg=--lib) ;;
      --test) ;;
      *) tests+=(--cargo-arg=--test="$t") ;;
    esac
  done
  say "$m: ${FILES[$m]} (tests: ${TESTS[$m]})"
  if [ ${#iterate[@]} -eq 0 ]; then
    rm -rf "$work/$m"
  elif [ -f "$work/$m/mutants.out/unviable.txt" ]; then
    # cargo-mutants lists the earlier caught and unviable ones together;
    # which were unviable is kept here, over every iteration.
    touch "$work/$m/unviable.all"
    sort -u "$work/$m/mutants.out/unviable.txt" "$work/$m/unviable.all" >"$work/$m/unviable.new"
    mv "$work/$m/unviable.new" "$work/$m/unviable.all"
  fi
  # --timeout: these tests take seconds; a mutant that loops is stopped.
  # (In place, in the copy: one mutant at a time.)
  code=0
  rm -rf "$golden" "$kept"
  # cargo-mutants itself (as `cargo mutants`, cargo would set CARGO to
  # itself): it calls whatever CARGO names.
  (cd "$copy" && CARGO=$wrapper cargo-mutants mutants --in-place --no-shuffle --timeout 120 \
     --profile mutants --output "$work/$m" "${in_diff[@]}" "${iterate[@]}" "${files[@]}" "${tests[@]}") ||
    code=$?
  # 2: mutants missed, 3: timed out; anything else: the run itself failed
  # (said, and the next module runs).
  case $code in
    0) ;;
    2 | 3) [ "$status" -ne 0 ] || status=$code ;;
    *) say "cargo mutants failed for $m (exit $code): see $work/$m" >&2; status=$code ;;
  esac
  # The copy's sources back as they were when the run began, whatever
  # cargo-mutants left, and newer than any build of a mutant.
  tar -xmf "$pristine" -C "$copy" ${FILES[$m]}
  # Every mutant of the module as it is now: an earlier run's catch
  # counts only while its mutant still exists (lines move). (A diff with
  # no mutant of the module leaves no output folder of cargo-mutants'.)
  mkdir -p "$work/$m"
  (cd "$copy" && cargo-mutants mutants --list "${files[@]}") >"$work/$m/all.txt" 2>/dev/null || true
done
took=$(( $(date +%s) - start ))
fi

python3 - "$work" "$took" "${modules[@]}" <<'EOF'
import json, os, sys
work, took, modules = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
kinds = {"CaughtMutant": "caught", "MissedMutant": "missed", "Unviable": "unviable", "Timeout": "timeout"}
print(f"{'module':15} {'caught':>6} {'missed':>6} {'unviable':>8} {'timeout':>7} {'caught %':>8}")
for m in modules:
    def lines(name):
        f = os.path.join(work, m, name)
        return set(open(f).read().splitlines()) if os.path.exists(f) else set()
    path = os.path.join(work, m, "mutants.out", "outcomes.json")
    n = {k: 0 for k in kinds.values()}
    # (With --iterate and nothing left to run there are no outcomes.)
    if os.path.exists(path):
        for o in json.load(open(path))["outcomes"]:
            if isinstance(o.get("scenario"), dict) and kinds.get(o.get("summary")):
                n[kinds[o["summary"]]] += 1
    # After --iterate: what earlier runs caught or found unviable, of the
    # mutants the module has now.
    earlier = lines("mutants.out/previously_caught.txt")
    now = lines("all.txt")
    if now:
        earlier &= now
    unviable = lines("unviable.all")
    if not os.path.exists(path) and not earlier:
        print(f"{m:15} (no outcomes: see {os.path.join(work, m)})")
        continue
    n["unviable"] += len(earlier & unviable)
    n["caught"] += len(earlier - unviable)
    viable = n["caught"] + n["missed"] + n["timeout"]
    # A mutant whose tests never finish (a loop that no longer ends) is
    # caught too: they fail at the bound, as CI's would (docs/TESTING.md).
    share = f"{100 * (n['caught'] + n['timeout']) / viable:.1f}%" if viable else "-"
    print(f"{m:15} {n['caught']:6} {n['missed']:6} {n['unviable']:8} {n['timeout']:7} {share:>8}")
if took:
    print(f"took {took // 60} min {took % 60} s")
print(f"missed mutants: {work}/<module>/mutants.out/missed.txt")
EOF
exit "$status"
