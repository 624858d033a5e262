//! The daemon's current tab stays where a request put it (docs/DESIGN.md,
//! "The current tab stays"). The pinned daemon runs every page command on
//! its one current tab, and when that tab closes it makes the next one
//! current by itself. A page may close its own tab at any moment, so
//! between an agent's selection of its tab and its command, the command
//! would go to whichever tab came after it: another agent's. No request
//! names its tab, so the rule is changed in the daemon instead, once per
//! session, through the pinned CLI's own `run-code`: a current tab that
//! closes stays current, closed, and any command sent to it fails. Only
//! `tab-select` and `tab-new` make a tab current then.

/// Run in the daemon with the current tab's page: its `Tab` (found by the
/// daemon's `tabSymbol`) leads to the session's context, whose handler of
/// a closed page is wrapped. Answers `"kept"` (also when already done),
/// or `"unknown"` when the daemon is not the one this was written for.
const KEEP: &str = "async page => {
  const mark = Object.getOwnPropertySymbols(page).find(s => s.description === 'tabSymbol');
  const context = mark && page[mark] && page[mark].context;
  if (!context || typeof context._onPageClosed !== 'function' || !('_currentTab' in context))
    return 'unknown';
  if (!context.myChromeKeepsCurrent) {
    const closed = context._onPageClosed;
    context._onPageClosed = function (tab) {
      const current = this._currentTab;
      closed.call(this, tab);
      if (current === tab) this._currentTab = tab;
    };
    context.myChromeKeepsCurrent = true;
  }
  return 'kept';
}";

/// The words of the request that keeps the current tab.
pub fn request_words() -> [String; 2] {
    ["run-code".into(), KEEP.into()]
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
