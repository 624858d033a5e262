#!/usr/bin/env bash
# Installs my-chrome: the release binary to <prefix>/bin (default ~/.local),
# and the skill for each agent named with --agent:
#   claude-code -> ~/.claude/skills/my-chrome
#   codex       -> ~/.agents/skills/my-chrome   (Codex's user-level skills)
# For each agent it also lets that host run this one binary outside its own
# sandbox (scripts/host-config.js: Codex's rules, Claude Code's
# permissions.allow), shows the lines it adds, and changes nothing
# else of the host's configuration.
# It records what it installed in ~/.local/share/my-chrome/installed (and
# the host lines in .../host-config).
# `--uninstall` runs the installed binary's `my-chrome uninstall` (the
# session detached, the runtime and the skill copies removed; the token too
# with --forget-token), then removes the binary. Running either again is
# harmless.
#
# Usage: scripts/install.sh [--prefix DIR] [--agent claude-code|codex]...
#        scripts/install.sh --uninstall [--forget-token]
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$HOME/.local
agents=()
uninstall=false
forget=()
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --agent) agents+=("${2:?--agent needs claude-code or codex}"); shift 2 ;;
    --uninstall) uninstall=true; shift ;;
    --forget-token) forget=(--forget-token); shift ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
record_dir=$HOME/.local/share/my-chrome
record=$record_dir/installed
# The folders install.sh made (they did not exist before): --uninstall
# removes those, when empty, and no others.
created=$record_dir/created
# What host-config.js added to each agent host's configuration.
hosts=$record_dir/host-config
node=${MY_CHROME_NODE:-$(command -v node || true)}
host_config() { # add|remove HOST BINARY
  [ -n "$node" ] || { echo "install.sh: no node on PATH (set MY_CHROME_NODE): the $2 configuration was not changed" >&2; exit 1; }
  "$node" scripts/host-config.js "$1" "$2" "$3" "$hosts"
}

if $uninstall; then
  [ -f "$record" ] || { echo "install.sh: nothing recorded as installed"; exit 0; }
  binary=$(head -n 1 "$record")
  expected=$prefix/bin/my-chrome
  [ -d "$prefix/bin" ] && expected=$(cd "$prefix/bin" && pwd)/my-chrome
  if [ "$binary" != "$expected" ]; then
    echo "install.sh: $record names $binary as the binary it installed, not $expected; nothing was removed." \
      "Run scripts/install.sh --uninstall --prefix DIR with the prefix you installed to" >&2
    exit 1
  fi
  if [ -f "$binary" ] && [ -x "$binary" ]; then
    # It stops here (set -e) if my-chrome refuses: the binary stays to retry with.
    "$binary" uninstall "${forget[@]}"
  else
    echo "install.sh: $binary is gone, so my-chrome's runtime (~/.cache/my-chrome by default) was not removed;" \
      "reinstall (scripts/install.sh) and run scripts/install.sh --uninstall again" >&2
    exit 1
  fi
  # The lines each agent host was given, taken out again.
  if [ -f "$hosts" ]; then
    for host in $(cut -f1 "$hosts"); do host_config remove "$host" "$binary"; done
  fi
  # What my-chrome uninstall leaves of the record: the binary, and skill
  # copies that no longer hold the skill (it said so; they stay).
  while IFS= read -r path; do
    if [ "$path" = "$binary" ]; then
      rm -f -- "$binary"
      echo "removed $binary"
    else
      echo "left $path"
    fi
  done <"$record"
  rm -f "$record"
  # The folders it made, deepest first (a folder after the ones it holds),
  # and only when empty.
  dirs=
  if [ -f "$created" ]; then dirs=$(sort -r "$created"); rm -f "$created"; fi
  rmdir -- "$record_dir" 2>/dev/null || true
  printf '%s\n' "$dirs" | while IFS= read -r dir; do
    [ -z "$dir" ] || rmdir -- "$dir" 2>/dev/null || true
  done
  exit 0
fi

skill_dir() {
  case $1 in
    claude-code) echo "$HOME/.claude/skills/my-chrome" ;;
    codex) echo "$HOME/.agents/skills/my-chrome" ;;
    *) echo "install.sh: unknown agent $1 (claude-code or codex)" >&2; exit 2 ;;
  esac
}
for agent in "${agents[@]}"; do skill_dir "$agent" >/dev/null; done

# Makes each folder of a path that is missing, and records the ones it made.
make_dir() {
  local dir=$1 missing=()
  while [ ! -e "$dir" ]; do missing+=("$dir"); dir=$(dirname "$dir"); done
  mkdir -p "$1"
  mkdir -p "$record_dir"
  for dir in "${missing[@]}"; do
    grep -qxF -- "$dir" "$created" 2>/dev/null || echo "$dir" >>"$created"
  done
}

cargo build --release --quiet
make_dir "$record_dir"
make_dir "$prefix/bin"
install -m 0755 target/release/my-chrome "$prefix/bin/my-chrome"
binary=$(cd "$prefix/bin" && pwd)/my-chrome
touch "$record"
add() { grep -qxF -- "$1" "$record" || echo "$1" >>"$record"; }
add "$binary"
echo "installed $binary"

for agent in "${agents[@]}"; do
  dest=$(skill_dir "$agent")
  rm -rf -- "$dest"
  make_dir "$(dirname "$dest")"
  cp -R skill "$dest"
  # The skill calls the binary by absolute path: record which one.
  printf '%s\n' "$binary" >"$dest/BINARY"
  add "$dest"
  echo "installed the skill for $agent in $dest"
  # Its configuration folder first, recorded if made, so that --uninstall
  # removes it when it is left empty.
  # (An unset or relative CODEX_HOME / CLAUDE_CONFIG_DIR means the default,
  # as in host-config.js.)
  case $agent in
    codex) base=${CODEX_HOME:-}; [ "${base#/}" != "$base" ] || base=$HOME/.codex; conf=$base/rules ;;
    claude-code) base=${CLAUDE_CONFIG_DIR:-}; [ "${base#/}" != "$base" ] || base=$HOME/.claude; conf=$base ;;
  esac
  make_dir "$conf"
  host_config add "$agent" "$binary"
done
echo "next: $binary setup && $binary doctor"
