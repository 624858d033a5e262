#!/usr/bin/env node
// What scripts/install.sh adds to an agent host's own configuration so that
// the host runs this one my-chrome binary outside its sandbox, and takes
// away again with --uninstall. Nothing else of the host's sandbox changes
// (README, "Inside an agent host's sandbox", says why this and not a
// writable runtime with sockets allowed).
//
//   codex:       $CODEX_HOME/rules/my-chrome.rules (default ~/.codex), a file
//                of its own holding one prefix_rule for the binary;
//   claude-code: "Bash(<binary>:*)" in permissions.allow of
//                $CLAUDE_CONFIG_DIR/settings.json (default ~/.claude): the
//                agent runs the binary with the Bash tool's sandbox off,
//                and the rule lets that one binary so without asking.
//
// A file that cannot be read as expected is never rewritten: it says why and
// what to add by hand, and exits 1. Every write goes to a temporary file
// first, then takes the file's place, so no file is ever half-written.
//
// Usage: host-config.js add|remove codex|claude-code BINARY RECORD
//   RECORD: the file that remembers, per host, which file `add` wrote and
//   what it made there (a key, the whole file), so that `remove` takes away
//   exactly that, wherever CODEX_HOME or CLAUDE_CONFIG_DIR point by then.
'use strict';
const fs = require('fs');
const path = require('path');

const [action, host, binary, record] = process.argv.slice(2);
const home = process.env.HOME;

function fail(message) {
  process.stderr.write(`install.sh: ${message}\n`);
  process.exit(1);
}

// What cannot be undone as recorded is left, said, and the uninstall goes on.
function leave(file, message) {
  process.stdout.write(`install.sh: left ${file} as it is: ${message}\n`);
  process.exit(0);
}

// How a file that cannot be read as expected stops this run: `add` fails
// and changes nothing; `remove` forgets its record, leaves the file, and
// the uninstall goes on.
function refuser(file) {
  return action === 'add' ? fail : message => { remember(null); leave(file, message); };
}

if (!['add', 'remove'].includes(action) || !['codex', 'claude-code'].includes(host) || !binary || !record)
  fail('usage: host-config.js add|remove codex|claude-code BINARY RECORD');
if (!path.isAbsolute(binary) || /["\\\n]/.test(binary))
  fail(`${binary}: the binary's path must be absolute, with no quote, backslash or line break`);

function folder(variable, fallback) {
  const given = process.env[variable];
  return given && path.isAbsolute(given) ? given : path.join(home, fallback);
}

// A link (a dotfiles checkout, say) is the user's layout: never replaced
// by a file, nor written through.
function notALink(file, refuse) {
  let stat = null;
  try { stat = fs.lstatSync(file); } catch (e) { if (e.code !== 'ENOENT') throw e; }
  if (stat && !stat.isFile()) refuse(`${file} is a symbolic link or not a plain file; nothing changed`);
}

// The whole file at once (a temporary one renamed over it), with the mode
// the file had.
function writeWhole(file, text) {
  let mode = 0o600;
  try { mode = fs.statSync(file).mode & 0o777; } catch (e) { if (e.code !== 'ENOENT') throw e; }
  const temporary = `${file}.my-chrome-${process.pid}`;
  fs.writeFileSync(temporary, text, { mode, flag: 'wx' });
  fs.chmodSync(temporary, mode);
  fs.renameSync(temporary, file);
}

// The record: one line per host, "host<TAB>what add made" (JSON).
function recorded() {
  let lines = [];
  try { lines = fs.readFileSync(record, 'utf8').split('\n').filter(Boolean); } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  return new Map(lines.map(line => {
    const tab = line.indexOf('\t');
    return [line.slice(0, tab), JSON.parse(line.slice(tab + 1))];
  }));
}

function remember(made) {
  const all = recorded();
  if (made) all.set(host, made); else all.delete(host);
  const text = [...all].map(([h, m]) => `${h}\t${JSON.stringify(m)}\n`).join('');
  if (text) writeWhole(record, text); else fs.rmSync(record, { force: true });
}

function show(file, lines) {
  process.stdout.write(`${action === 'add' ? 'added to' : 'removed from'} ${file}:\n`);
  for (const line of lines) process.stdout.write(`  ${line}\n`);
}

// Codex: a rules file of our own.
function codex() {
  const made = recorded().get(host);
  const dir = action === 'remove' && made && made.file
    ? path.dirname(made.file)
    : path.join(folder('CODEX_HOME', '.codex'), 'rules');
  const file = path.join(dir, 'my-chrome.rules');
  notALink(file, refuser(file));
  const rule = `prefix_rule(pattern = ["${binary}"], decision = "allow", justification = ` +
    '"my-chrome reaches the user\'s browser session through its own runtime and sockets")';
  const text = '# Written by my-chrome\'s scripts/install.sh: Codex runs this one binary ' +
    'outside its sandbox.\n' + `${rule}\n`;
  let found = null;
  try { found = fs.readFileSync(file, 'utf8'); } catch (e) {
    if (e.code !== 'ENOENT') fail(`cannot read ${file}: ${e.message}; nothing changed`);
  }
  if (action === 'add') {
    if (found === text) return process.stdout.write(`${file} already lets Codex run ${binary}\n`);
    if (found !== null)
      fail(`${file} exists and is not the file install.sh writes; nothing changed. ` +
        `Remove it, or make it hold exactly:\n${text}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeWhole(file, text);
    remember({ file });
    return show(file, [rule]);
  }
  if (found === null) return remember(null);
  remember(null);
  if (found !== text) leave(file, 'it is no longer the file install.sh wrote');
  fs.rmSync(file);
  show(file, [rule]);
}

// Claude Code: one permission rule in its user settings, the file otherwise
// as it was. Claude Code runs a command outside its sandbox only when the
// agent asks (`dangerouslyDisableSandbox`) and a rule allows it, or the user
// says yes; it checks each part of a compound command against the rules, so
// this rule lets nothing but the binary out. (`sandbox.excludedCommands`
// would not do: one match anywhere in a compound command unsandboxes all of
// it.)
function claudeCode() {
  const made = recorded().get(host);
  const file = action === 'remove' && made && made.file
    ? made.file
    : path.join(folder('CLAUDE_CONFIG_DIR', '.claude'), 'settings.json');
  const entry = `Bash(${binary}:*)`;
  let text = null;
  try { text = fs.readFileSync(file, 'utf8'); } catch (e) {
    if (e.code !== 'ENOENT') fail(`cannot read ${file}: ${e.message}; nothing changed`);
  }
  const byHand = action === 'add'
    ? `add "${entry}" to the array at "permissions" → "allow" yourself`
    : `remove "${entry}" from "permissions" → "allow" yourself`;
  const refuse = refuser(file);
  notALink(file, message => refuse(`${message}: ${byHand}`));
  let settings = {};
  let indent = 2;
  let newline = '\n';
  if (text !== null) {
    try { settings = JSON.parse(text); } catch (e) {
      refuse(`${file} is not valid JSON (${e.message}); nothing changed: fix it, or ${byHand}`);
    }
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings))
      refuse(`${file} does not hold a JSON object; nothing changed: ${byHand}`);
    // Written back only in the layout it has, so that nothing else moves.
    const layout = [2, 4, '\t'].find(i => [``, '\n'].some(end => JSON.stringify(settings, null, i) + end === text));
    if (layout === undefined)
      refuse(`${file} is laid out in a way install.sh would not keep; nothing changed: ${byHand}`);
    indent = layout;
    newline = text.endsWith('\n') ? '\n' : '';
  }
  const permissions = settings.permissions;
  if (permissions !== undefined &&
      (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions)))
    refuse(`${file}: "permissions" is not an object; nothing changed: ${byHand}`);
  const list = permissions && permissions.allow;
  if (list !== undefined && !Array.isArray(list))
    refuse(`${file}: "permissions" → "allow" is not an array; nothing changed: ${byHand}`);
  const write = () => {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeWhole(file, JSON.stringify(settings, null, indent) + newline);
  };
  if (action === 'add') {
    if (list && list.includes(entry))
      return process.stdout.write(`${file} already lets Claude Code run ${binary} unsandboxed\n`);
    const making = {
      file, whole: text === null, permissions: permissions === undefined, list: list === undefined,
    };
    if (!settings.permissions) settings.permissions = {};
    if (!settings.permissions.allow) settings.permissions.allow = [];
    settings.permissions.allow.push(entry);
    write();
    remember(making);
    return show(file, [`"permissions": { "allow": [ …, "${entry}" ] }`]);
  }
  const was = made || {};
  if (!list || !list.includes(entry)) return remember(null);
  settings.permissions.allow = list.filter(e => e !== entry);
  if (was.list && settings.permissions.allow.length === 0) delete settings.permissions.allow;
  if (was.permissions && Object.keys(settings.permissions).length === 0) delete settings.permissions;
  if (was.whole && Object.keys(settings).length === 0) fs.rmSync(file); else write();
  remember(null);
  show(file, [`"${entry}" in "permissions" → "allow"`]);
}

(host === 'codex' ? codex : claudeCode)();
