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
/// The same wrapper bounds a description: the daemon asks each page its
/// title, and a page whose script never yields never answers, which held
/// every tab list, so every command of every agent, for as long as it
/// spun. A tab not described within a second is described by what the
/// daemon knows without its page (its last title, its address now), as
/// changed, and so is it the next time (the description left running may
/// record a change meanwhile that no reply showed).
pub const NUMBER: &str = "
  if (!context.myChromeNumbersTabs) {
    const proto = Object.getPrototypeOf(tab);
    const header = proto.headerSnapshot;
    let next = 0;
    proto.headerSnapshot = async function () {
      if (!this.myChromeNumber) this.myChromeNumber = ++next;
      const unsure = this.myChromeUnsure;
      let timer;
      const late = new Promise(done => { timer = setTimeout(done, 1000); });
      const asked = header.call(this);
      let seen = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
      if (seen) {
        this.myChromeUnsure = false;
        seen = { ...seen, changed: seen.changed || !!unsure };
      } else {
        asked.catch(() => {});
        this.myChromeUnsure = true;
        const last = this._lastHeader || { title: '', console: { total: 0, errors: 0, warnings: 0 } };
        seen = { ...last, url: this.page.url(), current: this.isCurrentTab(), crashed: this.crashed, changed: true };
      }
      return { ...seen, title: '<mc:' + this.myChromeNumber + '> ' + seen.title };
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
