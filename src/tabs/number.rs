//! Every tab carries a number the daemon gives it (docs/DESIGN.md, "Each
//! tab's number"). The pinned daemon names no tab by anything stable, so
//! following tabs by place and header could read a new tab of the same
//! site in the place of one that closed as that tab. The same `run-code`
//! that keeps the current tab (`stay`) has the daemon number each tab the
//! first time it describes it, from a counter of the session's, and put
//! the number first in the title it lists: `[<mc:7> title](url)`, and
//! `- Page Title: <mc:7> title`. A page writes only what comes after it,
//! so the first mark is the daemon's; a number is never given twice.

/// The statements, run in `stay`'s request with `tab` (the current tab's
/// `Tab`) in scope, that number every tab the daemon describes. Checked
/// before anything is changed (`CHECK`), and done once per daemon.
///
/// The same wrapper bounds a description, in time and in size. The daemon
/// asks each page its title, and a page whose script never yields never
/// answers: that held every tab list, so every command of every agent, for
/// as long as it spun. A tab not described within half a second is
/// described by what the daemon knows without its page (its last title,
/// its address now), as changed; while it stays so, its next description
/// waits only 100 ms on the one still asked while that one has not
/// answered (one at a time per tab; an answer kept would be stale), and
/// is marked changed too (the one left running may record a change that
/// no reply showed). Whether the tab is current is always read in the
/// describing call's own flow: a description still asked was begun in
/// another call's, which has its own current tab (`stay`), and reused as
/// it was it marked a tab current the daemon had not (then a command
/// would skip its selection). A tab that closes while
/// it is described is described so too in a command's reply: the daemon
/// describes every tab at once, and one failed description failed the
/// whole reply of a command that had run (while another agent closed its
/// tab). A tab command's list still fails then, as before: my-chrome asks
/// for it again, and the closed tab is gone from it (a list that showed
/// it made the next selection fail). And a page's title
/// and address are cut to a few thousand characters: a title of megabytes
/// made every tab list larger than my-chrome reads (an attack).
pub const NUMBER: &str = "
  if (!context.myChromeNumbersTabs) {
    const proto = Object.getPrototypeOf(tab);
    const header = proto.headerSnapshot;
    const cut = (text, most) => {
      if (typeof text !== 'string' || text.length <= most) return text;
      const kept = text.slice(0, most);
      return (/[\\uD800-\\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept) + '\\u2026';
    };
    let next = 0;
    proto.headerSnapshot = async function () {
      if (!this.myChromeNumber) this.myChromeNumber = ++next;
      const unsure = this.myChromeUnsure;
      let asked = unsure && this.myChromeAsking;
      if (!asked) {
        const asking = header.call(this);
        const done = () => { if (this.myChromeAsking === asking) this.myChromeAsking = undefined; };
        asking.then(done, done);
        this.myChromeAsking = asked = asking;
      }
      let timer;
      const late = new Promise(done => { timer = setTimeout(done, unsure ? 100 : 500); });
      // A page that closes while it is described fails its description,
      // and with it the whole reply: a command's that ran is described
      // without it; a tab list fails, as before, and is asked again.
      let seen = await Promise.race([asked, late]).catch(error => {
        const tool = this.context.myChromeTool && this.context.myChromeTool();
        if (tool === 'browser_tabs') throw error;
      }).finally(() => clearTimeout(timer));
      if (seen) {
        this.myChromeUnsure = false;
        const current = this.isCurrentTab();
        seen = { ...seen, current, changed: seen.changed || !!unsure || current !== seen.current };
      } else {
        this.myChromeUnsure = true;
        const last = this._lastHeader || { title: '', console: { total: 0, errors: 0, warnings: 0 } };
        seen = { ...last, url: this.page.url(), current: this.isCurrentTab(), crashed: this.crashed, changed: true };
      }
      const title = '<mc:' + this.myChromeNumber + '> ' + cut(seen.title, 1024);
      return { ...seen, title, url: cut(seen.url, 8192) };
    };
    context.myChromeNumbersTabs = true;
  }";

/// The condition, in the same scope, under which `NUMBER` cannot be done.
pub const CHECK: &str = "typeof Object.getPrototypeOf(tab).headerSnapshot !== 'function'";

/// A listed title split into the daemon's number, when it starts with one,
/// and the page's own title.
pub fn split(title: &str) -> (Option<u64>, &str) {
    let Some((digits, rest)) = title
        .strip_prefix("<mc:")
        .and_then(|rest| rest.split_once("> "))
    else {
        return (None, title);
    };
    let canonical = !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit());
    match digits.parse() {
        Ok(number) if canonical => (Some(number), rest),
        _ => (None, title),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_mark_is_the_number() {
        assert_eq!(split("<mc:7> Inbox"), (Some(7), "Inbox"));
        assert_eq!(split("<mc:7> "), (Some(7), ""));
        // The page's own title may hold a mark: it comes after the daemon's.
        assert_eq!(split("<mc:7> <mc:3> x"), (Some(7), "<mc:3> x"));
        assert_eq!(split("Inbox"), (None, "Inbox"));
        for title in [
            "<mc:> x",
            "<mc:07> x",
            "<mc:7>x",
            "<mc:x> y",
            " <mc:7> x",
            "<mc:-1> x",
        ] {
            assert_eq!(split(title), (None, title), "{title}");
        }
        assert_eq!(split("<mc:99999999999999999999> x").0, None);
    }
}
