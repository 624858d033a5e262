#!/usr/bin/env bash
# Installs my-chrome: the release binary to <prefix>/bin (default ~/.local),
# and the skill for each agent named with --agent:
#   claude-code -> ~/.claude/skills/my-chrome
#   codex       -> ~/.agents/skills/my-chrome   (Codex's user-level skills)
# It records what it installed in ~/.local/share/my-chrome/installed.
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

if $uninstall; then
  [ -f "$record" ] || { echo "install.sh: nothing recorded as installed"; exit 0; }
  binary=$(head -n 1 "$record")
  case $binary in
    */bin/my-chrome) ;;
    *) echo "install.sh: $record does not start with the binary it installed; nothing was removed" >&2; exit 1 ;;
  esac
  if [ -f "$binary" ] && [ -x "$binary" ]; then
    # It stops here (set -e) if my-chrome refuses: the binary stays to retry with.
    "$binary" uninstall "${forget[@]}"
  else
    echo "install.sh: $binary is gone, so my-chrome's runtime (~/.cache/my-chrome by default) was not removed;" \
      "reinstall (scripts/install.sh) and run scripts/install.sh --uninstall again" >&2
    exit 1
  fi
  # What my-chrome uninstall leaves of the record: the binary, and skill
  # copies that no longer hold the skill (it said so; they stay).
  if [ -f "$record" ]; then
    while IFS= read -r path; do
      if [ "$path" = "$binary" ]; then
        rm -f -- "$binary"
        echo "removed $binary"
      else
        echo "left $path"
      fi
    done <"$record"
    rm -f "$record"
  fi
  rmdir "$record_dir" 2>/dev/null || true
  # Directories we created and left empty.
  for dir in "$HOME/.local/share" "$HOME/.local/bin" "$HOME/.local" "$HOME/.claude/skills" "$HOME/.claude" \
             "$HOME/.agents/skills" "$HOME/.agents" "$prefix/bin" "$prefix" "$(dirname "$binary")"; do
    rmdir "$dir" 2>/dev/null || true
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

cargo build --release --quiet
mkdir -p "$prefix/bin" "$record_dir"
install -m 0755 target/release/my-chrome "$prefix/bin/my-chrome"
binary=$(cd "$prefix/bin" && pwd)/my-chrome
touch "$record"
add() { grep -qxF -- "$1" "$record" || echo "$1" >>"$record"; }
add "$binary"
echo "installed $binary"

for agent in "${agents[@]}"; do
  dest=$(skill_dir "$agent")
  rm -rf -- "$dest"
  mkdir -p "$(dirname "$dest")"
  cp -R skill "$dest"
  # The skill calls the binary by absolute path: record which one.
  printf '%s\n' "$binary" >"$dest/BINARY"
  add "$dest"
  echo "installed the skill for $agent in $dest"
done
echo "next: $binary setup && $binary doctor"
