#!/usr/bin/env bash
# Print the pinned CLI's command table as my-chrome embeds it
# (skill/cli/commands.txt), from an installed copy's own help.json:
#   scripts/cli-commands.sh INSTALL_DIR [PREVIOUS_HELP_JSON]
# INSTALL_DIR holds node_modules; PREVIOUS_HELP_JSON is the help.json of the
# pin being replaced (scripts/pin-cli.sh passes skill/cli/help.json).
#
# One line per documented command (those its --help lists), in that order;
# after the name, what of it names a file: `--flag` for an option, a number
# for a positional argument (0 = the first), `N...` for a variadic argument
# (every word from the Nth on).
#
# It fails closed: it stops (exit 3, nothing printed) rather than print a
# table that checks less, when
#   - help.json has a shape it does not know (a key, an option kind, a usage
#     line it cannot read, a variadic argument not marked as one, an option
#     or argument its help does not describe);
#   - an option or argument is undecided: which ones name a file is decided
#     by hand in skill/cli/file-args.txt, and every option or argument whose
#     description speaks of a file, path, folder or directory, or that is new
#     since PREVIOUS_HELP_JSON, must have a line there;
#   - a line of skill/cli/file-args.txt names nothing in this CLI.
# scripts/pin-cli.sh writes the file; a test compares it with the installed CLI.
set -euo pipefail
install=$(cd "${1:?usage: scripts/cli-commands.sh INSTALL_DIR [PREVIOUS_HELP_JSON]}" && pwd)
previous=${2:-}
decisions=$(cd "$(dirname "$0")/.." && pwd)/skill/cli/file-args.txt
help=$install/node_modules/playwright-core/lib/tools/cli-client/help.json
package=$install/node_modules/@playwright/cli/package.json
[ -f "$help" ] && [ -f "$package" ] || { echo "cli-commands: no pinned CLI in $install" >&2; exit 2; }
[ -z "$previous" ] || [ -f "$previous" ] || { echo "cli-commands: no previous help.json at $previous" >&2; exit 2; }
node - "$help" "$package" "$decisions" "$previous" <<'JS'
const fs = require('fs');
const [helpPath, packagePath, decisionsPath, previousPath] = process.argv.slice(2);
const help = JSON.parse(fs.readFileSync(helpPath, 'utf8'));
const version = JSON.parse(fs.readFileSync(packagePath, 'utf8')).version;
const previous = previousPath ? JSON.parse(fs.readFileSync(previousPath, 'utf8')) : null;
const problems = [];
const stop = () => {
  if (!problems.length)
    return;
  console.error(`cli-commands: @playwright/cli ${version} cannot be tabled safely; nothing was written:`);
  for (const p of problems)
    console.error(`  - ${p}`);
  process.exit(3);
};

// The shape this script understands, and nothing else.
const sameKeys = (object, allowed) => Object.keys(object).filter(k => !allowed.includes(k));
for (const k of sameKeys(help, ['global', 'commands', 'booleanOptions']))
  problems.push(`help.json has an unknown key "${k}"`);
const escape = s => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
// The description of `--name`, `<name>` or `[name]` (`<name...>` for a
// variadic one) in a command's help, or null when the help has no line for it.
const described = (text, pattern) => {
  const line = text.split('\n').find(l => pattern.test(l));
  return line === undefined ? null : line.replace(pattern, '');
};
const items = {}; // "command --flag" / "command <arg>" -> { description, file slot }
for (const [name, command] of Object.entries(help.commands || {})) {
  for (const k of sameKeys(command, ['help', 'flags', 'args', 'raw', 'variadicArg']))
    problems.push(`${name}: unknown key "${k}"`);
  for (const k of ['raw', 'variadicArg'])
    if (k in command && typeof command[k] !== 'boolean')
      problems.push(`${name}: "${k}" is not a boolean`);
  const text = String(command.help || '');
  const args = command.args || [];
  const variadic = command.variadicArg === true;
  // The usage line: `playwright-cli NAME <a> [b] <c...>`.
  const usage = text.split('\n')[0].trim().split(/\s+/);
  if (usage[0] !== 'playwright-cli' || usage[1] !== name) {
    problems.push(`${name}: a usage line that does not start "playwright-cli ${name}"`);
    continue;
  }
  const tokens = usage.slice(2).map(t => t.match(/^([<[])([A-Za-z][A-Za-z0-9-]*)(\.\.\.)?([>\]])$/));
  tokens.forEach((t, i) => {
    if (!t || (t[1] === '<') !== (t[4] === '>'))
      problems.push(`${name}: usage word "${usage[i + 2]}" is not <arg>, [arg] or <args...>`);
    else if (t[3] && (i !== tokens.length - 1 || !variadic))
      problems.push(`${name}: "${usage[i + 2]}" is variadic, but not the last word or not marked variadicArg`);
  });
  if (variadic && !(tokens.length && tokens[tokens.length - 1] && tokens[tokens.length - 1][3]))
    problems.push(`${name}: marked variadicArg, but its last usage word is not <args...>`);
  const named = tokens.map(t => t && t[2]);
  if (JSON.stringify(named) !== JSON.stringify(args))
    problems.push(`${name}: its usage names ${JSON.stringify(named)}, its args are ${JSON.stringify(args)}`);
  for (const [flag, kind] of Object.entries(command.flags || {})) {
    if (!['string', 'boolean'].includes(kind)) {
      problems.push(`${name} --${flag}: an option of kind "${kind}"`);
      continue;
    }
    const description = described(text, new RegExp(`^\\s+--${escape(flag)}\\s+`));
    if (description === null)
      problems.push(`${name} --${flag}: its help does not describe it`);
    else if (kind === 'string')
      items[`${name} --${flag}`] = { description, slot: `--${flag}`, name };
  }
  args.forEach((arg, i) => {
    const last = variadic && i === args.length - 1;
    const description = described(text, new RegExp(`^\\s+[<[]${escape(arg)}${last ? '\\.\\.\\.' : ''}[>\\]]\\s+`));
    if (description === null)
      problems.push(`${name} <${arg}>: its help does not describe it`);
    else
      items[`${name} <${arg}>`] = { description, slot: last ? `${i}...` : String(i), name };
  });
}
const documented = [...String(help.global || '').matchAll(/^  ([a-z][a-z0-9-]*)(?= )/gm)].map(m => m[1]);
for (const name of documented)
  if (!help.commands[name])
    problems.push(`--help lists ${name}, which has no entry in the command table`);
stop();

// Which of them name a file: decided by hand.
const decided = {};
fs.readFileSync(decisionsPath, 'utf8').split('\n').forEach((line, at) => {
  if (!line.trim() || line.startsWith('#'))
    return;
  const m = line.match(/^(\S+) (--[a-z0-9-]+|<[A-Za-z0-9-]+>) (file|text)  \S.*$/);
  if (!m)
    problems.push(`file-args.txt:${at + 1}: not "COMMAND --option|<argument> file|text  why"`);
  else if (!items[`${m[1]} ${m[2]}`])
    problems.push(`file-args.txt:${at + 1}: ${m[1]} ${m[2]} names nothing in this CLI; remove the line`);
  else
    decided[`${m[1]} ${m[2]}`] = m[3] === 'file';
});
const before = key => {
  if (!previous)
    return true;
  const [name, item] = key.split(' ');
  const command = previous.commands[name];
  if (!command)
    return false;
  return item.startsWith('--') ? item.slice(2) in (command.flags || {}) : (command.args || []).includes(item.slice(1, -1));
};
const files = {};
for (const [key, { description, slot, name }] of Object.entries(items)) {
  if (!(key in decided)) {
    if (/file|path|folder|director/i.test(description))
      problems.push(`undecided: ${key} ("${description.trim()}") speaks of files; decide it in skill/cli/file-args.txt`);
    else if (!before(key))
      problems.push(`undecided: ${key} is new since the previous pin; decide it in skill/cli/file-args.txt`);
    continue;
  }
  if (decided[key])
    (files[name] = files[name] || []).push(slot);
}
stop();

console.log(`# The documented commands of @playwright/cli ${version} and what of each names a file`);
console.log('# (--flag: an option; N: the Nth positional argument, from 0; N...: every one from the');
console.log('# Nth on). Generated by scripts/cli-commands.sh from the pinned package\'s help.json and');
console.log('# skill/cli/file-args.txt: do not edit.');
for (const name of documented) {
  const slots = files[name] || [];
  const flags = slots.filter(s => s.startsWith('--'));
  const args = slots.filter(s => !s.startsWith('--'));
  console.log([name, ...flags, ...args].join(' '));
}
JS
