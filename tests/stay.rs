//! The request that keeps each call's tab (`src/tabs/stay.rs`), run by a
//! real Node against a context shaped like the pinned daemon's (the
//! methods it wraps, each doing what the daemon's does to the current
//! tab), each call in an async flow of its own as the daemon serves
//! requests. The daemon runs its handlers of page events in whichever
//! call's flow the event came in: a run of six agents once saw an `eval`'s
//! reply describe another agent's tab, opened meanwhile. These cases put
//! that in order, every time.

mod common;

use std::process::Command;

use common::fake_npm::system_node;

/// A context with the daemon's names: a closed tab's handler makes the
/// next one current, a tab command makes its tab current, the current
/// tab is the context's, and `Tab.headerSnapshot` describes a tab.
const DAEMON: &str = r#"
const { AsyncLocalStorage } = require('node:async_hooks');
// While set, a page gives its title only once it resolves (a page that
// does not yield).
let gate = null;
class Tab {
  constructor(context, name) { this.context = context; this.name = name; this.page = { url: () => name }; }
  async headerSnapshot() {
    if (gate) await gate;
    // As Playwright's page.title() on a page that closed meanwhile.
    if (this.closed) throw new Error('Target page, context or browser has been closed');
    return { title: this.name, url: this.name, current: this.isCurrentTab(), crashed: false, changed: false,
             console: { total: 0, errors: 0, warnings: 0 } };
  }
  isCurrentTab() { return this === this.context.currentTab(); }
}
class Context {
  constructor() { this._tabs = []; this._currentTab = undefined; }
  open(name) { const tab = new Tab(this, name); this._tabs.push(tab); return tab; }
  _onPageClosed(tab) {
    this._tabs = this._tabs.filter(t => t !== tab);
    if (this._currentTab === tab) this._setCurrentTab(this._tabs[0]);
  }
  _setCurrentTab(tab) { this._currentTab = tab; }
  setRunningTool(name) { this._running = name; }
  currentTab() { return this._currentTab; }
  currentTabOrDie() { return this._currentTab; }
}
const tabSymbol = Symbol('tabSymbol');
const context = new Context();
const [a, b] = [context.open('a'), context.open('b')];
context._setCurrentTab(a);
const page = { [tabSymbol]: a };
// One call, in a flow of its own (as each request the daemon reads), its
// tool `name` running `body`; what its reply would describe.
const call = (name, body) => new Promise(done => setImmediate(async () => {
  context.setRunningTool(name);
  await body();
  const described = context.currentTab();
  context.setRunningTool(undefined);
  done(described && described.name);
}));
const pause = ms => new Promise(done => setTimeout(done, ms));
"#;

/// The pinned daemon's `run-code` of our request, then `cases`; what
/// Node prints.
fn run(cases: &str) -> String {
    let [_, code] = my_chrome::tabs::stay::request_words();
    let script = format!(
        "{DAEMON}\n(async () => {{\n  const kept = await ({code})(page);\n  console.log('request:', kept);\n{cases}\n}})();\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stay.js");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(system_node()).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// An `eval` runs on tab a; meanwhile a tab opens and the daemon's
/// handler makes it current in the eval's own flow (as it did for the six
/// agents). The eval's reply is still of tab a.
#[test]
fn a_page_event_in_a_calls_flow_does_not_move_its_tab() {
    let out = run(r#"
  const described = await call('browser_evaluate', async () => {
    await pause(5);
    context._setCurrentTab(context.open('c'));
    await pause(5);
  });
  console.log('eval describes:', described);
"#);
    assert!(out.contains("request: kept"), "{out}");
    assert!(out.contains("eval describes: a\n"), "{out}");
}

/// A tab command's own call moves its tab: the new tab it opened, or the
/// one it selected, is what its reply describes.
#[test]
fn a_tab_commands_call_takes_the_tab_it_makes_current() {
    let out = run(r#"
  const opened = await call('browser_tabs', async () => {
    await pause(5);
    context._setCurrentTab(context.open('new'));
  });
  console.log('new describes:', opened);
  const selected = await call('browser_tabs', async () => context._setCurrentTab(b));
  console.log('select describes:', selected);
"#);
    assert!(out.contains("new describes: new\n"), "{out}");
    assert!(out.contains("select describes: b\n"), "{out}");
}

/// The current tab closes during a tab command's call: the daemon's
/// handler would make the next tab current, and the call with it. The
/// closed tab stays current, and the call's tab is still the closed one:
/// no command goes to its neighbour, another agent's.
#[test]
fn a_closed_current_tab_moves_no_call_to_its_neighbour() {
    let out = run(r#"
  const described = await call('browser_tabs', async () => {
    await pause(5);
    context._onPageClosed(a);
  });
  console.log('call describes:', described);
  console.log('current:', context._currentTab.name);
"#);
    assert!(out.contains("call describes: a\n"), "{out}");
    assert!(out.contains("current: a\n"), "{out}");
}

/// Two calls side by side (one stepped aside): each describes the tab
/// current when it started, whatever the other made current meanwhile.
#[test]
fn calls_side_by_side_each_describe_their_own_tab() {
    let out = run(r#"
  const slow = call('browser_evaluate', () => pause(30));
  await pause(5);
  const other = call('browser_tabs', async () => context._setCurrentTab(b));
  const [first, second] = await Promise.all([slow, other]);
  console.log('slow describes:', first, 'other describes:', second);
  console.log('outside a call:', context.currentTab().name);
"#);
    assert!(
        out.contains("slow describes: a other describes: b\n"),
        "{out}"
    );
    assert!(out.contains("outside a call: b\n"), "{out}");
}

/// Call A (its tab a) asks for tab b's description, which does not come:
/// after half a second b is described without its page, and the question
/// stays out. Call B makes b current and asks while it is still out; it
/// is answered then, and B gets that answer: b is current for B. Before,
/// B read the answer as A's flow saw it (not current), and the same reuse
/// could mark a tab current that the daemon had not made current: a
/// command would then skip its selection.
#[test]
fn a_description_asked_in_another_call_says_current_as_this_call_sees_it() {
    let out = run(r#"
  let release;
  gate = new Promise(done => { release = done; });
  const seen = {};
  let end;
  const first = call('browser_evaluate', async () => {
    seen.first = (await b.headerSnapshot()).current;
    // The question A left out is answered once B asks too, in A's flow.
    while (!seen.asked) await pause(1);
    release();
    await new Promise(done => { end = done; });
  });
  while (seen.first === undefined) await pause(10);
  const second = call('browser_tabs', async () => {
    context._setCurrentTab(b);
    const asked = b.headerSnapshot();
    seen.asked = true;
    seen.second = (await asked).current;
  });
  await second;
  end();
  await first;
  console.log('first:', seen.first, 'second:', seen.second);
"#);
    assert!(out.contains("first: false second: true\n"), "{out}");
}

/// Another agent's tab closes while a call describes every tab (the
/// reply of a command that stepped aside, built as the next agent closes
/// its tab): the daemon's own description of it fails, and the daemon's
/// `Promise.all` failed the whole reply of a command that had run ("Target
/// page, context or browser has been closed", the six-agent test). The
/// closed tab is described by what the daemon knows without its page, as
/// changed (no proof), and the reply is built. A tab command's list fails
/// as before (my-chrome asks again, and the tab is gone from the list):
/// listed, a tab already closed failed the next selection.
#[test]
fn a_tab_that_closes_while_it_is_described_fails_no_reply() {
    let out = run(r#"
  await call('browser_evaluate', async () => {
    b.closed = true;
    const all = await Promise.all(context._tabs.map(tab => tab.headerSnapshot()));
    console.log('described:', all.map(h => h.url + ' changed ' + h.changed).join(', '));
  });
  await call('browser_tabs', async () => {
    const all = await Promise.all(context._tabs.map(tab => tab.headerSnapshot()))
      .then(() => 'listed', error => error.message);
    console.log('list:', all);
  });
  b.closed = false;
  const again = await b.headerSnapshot();
  console.log('again:', again.url, again.title);
"#);
    assert!(
        out.contains("described: a changed false, b changed true\n"),
        "{out}"
    );
    assert!(
        out.contains("list: Target page, context or browser has been closed\n"),
        "{out}"
    );
    // Once the page answers, it is asked again (nothing of the failure kept).
    assert!(out.contains("again: b <mc:2> b\n"), "{out}");
}
