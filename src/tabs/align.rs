//! Which tabs the daemon lists now are the ones my-chrome knew. The daemon
//! names no tab by anything stable: its list is `- i: [title](url)` in
//! the order the tabs appeared, a closed tab leaves it (later ones move up)
//! and a new one is appended. So the tabs seen now are some of the known
//! ones, in their order, followed by new ones; which, is read from their
//! headers. A known tab is *kept* when it shows the same header, or an
//! address on the same site (a page moves within its site between
//! commands), or it is the tab the command acted on; it may also have
//! *moved* to another site (a page script's or the user's doing), which
//! explains its place in the list no better than a close and a new tab
//! would: a moved tab counts for no kept one. Of the readings that fit,
//! the ones that keep the most tabs, the ones that show the most exactly
//! as they were, and the ones that leave the most at the address they were
//! at are all taken; a seen tab they do not agree on is *in doubt* with
//! every tab it may be, and the caller fails closed: no tab keeps an id or
//! an owner it may not have. (A page that closes its own tab behind a
//! popup looking like the tab after it makes the reading in which the
//! tabs shifted keep more tabs, and can make it show as many exactly, but
//! not leave more where they were.) Pure: no I/O.

/// One tab as the daemon listed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// `[title](url)` exactly as listed, without the daemon's number.
    pub header: String,
    pub current: bool,
    /// The number the daemon gave the tab (`number`), when it lists one.
    pub number: Option<u64>,
}

/// What one seen tab is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Certainly the known tab `known` (by index); `moved`: it shows
    /// another site now, not by the command's doing.
    Kept { known: usize, moved: bool },
    /// Any of `candidates` (known indexes, ascending), or, `maybe_new`, a
    /// tab that is new; `moved`: as one of them, it shows another site.
    InDoubt {
        candidates: Vec<usize>,
        maybe_new: bool,
        moved: bool,
    },
    /// A tab that appeared.
    New,
}

impl Match {
    /// The known tabs it is, or may be.
    pub fn known(&self) -> Vec<usize> {
        match self {
            Match::Kept { known, .. } => vec![*known],
            Match::InDoubt { candidates, .. } => candidates.clone(),
            Match::New => Vec::new(),
        }
    }
}

/// How the known tabs may match the seen ones.
pub struct Rules<'a> {
    /// Headers of the known tabs, in the daemon's order.
    pub known: &'a [&'a str],
    /// The daemon's numbers for them (`number`), where known.
    pub numbers: &'a [Option<u64>],
    /// The known tab that was current, if any, when no request since may
    /// have moved it: if it is still there, it is the one listed as
    /// current (the daemon's current tab stays the same object, closed or
    /// not, until a request moves it: `tabs::stay`). That no other tab is
    /// listed as current then is not relied on: a session a release
    /// before this one started lets a closed current tab's neighbour be.
    pub current: Option<usize>,
    /// A known tab whose page the command just acted on: it may show
    /// anything now.
    pub acted_on: Option<usize>,
    /// Known tabs a command still runs on (stepped aside, or past its
    /// bound): each may show anything now too.
    pub busy: &'a [usize],
}

/// What a known tab matched to a seen one is worth.
#[derive(Clone, Copy)]
struct Worth {
    /// It is the same tab by the rules (same page, site, or acted on).
    kept: bool,
    /// It shows the same address (its title may have changed).
    address: bool,
    /// It shows the same header.
    exact: bool,
}

impl Rules<'_> {
    /// Whether a command acted on, or still acts on, known tab `i`.
    fn acted(&self, i: usize) -> bool {
        self.acted_on == Some(i) || self.busy.contains(&i)
    }

    /// What known tab `i` is worth as seen tab `j`, if it can be it.
    fn worth(&self, i: usize, j: usize, seen: &[Seen]) -> Option<Worth> {
        if self.current == Some(i) && !seen[j].current {
            return None;
        }
        let (known, header) = (self.known[i], seen[j].header.as_str());
        Some(Worth {
            kept: self.acted(i) || same_page(known, header),
            address: known == header
                || matches!((address(known), address(header)), (Some(a), Some(b)) if a == b),
            exact: known == header,
        })
    }

    /// Whether known tab `i` as seen tab `j` moved to another site.
    pub fn moved(&self, i: usize, j: usize, seen: &[Seen]) -> bool {
        self.worth(i, j, seen).is_some_and(|w| !w.kept)
    }
}

/// A reading's worth by one measure, compared in order.
type Value = (usize, usize);

/// Which way a reading is judged.
#[derive(Clone, Copy, PartialEq)]
enum Measure {
    /// The most tabs kept, then the most shown exactly as they were.
    Kept,
    /// The most shown exactly as they were, then the most kept.
    Exact,
    /// The most at the address they were at, then the most shown exactly:
    /// a page that closed itself behind a popup can make the reading in
    /// which the tabs after it shifted keep more, and show as many
    /// exactly (a popup showing exactly what another tab shows, a tab
    /// whose title changes as it runs), but not leave more tabs where they
    /// were. It only adds to what a tab may be (a trailing tab that may be
    /// new is the other measures' to say).
    AtAddress,
}

impl Measure {
    fn of(self, w: Worth) -> Value {
        let [kept, address, exact] = [w.kept, w.address, w.exact].map(usize::from);
        match self {
            Measure::Kept => (kept, exact),
            Measure::Exact => (exact, kept),
            Measure::AtAddress => (address, exact),
        }
    }
}

/// What every seen tab is: by the daemon's numbers when every tab has
/// one, else read from places and headers (see the module's comment).
pub fn align(rules: &Rules, seen: &[Seen]) -> Vec<Match> {
    match by_number(rules, seen) {
        Some(matches) => matches,
        None => by_header(rules, seen),
    }
}

/// Every seen tab by its number, when every known and seen tab has one
/// and no number is listed twice: the known tab of that number (kept, or
/// moved to another site by its page or the user), or new. Certain: no
/// tab is in doubt.
fn by_number(rules: &Rules, seen: &[Seen]) -> Option<Vec<Match>> {
    let known: Vec<u64> = rules.numbers.iter().copied().collect::<Option<_>>()?;
    let now: Vec<u64> = seen.iter().map(|s| s.number).collect::<Option<_>>()?;
    let distinct = |numbers: &[u64]| {
        let mut sorted = numbers.to_vec();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    };
    if known.len() != rules.known.len() || !distinct(&known) || !distinct(&now) {
        return None;
    }
    let matches = now
        .iter()
        .enumerate()
        .map(|(j, number)| match known.iter().position(|k| k == number) {
            Some(i) => Match::Kept {
                known: i,
                moved: !rules.acted(i) && !same_page(rules.known[i], &seen[j].header),
            },
            None => Match::New,
        })
        .collect();
    Some(matches)
}

/// What every seen tab is, read from places and headers alone.
fn by_header(rules: &Rules, seen: &[Seen]) -> Vec<Match> {
    let n = rules.known.len();
    // For each seen tab: the known tabs it is in some best reading, and
    // whether some best reading has it new.
    let mut candidates: Vec<Vec<usize>> = vec![Vec::new(); seen.len()];
    let mut new = vec![false; seen.len()];
    for measure in [Measure::Kept, Measure::Exact, Measure::AtAddress] {
        let readings: Vec<Reading> = (0..=n.min(seen.len()))
            .filter_map(|kept| reading(rules, seen, kept, measure))
            .collect();
        let best = readings
            .iter()
            .map(|r| r.value)
            .max()
            .expect("keeping none fits");
        for reading in readings.iter().filter(|r| r.value == best) {
            for (j, found) in candidates.iter_mut().enumerate() {
                match reading.candidates.get(j) {
                    Some(these) => found.extend(these),
                    None if measure != Measure::AtAddress => new[j] = true,
                    None => {}
                }
            }
        }
    }
    let mut matches = Vec::with_capacity(seen.len());
    for (j, mut these) in candidates.into_iter().enumerate() {
        these.sort_unstable();
        these.dedup();
        let moved = these.iter().any(|&i| rules.moved(i, j, seen));
        matches.push(match (these.as_slice(), new[j]) {
            ([], _) => Match::New,
            (&[only], false) => Match::Kept { known: only, moved },
            _ => Match::InDoubt {
                candidates: these,
                maybe_new: new[j],
                moved,
            },
        });
    }
    // One known tab that two seen tabs may be is certain for neither.
    let shared: Vec<usize> = matches.iter().flat_map(Match::known).collect();
    for m in matches.iter_mut() {
        if let Match::Kept { known, moved } = *m
            && shared.iter().filter(|&&i| i == known).count() > 1
        {
            *m = Match::InDoubt {
                candidates: vec![known],
                maybe_new: false,
                moved,
            };
        }
    }
    matches
}

/// The best readings that keep the first `kept` seen tabs as known ones.
struct Reading {
    /// Their worth, by the measure asked for.
    value: Value,
    /// For each kept seen tab, the known tabs it is in some best reading.
    candidates: Vec<Vec<usize>>,
}

/// The best readings (by `measure`) in which the first `kept` seen tabs
/// are known tabs, in their order, if any fits.
fn reading(rules: &Rules, seen: &[Seen], kept: usize, measure: Measure) -> Option<Reading> {
    let n = rules.known.len();
    let add = |a: Value, b: Value| (a.0 + b.0, a.1 + b.1);
    let worth = |i: usize, j: usize| rules.worth(i, j, seen).map(|w| measure.of(w));
    // before[i][j]: the best worth of known[..i] holding seen[..j].
    let mut before: Vec<Vec<Option<Value>>> = vec![vec![None; kept + 1]; n + 1];
    for row in before.iter_mut() {
        row[0] = Some((0, 0));
    }
    for i in 1..=n {
        for j in 1..=kept {
            let take = before[i - 1][j - 1]
                .zip(worth(i - 1, j - 1))
                .map(|(a, b)| add(a, b));
            before[i][j] = before[i - 1][j].max(take);
        }
    }
    let best = before[n][kept]?;
    // after[i][j]: the best worth of known[i..] holding seen[j..kept].
    let mut after: Vec<Vec<Option<Value>>> = vec![vec![None; kept + 1]; n + 1];
    for row in after.iter_mut() {
        row[kept] = Some((0, 0));
    }
    for i in (0..n).rev() {
        for j in (0..kept).rev() {
            let take = after[i + 1][j + 1].zip(worth(i, j)).map(|(a, b)| add(a, b));
            after[i][j] = after[i + 1][j].max(take);
        }
    }
    let in_best = |i: usize, j: usize| {
        matches!(
            (before[i][j], worth(i, j), after[i + 1][j + 1]),
            (Some(a), Some(b), Some(c)) if add(add(a, b), c) == best
        )
    };
    let candidates = (0..kept)
        .map(|j| (0..n).filter(|&i| in_best(i, j)).collect())
        .collect();
    Some(Reading {
        value: best,
        candidates,
    })
}

/// Whether two headers may be one tab between commands: the same header, or
/// addresses of the same site (scheme, host and port), read only where the
/// header splits one way (a title may itself hold `](`).
pub fn same_page(known: &str, seen: &str) -> bool {
    known == seen
        || matches!((origin(known), origin(seen)), (Some(a), Some(b)) if a == b && a != "about:")
}

/// A header's address, when the header reads one way only.
fn address(header: &str) -> Option<&str> {
    let inner = header.strip_prefix('[')?.strip_suffix(')')?;
    let mut splits = inner.match_indices("](");
    let (at, _) = splits.next()?;
    splits.next().is_none().then(|| &inner[at + 2..])
}

/// Whether two headers show the same address, whatever their titles: what
/// follows the last `](` (a title may hold `](` itself; an address that
/// does is compared from its last one on).
pub fn same_place(a: &str, b: &str) -> bool {
    fn tail(h: &str) -> &str {
        h.rsplit_once("](").map_or(h, |(_, address)| address)
    }
    tail(a) == tail(b)
}

/// A header's title and address, split at its first `](` (for showing
/// only: a title may itself hold `](`).
pub fn split_header(header: &str) -> (&str, &str) {
    let inner = header
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(')'))
        .unwrap_or(header);
    inner.split_once("](").unwrap_or((inner, ""))
}

/// The site of a header's address, when the header reads one way only.
pub fn origin(header: &str) -> Option<String> {
    let url = address(header)?;
    let (scheme, rest) = url.split_once(':')?;
    if scheme == "about" {
        return Some("about:".into());
    }
    let authority = rest.strip_prefix("//")?;
    let host = authority.split(['/', '?', '#']).next()?;
    // Credentials in an address make its host ambiguous to read: no site.
    if host.is_empty() || host.contains('@') {
        return None;
    }
    Some(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(headers: &[&str], current: usize) -> Vec<Seen> {
        headers
            .iter()
            .enumerate()
            .map(|(i, h)| Seen {
                header: h.to_string(),
                current: i == current,
                number: None,
            })
            .collect()
    }

    fn rules<'a>(known: &'a [&'a str], current: Option<usize>) -> Rules<'a> {
        Rules {
            known,
            numbers: &[],
            current,
            acted_on: None,
            busy: &[],
        }
    }

    const A: &str = "[A](https://a.test/1)";
    const A2: &str = "[A two](https://a.test/2)";
    const B: &str = "[B](https://b.test/)";
    const C: &str = "[C](https://c.test/)";
    const P: &str = "[P](https://evil.test/)";

    fn kept(known: usize) -> Match {
        Match::Kept {
            known,
            moved: false,
        }
    }

    #[test]
    fn a_place_is_its_address_whatever_the_title_says() {
        assert!(same_place(
            "[Inbox (3)](https://m.test/)",
            "[Inbox (4)](https://m.test/)"
        ));
        assert!(same_place(
            "[a](b](https://m.test/)",
            "[c](https://m.test/)"
        ));
        assert!(!same_place(
            "[Inbox](https://m.test/)",
            "[Inbox](https://m.test/#2)"
        ));
        assert!(!same_place("[x](https://a.test/)", "[x](https://b.test/)"));
    }

    fn numbered(tabs: &[(&str, u64)], current: usize) -> Vec<Seen> {
        tabs.iter()
            .enumerate()
            .map(|(i, (h, n))| Seen {
                header: h.to_string(),
                current: i == current,
                number: Some(*n),
            })
            .collect()
    }

    #[test]
    fn numbered_tabs_are_known_by_their_numbers_alone() {
        let known = [A, B, C];
        let numbers = [Some(1), Some(2), Some(3)];
        let numbers_known = Rules {
            numbers: &numbers,
            ..rules(&known, Some(0))
        };
        // B closed, and a new tab of its very page came last; C's title
        // changed; A went to another site. By headers, the new tab would
        // be B, shifted: by numbers it is new.
        let now = numbered(&[(P, 1), ("[C (2)](https://c.test/)", 3), (B, 4)], 1);
        assert_eq!(
            align(&numbers_known, &now),
            [
                Match::Kept {
                    known: 0,
                    moved: true
                },
                kept(2),
                Match::New
            ]
        );
        // The tab the command acted on may show anything.
        let acted = Rules {
            acted_on: Some(0),
            ..numbers_known
        };
        assert_eq!(align(&acted, &now)[0], kept(0));
        // A number listed twice, or known twice (a book that is not the
        // daemon's), or a tab without one, is read by headers.
        let twice = numbered(&[(A, 1), (B, 1)], 0);
        assert_eq!(
            align(&numbers_known, &twice),
            align(&rules(&known, Some(0)), &twice)
        );
        let known_twice = Rules {
            numbers: &[Some(1), Some(2), Some(2)],
            ..rules(&known, Some(0))
        };
        let shifted = numbered(&[(A, 1), (C, 2)], 0);
        assert_eq!(align(&known_twice, &shifted), [kept(0), kept(2)]);
        let mut partly = numbered(&[(A, 1), (C, 3)], 0);
        partly[1].number = None;
        assert_eq!(align(&numbers_known, &partly), [kept(0), kept(2)]);
        let mut known_partly = numbers;
        known_partly[1] = None;
        let some_known = Rules {
            numbers: &known_partly,
            ..rules(&known, Some(0))
        };
        assert_eq!(
            align(&some_known, &numbered(&[(A, 1), (C, 3), (C, 4)], 0)),
            align(&rules(&known, Some(0)), &seen(&[A, C, C], 0))
        );
    }

    #[test]
    fn nothing_changed_or_tabs_appended() {
        let known = [A, B];
        let got = align(&rules(&known, Some(0)), &seen(&[A, B, C], 0));
        assert_eq!(got, [kept(0), kept(1), Match::New]);
        // A page moved within its site: still the same tab.
        let got = align(&rules(&known, Some(0)), &seen(&[A2, B], 0));
        assert_eq!(got, [kept(0), kept(1)]);
    }

    #[test]
    fn a_closed_tab_is_found_by_what_is_left() {
        let known = [A, B, C];
        let got = align(&rules(&known, Some(2)), &seen(&[A, C], 1));
        assert_eq!(got, [kept(0), kept(2)]);
    }

    #[test]
    fn a_page_that_moves_to_another_site_may_be_the_tab_or_a_new_one() {
        // The last tab shows another site: it moved, or it closed and a
        // new one came: both readings are as good.
        let known = [A, B];
        let got = align(&rules(&known, Some(0)), &seen(&[A, P], 0));
        assert_eq!(
            got,
            [
                kept(0),
                Match::InDoubt {
                    candidates: vec![1],
                    maybe_new: true,
                    moved: true
                }
            ]
        );
        // Unless the command itself acted on it.
        let acted = Rules {
            acted_on: Some(1),
            ..rules(&known, Some(0))
        };
        assert_eq!(align(&acted, &seen(&[A, P], 0)), [kept(0), kept(1)]);
    }

    #[test]
    fn a_page_that_closes_itself_behind_a_look_alike_popup_moves_no_tab() {
        // Known: spare, b's page B, a's tab A. B's page opened a popup
        // showing A's page and closed itself: the daemon lists A (moved up
        // into B's place, current now) and the popup. "B shows A's page
        // now, A is the popup" keeps more tabs and shows as many exactly
        // as "B closed": A may be either seen tab, and B the first.
        let blank = "[](about:blank)";
        let h = "[Hostile](https://a.test/h)";
        let a_now = "[A (1)](https://a.test/1)";
        for known in [[blank, B, A], [blank, h, A]] {
            for acted_on in [Some(1), None] {
                let rules = Rules {
                    acted_on,
                    ..rules(&known, Some(1))
                };
                let got = align(&rules, &seen(&[blank, A, A], 1));
                assert_eq!(got[0], kept(0));
                assert_eq!(got[1].known(), [1, 2], "{known:?} {got:?}");
                assert_eq!(got[2].known(), [2], "{known:?} {got:?}");
                assert!(!matches!(got[2], Match::Kept { .. }), "{got:?}");
                // The same when A's title changed meanwhile and the popup
                // shows another page of A's site: no reading is exact.
                let got = align(&rules, &seen(&[blank, a_now, A2], 1));
                assert_eq!(got[1].known(), [1, 2], "{known:?} {got:?}");
                assert!(!matches!(got[2], Match::Kept { .. }), "{got:?}");
            }
        }
    }

    #[test]
    fn a_page_may_move_within_its_site_beside_a_tab_whose_title_changes() {
        // All on one site: b's B goes to another page of it while a's A,
        // after it, changes its title: A stayed at its address, so B is B.
        let b = "[B](https://a.test/b)";
        let a_now = "[A (1)](https://a.test/1)";
        let known = [b, A];
        let acted = Rules {
            acted_on: Some(0),
            ..rules(&known, Some(0))
        };
        let got = align(&acted, &seen(&[A2, a_now], 0));
        assert_eq!(got, [kept(0), kept(1)]);
        // b's B, last, goes to the site a's A shows: still B.
        let known = [A, B];
        let acted = Rules {
            acted_on: Some(1),
            ..rules(&known, Some(1))
        };
        let got = align(&acted, &seen(&[A, A2], 1));
        assert_eq!(got, [kept(0), kept(1)]);
    }

    #[test]
    fn a_tab_that_moved_is_told_by_its_place_when_others_follow_it() {
        // B shows another site, and C, after it, is as it was: a new tab
        // would have come last, so the tab at B's place is B, moved.
        let known = [A, B, C];
        let got = align(&rules(&known, Some(0)), &seen(&[A, P, C], 0));
        assert_eq!(
            got,
            [
                kept(0),
                Match::Kept {
                    known: 1,
                    moved: true
                },
                kept(2)
            ]
        );
    }

    #[test]
    fn a_shifted_list_is_not_read_as_the_old_one() {
        // B's page closed itself after opening a popup: C moved up, the
        // popup came last. Same count, but no header fits its old place.
        let known = [A, B, C];
        let got = align(&rules(&known, Some(0)), &seen(&[A, C, P], 0));
        assert_eq!(got, [kept(0), kept(2), Match::New]);
    }

    #[test]
    fn tabs_of_one_site_are_told_apart_by_what_they_show() {
        // The first of three tabs on one site closed: the two left show
        // exactly what the second and third showed.
        let known = [A, A2, "[A three](https://a.test/3)"];
        let got = align(&rules(&known, Some(2)), &seen(&[A2, known[2]], 1));
        assert_eq!(got, [kept(1), kept(2)]);
    }

    #[test]
    fn a_reattached_tab_does_not_swap_two_tabs_of_one_site() {
        // main re-attaches a tab: the daemon sees it close and come back
        // last. Keeping both would swap them (same site, neither exact);
        // showing one exactly says the first closed: both are in doubt.
        let y = "[Y](https://a.test/y)";
        let known = [A, y];
        let got = align(&rules(&known, Some(0)), &seen(&[y, A], 0));
        assert_eq!(
            got,
            [
                Match::InDoubt {
                    candidates: vec![0, 1],
                    maybe_new: false,
                    moved: false
                },
                Match::InDoubt {
                    candidates: vec![1],
                    maybe_new: true,
                    moved: false
                }
            ]
        );
    }

    #[test]
    fn two_alike_tabs_one_closed_leaves_the_survivor_in_doubt() {
        let known = [A, A, B];
        let got = align(&rules(&known, Some(2)), &seen(&[A, B], 1));
        assert_eq!(
            got,
            [
                Match::InDoubt {
                    candidates: vec![0, 1],
                    maybe_new: false,
                    moved: false
                },
                kept(2)
            ]
        );
        // The current tab does not pin it: when the current one closes,
        // the daemon makes its neighbour current.
        let known = [A, A];
        let got = align(&rules(&known, Some(1)), &seen(&[A], 0));
        assert!(matches!(got[0], Match::InDoubt { .. }), "{got:?}");
    }

    #[test]
    fn the_current_tab_must_stay_current_while_it_lives() {
        let known = [A, B];
        // B was current; now A is: B closed, whatever its twin shows.
        let got = align(&rules(&known, Some(1)), &seen(&[A, B], 0));
        assert_eq!(got, [kept(0), Match::New]);
    }

    #[test]
    fn sites_are_read_only_from_headers_that_split_one_way() {
        assert_eq!(origin(A).as_deref(), Some("https://a.test"));
        assert_eq!(origin("[](about:blank)").as_deref(), Some("about:"));
        assert_eq!(origin("[x](https://a.test/](https://b.test/)"), None);
        assert_eq!(origin("[x](https://u@a.test/)"), None);
        assert!(same_page(A, A2));
        assert!(!same_page(A, B));
        assert!(!same_page("[](about:blank)", "[x](about:srcdoc)"));
        assert!(same_page("[](about:blank)", "[](about:blank)"));
        let forged = "[x](https://a.test/](https://b.test/)";
        assert!(!same_page(forged, B) && !same_page(forged, A));
    }

    #[test]
    fn three_tabs_of_one_page_that_stay_keep_their_places() {
        // Nothing changed: each is the tab it was, not one of two.
        let known = [A, A, A];
        let got = align(&rules(&known, Some(0)), &seen(&[A, A, A], 0));
        assert_eq!(got, [kept(0), kept(1), kept(2)]);
    }

    #[test]
    fn twins_one_of_which_closed_are_in_doubt_and_the_current_rule_allows_it() {
        // a's tab (current) and b's twin: a's closes, the daemon makes b's
        // current. Keeping a's (it is listed as current) and keeping b's
        // are as good: the survivor is in doubt, never a's.
        let known = [A, A];
        let got = align(&rules(&known, Some(0)), &seen(&[A], 0));
        assert_eq!(
            got,
            [Match::InDoubt {
                candidates: vec![0, 1],
                maybe_new: false,
                moved: false
            }]
        );
    }
}
