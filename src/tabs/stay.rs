//! The daemon's current tab stays where a request put it (docs/DESIGN.md,
//! "The current tab stays"). The pinned daemon runs every page command on
//! its one current tab, and when that tab closes it makes the next one
//! current by itself. A page may close its own tab at any moment, so
//! between an agent's selection of its tab and its command, the command
//! would go to whichever tab came after it: another agent's. No request
//! names its tab, so the rule is changed in the daemon instead, once per
//! session, through the pinned CLI's own `run-code`: a current tab that
//! closes stays current, closed, and any command sent to it fails. Only
//! `tab-select` and `tab-new` make a tab current then. The same request
//! makes each reply of its own tab: the daemon builds a reply's snapshot,
//! console lines and page section when its tool ends, from the tab
//! current then, which for a command past its bound is another agent's.
//! And it numbers the tabs (`number`).

use super::number;

/// Run in the daemon with the current tab's page: its `Tab` (found by the
/// daemon's `tabSymbol`) leads to the session's context, whose handler of
/// a closed page is wrapped, and whose current tab each tool call sees as
/// the one current when the call started (or the one it made current
/// itself), held in Node's `AsyncLocalStorage` for that call: a reply is
/// built when its tool ends, from "the current tab", which another
/// agent's command may have moved meanwhile (a command past its bound).
/// A call's tab is never unset by the call (a crashed tab's reset, then a
/// page the browser opens outside the call): its reply is then of the
/// crashed tab, never of the tab current meanwhile. Only a tab command's
/// own call (`browser_tabs`: new, select) moves its tab, and never through
/// a closed tab's neighbour: the daemon's handlers of page events may run
/// in any call's flow (an attack-free run of six agents saw an `eval`'s
/// reply describe another agent's tab, opened meanwhile). The same request has
/// the daemon number its tabs (`number`). Answers `"kept"` (also when
/// already done), or `"unknown"` when the daemon is not the one this was
/// written for (then it changed nothing).
const HEAD: &str = "async page => {
  const mark = Object.getOwnPropertySymbols(page).find(s => s.description === 'tabSymbol');
  const tab = mark && page[mark];
  const context = tab && tab.context;
  const wrapped = ['_onPageClosed', '_setCurrentTab', 'setRunningTool', 'currentTab', 'currentTabOrDie'];
  if (!context || !('_currentTab' in context) || wrapped.some(f => typeof context[f] !== 'function'))
    return 'unknown';
  if (";

/// After `number::CHECK`: the rule itself.
const KEEP: &str = ")
    return 'unknown';
  if (!context.myChromeKeepsCurrent) {
    const closed = context._onPageClosed;
    context._onPageClosed = function (tab) {
      const current = this._currentTab;
      this.myChromeClosing = true;
      try {
        closed.call(this, tab);
      } finally {
        this.myChromeClosing = false;
      }
      if (current === tab) this._currentTab = tab;
    };
    context.myChromeKeepsCurrent = true;
  }
  if (!context.myChromePinsReplies) {
    const node = page.constructor.constructor('return process')();
    const hooks = typeof node.getBuiltinModule === 'function'
      ? node.getBuiltinModule('node:async_hooks')
      : node.mainModule && node.mainModule.require('node:async_hooks');
    if (!hooks || typeof hooks.AsyncLocalStorage !== 'function')
      return 'unknown';
    const call = new hooks.AsyncLocalStorage();
    const running = context.setRunningTool;
    context.setRunningTool = function (name) {
      if (name) call.enterWith({ tab: this._currentTab, name });
      else if (call.getStore()) call.getStore().tab = undefined;
      return running.call(this, name);
    };
    const select = context._setCurrentTab;
    context._setCurrentTab = function (tab) {
      const own = call.getStore();
      if (own && own.tab && tab && own.name === 'browser_tabs' && !this.myChromeClosing)
        own.tab = tab;
      return select.call(this, tab);
    };
    const current = context.currentTab;
    context.currentTab = function () {
      const own = call.getStore();
      return own && own.tab ? own.tab : current.call(this);
    };
    context.currentTabOrDie = function () {
      const tab = this.currentTab();
      if (!tab) throw new Error('No open pages available.');
      return tab;
    };
    // The tool of the call in whose flow it is asked (`number`).
    context.myChromeTool = () => call.getStore() && call.getStore().name;
    context.myChromePinsReplies = true;
  }
";

/// After `number::NUMBER`.
const TAIL: &str = "
  return 'kept';
}";

/// The words of the request that keeps the current tab.
pub fn request_words() -> [String; 2] {
    let code = [HEAD, number::CHECK, KEEP, number::NUMBER, TAIL].concat();
    ["run-code".into(), code]
}

/// Whether the reply to it says the rule is in place: its result, and
/// nothing a page could have written, is the one word.
pub fn kept(text: &str) -> bool {
    text.starts_with("### Result\n\"kept\"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_one_word_first_counts() {
        assert!(kept(
            "### Result\n\"kept\"\n### Ran Playwright code\n```js\nx\n```"
        ));
        assert!(!kept("### Result\n\"unknown\"\n"));
        assert!(!kept("### Error\nError: x\n### Result\n\"kept\"\n"));
        assert!(!kept("### Result\n\"kept\" and more\n"));
        assert!(!kept(""));
    }

    #[test]
    fn the_request_is_the_pinned_run_code() {
        let [name, code] = request_words();
        assert_eq!(name, "run-code");
        assert!(code.starts_with("async page =>"), "{code}");
    }
}
