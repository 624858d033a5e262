//! Which tabs the daemon lists now are the ones my-chrome knew. The daemon
//! names no tab by anything stable: its list is `- i: [title](url)` in
//! the order the tabs appeared, a closed tab leaves it (later ones move up)
//! and a new one is appended. So the tabs seen now are some of the known
//! ones, in their order, followed by new ones; which, is read from their
//! headers: a kept tab shows the same header, or an address on the same
//! site (a page moves within its site between commands; moving to another
//! site is a page script's or the user's doing, and could be a shifted
//! list). Of the readings that fit, the one that shows the most tabs
//! exactly as they were wins. Where more than one reading is as good, the
//! tabs in doubt are named so
//! (`Alignment::candidates` has more than one), and the caller fails
//! closed: no tab keeps an id or an owner it may not have.

/// One tab as the daemon listed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// `[title](url)` exactly as listed.
    pub header: String,
    pub current: bool,
}

/// What the known tabs (in order) became.
#[derive(Debug, PartialEq, Eq)]
pub struct Alignment {
    /// The seen tabs past these are new in every reading.
    pub kept: usize,
    /// For each seen tab before `kept`, the known tabs it may be (by index).
    pub candidates: Vec<Vec<usize>>,
    /// For each seen tab before `kept`, whether a reading also has it new.
    pub maybe_new: Vec<bool>,
}

impl Alignment {
    /// The known tab seen tab `j` certainly is.
    pub fn certain(&self, j: usize) -> Option<usize> {
        if *self.maybe_new.get(j)? {
            return None;
        }
        match self.candidates.get(j)?.as_slice() {
            [only] if self.candidates.iter().filter(|c| c.contains(only)).count() == 1 => {
                Some(*only)
            }
            _ => None,
        }
    }
}

/// How the known tabs may match the seen ones.
pub struct Rules<'a> {
    /// Headers of the known tabs, in the daemon's order.
    pub known: &'a [&'a str],
    /// The known tab that was current, if any: if it is still there, it is
    /// the one listed as current (the daemon's current tab stays the same
    /// object until it closes).
    pub current: Option<usize>,
    /// A known tab whose page the command just acted on: it may show
    /// anything now.
    pub acted_on: Option<usize>,
}

impl Rules<'_> {
    fn fits(&self, i: usize, j: usize, seen: &[Seen]) -> bool {
        if self.current == Some(i) && !seen[j].current {
            return false;
        }
        self.acted_on == Some(i) || same_page(self.known[i], &seen[j].header)
    }
}

/// The readings that fit best: the one that keeps the most known tabs
/// (fewest closed; among those, the most shown exactly as they were), and
/// the one that shows the most exactly as they were (among those, the most
/// kept). Where they differ, a tab closed and a new one on the same site
/// cannot be told from a page that moved within its site: every seen tab
/// they disagree on is in doubt, with the candidates of both.
pub fn align(rules: &Rules, seen: &[Seen]) -> Alignment {
    let n = rules.known.len();
    let readings: Vec<Reading> = (0..=n.min(seen.len()))
        .filter_map(|kept| reading(rules, seen, kept))
        .collect();
    let most_kept = readings
        .iter()
        .max_by_key(|r| (r.kept, r.score))
        .expect("keeping none fits");
    let most_exact = readings
        .iter()
        .max_by_key(|r| (r.score, r.kept))
        .expect("keeping none fits");
    let kept = most_kept.kept;
    let mut candidates = most_kept.candidates.clone();
    let mut maybe_new = vec![false; kept];
    for j in 0..kept {
        match most_exact.candidates.get(j) {
            Some(other) if *other == candidates[j] => {}
            Some(other) => {
                for i in other {
                    if !candidates[j].contains(i) {
                        candidates[j].push(*i);
                    }
                }
                candidates[j].sort_unstable();
            }
            None => maybe_new[j] = true,
        }
    }
    Alignment {
        kept,
        candidates,
        maybe_new,
    }
}

/// One way the known tabs may have become the seen ones, keeping `kept`.
struct Reading {
    kept: usize,
    /// How many kept tabs show exactly what they showed.
    score: usize,
    /// For each kept seen tab, the known tabs it is in some best reading.
    candidates: Vec<Vec<usize>>,
}

/// The best readings that keep `kept` known tabs, if any fits.
fn reading(rules: &Rules, seen: &[Seen], kept: usize) -> Option<Reading> {
    let n = rules.known.len();
    // A kept tab scores 1 when its header is exactly as it was.
    let score = |i: usize, j: usize| -> Option<usize> {
        rules
            .fits(i, j, seen)
            .then(|| usize::from(rules.known[i] == seen[j].header))
    };
    // before[i][j]: the best score of known[..i] holding seen[..j].
    let mut before = vec![vec![None; kept + 1]; n + 1];
    for row in before.iter_mut() {
        row[0] = Some(0);
    }
    for i in 1..=n {
        for j in 1..=kept {
            let take = before[i - 1][j - 1]
                .zip(score(i - 1, j - 1))
                .map(|(a, b)| a + b);
            before[i][j] = before[i - 1][j].max(take);
        }
    }
    let best = before[n][kept]?;
    // after[i][j]: the best score of known[i..] holding seen[j..kept].
    let mut after = vec![vec![None; kept + 1]; n + 1];
    for row in after.iter_mut() {
        row[kept] = Some(0);
    }
    for i in (0..n).rev() {
        for j in (0..kept).rev() {
            let take = after[i + 1][j + 1].zip(score(i, j)).map(|(a, b)| a + b);
            after[i][j] = after[i + 1][j].max(take);
        }
    }
    let in_best = |i: usize, j: usize| {
        matches!(
            (before[i][j], score(i, j), after[i + 1][j + 1]),
            (Some(a), Some(b), Some(c)) if a + b + c == best
        )
    };
    let candidates = (0..kept)
        .map(|j| (0..n).filter(|&i| in_best(i, j)).collect())
        .collect();
    Some(Reading {
        kept,
        score: best,
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

/// The site of a header's address, when the header reads one way only.
pub fn origin(header: &str) -> Option<String> {
    let inner = header.strip_prefix('[')?.strip_suffix(')')?;
    let mut splits = inner.match_indices("](");
    let (at, _) = splits.next()?;
    if splits.next().is_some() {
        return None;
    }
    let url = &inner[at + 2..];
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
            })
            .collect()
    }

    fn rules<'a>(known: &'a [&'a str], current: Option<usize>) -> Rules<'a> {
        Rules {
            known,
            current,
            acted_on: None,
        }
    }

    const A: &str = "[A](https://a.test/1)";
    const A2: &str = "[A two](https://a.test/2)";
    const B: &str = "[B](https://b.test/)";
    const C: &str = "[C](https://c.test/)";
    const P: &str = "[P](https://evil.test/)";

    #[test]
    fn nothing_changed_or_tabs_appended() {
        let known = [A, B];
        let got = align(&rules(&known, Some(0)), &seen(&[A, B, C], 0));
        assert_eq!(got.kept, 2);
        assert_eq!((got.certain(0), got.certain(1)), (Some(0), Some(1)));
        // A page moved within its site: still the same tab.
        let got = align(&rules(&known, Some(0)), &seen(&[A2, B], 0));
        assert_eq!((got.kept, got.certain(0)), (2, Some(0)));
    }

    #[test]
    fn a_closed_tab_is_found_by_what_is_left() {
        let known = [A, B, C];
        let got = align(&rules(&known, Some(2)), &seen(&[A, C], 1));
        assert_eq!(got.kept, 2);
        assert_eq!((got.certain(0), got.certain(1)), (Some(0), Some(2)));
    }

    #[test]
    fn a_page_that_moves_to_another_site_is_not_followed() {
        let known = [A, B];
        let got = align(&rules(&known, Some(0)), &seen(&[A, P], 0));
        assert_eq!(got.kept, 1, "B is gone; the tab now at its place is new");
        assert_eq!(got.certain(0), Some(0));
        // Unless the command itself acted on it.
        let acted = Rules {
            acted_on: Some(1),
            ..rules(&known, Some(0))
        };
        assert_eq!(align(&acted, &seen(&[A, P], 0)).kept, 2);
    }

    #[test]
    fn a_shifted_list_is_not_read_as_the_old_one() {
        // B's page closed itself after opening a popup: C moved up, the
        // popup came last. Same count, but no header fits its old place.
        let known = [A, B, C];
        let got = align(&rules(&known, Some(0)), &seen(&[A, C, P], 0));
        assert_eq!(got.kept, 2);
        assert_eq!((got.certain(0), got.certain(1)), (Some(0), Some(2)));
    }

    #[test]
    fn tabs_of_one_site_are_told_apart_by_what_they_show() {
        // The first of three tabs on one site closed: the two left show
        // exactly what the second and third showed.
        let known = [A, A2, "[A three](https://a.test/3)"];
        let got = align(&rules(&known, Some(2)), &seen(&[A2, known[2]], 1));
        assert_eq!((got.certain(0), got.certain(1)), (Some(1), Some(2)));
    }

    #[test]
    fn a_reattached_tab_does_not_swap_two_tabs_of_one_site() {
        // main re-attaches a tab: the daemon sees it close and come back
        // last. Keeping both would swap them (same site, neither exact);
        // showing one exactly says the first closed: both are in doubt.
        let y = "[Y](https://a.test/y)";
        let known = [A, y];
        let got = align(&rules(&known, Some(0)), &seen(&[y, A], 0));
        assert_eq!(got.kept, 2);
        assert_eq!((got.certain(0), got.certain(1)), (None, None));
        assert_eq!(got.candidates[0], vec![0, 1]);
        assert!(got.maybe_new[1]);
    }

    #[test]
    fn two_alike_tabs_one_closed_leaves_the_survivor_in_doubt() {
        let known = [A, A, B];
        let got = align(&rules(&known, Some(2)), &seen(&[A, B], 1));
        assert_eq!(got.kept, 2);
        assert_eq!(got.candidates[0], vec![0, 1]);
        assert_eq!(got.certain(0), None);
        assert_eq!(got.certain(1), Some(2));
        // The current tab does not pin it: when the current one closes,
        // the daemon makes its neighbour current.
        let known = [A, A];
        let got = align(&rules(&known, Some(1)), &seen(&[A], 0));
        assert_eq!(got.certain(0), None);
    }

    #[test]
    fn the_current_tab_must_stay_current_while_it_lives() {
        let known = [A, B];
        // B was current; now A is: B closed, whatever its twin shows.
        let got = align(&rules(&known, Some(1)), &seen(&[A, B], 0));
        assert_eq!(got.kept, 1);
        assert_eq!(got.certain(0), Some(0));
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
        assert_eq!(got.kept, 3);
        assert_eq!(got.candidates, vec![vec![0], vec![1], vec![2]]);
        assert_eq!(got.maybe_new, vec![false, false, false]);
        assert_eq!(
            (got.certain(0), got.certain(1), got.certain(2)),
            (Some(0), Some(1), Some(2))
        );
    }

    #[test]
    fn a_known_tab_two_seen_tabs_may_be_is_certain_for_neither() {
        // `align` never leaves one candidate shared so; `certain` still
        // refuses it rather than give one tab's id to two.
        let got = Alignment {
            kept: 2,
            candidates: vec![vec![0], vec![0, 1]],
            maybe_new: vec![false, false],
        };
        assert_eq!((got.certain(0), got.certain(1)), (None, None));
        assert_eq!(got.certain(2), None, "past the kept tabs");
    }
}
