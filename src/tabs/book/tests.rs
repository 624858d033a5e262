//! The book's rules, each tested as `Desk` drives them: lists read in,
//! references resolved, tabs moved between owners.

use super::*;
use crate::policy::holds::Hold;
use crate::policy::tabs::TabRef;
use crate::tabs::align::Seen;
use crate::tabs::notice::{Named, Notice, Whose};

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

const A: &str = "[A](https://a.test/)";
const B: &str = "[B](https://b.test/)";
const C: &str = "[C](https://c.test/)";
const X: &str = "[X](https://evil.test/)";

fn opens(agent: &str, on: u64) -> During<'_> {
    During {
        agent,
        acted_on: Some(on),
        closed: None,
        opens: true,
        moves_current: false,
    }
}

/// A command of `during.agent` on its tab, as `Desk` runs it: the tab
/// selected first, the list read after.
fn ran(book: &mut Book, during: &During, after: &[Seen]) -> Vec<Notice> {
    if let Some(id) = during.acted_on {
        book.current = Some(id);
    }
    book.sync(after, Some(during))
}

fn owners(book: &Book) -> Vec<(u64, Owner)> {
    book.tabs.iter().map(|t| (t.id, t.owner.clone())).collect()
}

fn agent(name: &str) -> Owner {
    Owner::Agent(name.into())
}

fn held(name: &str) -> Owner {
    Owner::Held(name.into())
}

/// Notices as they are printed.
fn words(notices: Vec<Notice>) -> Vec<String> {
    notices.iter().map(Notice::to_string).collect()
}

/// A tab as a notice names it.
fn tab_named(id: u64, label: Option<&str>) -> Named {
    Named {
        id,
        label: label.map(String::from),
    }
}

/// A book where "a" owns t1 (A) and "b" owns t2 (B), t1 current.
fn two_agents() -> Book {
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    assert_eq!(book.default_tab("a"), Some(1));
    ran(&mut book, &opens("a", 1), &seen(&[A], 0));
    book.sync(&seen(&[A, BLANK], 0), None);
    // The tab that appeared between commands is the user's, and b
    // gets it only from the user.
    assert_eq!(book.tabs[1].owner, Owner::User);
    assert_eq!(book.tabs[1].why, Some(Why::Appeared));
    assert_eq!(book.claim("b", 2, None), Err(Refused::UsersToGive(2)));
    book.give(2, "b").unwrap();
    book.claim("b", 2, Some("mine")).unwrap();
    ran(&mut book, &opens("b", 2), &seen(&[A, B], 1));
    book
}

/// `two_agents`, with the daemon's numbers: t1 is 1, t2 is 2.
fn two_numbered_agents() -> Book {
    let mut book = two_agents();
    book.numbered = true;
    let mut now = seen(&[A, B], 1);
    now[0].number = Some(1);
    now[1].number = Some(2);
    book.sync(&now, None);
    assert_eq!(book.tabs[1].number, Some(2));
    book
}

#[test]
fn a_busy_tab_that_went_to_another_site_stays_its_agents() {
    // b's command stepped aside (or went past its bound) on t2, and
    // took it to another site while a's command ran: its doing, so
    // t2 stays b's. Once b's command is done, the same is the user's.
    for (busy, id, owner) in [(vec![2], 2, agent("b")), (vec![], 3, Owner::User)] {
        let mut book = two_numbered_agents();
        book.busy = busy;
        let mut now = seen(&[A, X], 0);
        now[0].number = Some(1);
        now[1].number = Some(2);
        book.sync(&now, None);
        assert_eq!((book.tabs[1].id, &book.tabs[1].owner), (id, &owner));
    }
}

#[test]
fn a_new_tab_of_the_same_page_in_a_closed_ones_place_is_the_users() {
    let mut book = two_numbered_agents();
    let mut now = seen(&[A, B], 1);
    now[0].number = Some(1);
    now[1].number = Some(3);
    // By place and header, t2 would be kept; by number, it closed.
    book.sync(&now, None);
    assert_eq!(owners(&book)[0], (1, agent("a")));
    assert_eq!(book.tabs[1].owner, Owner::User);
    assert_eq!(book.tabs[1].number, Some(3));
    assert_ne!(book.tabs[1].id, 2);
    let told = words(book.take_notices("b"));
    assert!(told.iter().any(|w| w.contains("t2")), "{told:?}");
}

#[test]
fn a_pages_number_is_not_read_before_the_daemon_numbers() {
    let mut book = two_agents();
    assert!(!book.numbered);
    let mut now = seen(&[A, B], 1);
    now[1].number = Some(9);
    book.sync(&now, None);
    assert_eq!(book.tabs[1].number, None);
    assert_eq!(owners(&book)[1], (2, agent("b")));
}

#[test]
fn a_name_registered_anew_gets_nothing_of_the_earlier_holders() {
    let mut book = two_agents();
    // Known by registration 7 from here; the tabs it has are kept.
    book.agents.get_mut("b").unwrap().registration = Some(7);
    assert!(book.registered("b", 7, 50).is_empty());
    assert_eq!(book.tab(2).unwrap().owner, agent("b"));
    book.start_hold("b", HoldKind::Tracing, 1);
    book.agents
        .get_mut("b")
        .unwrap()
        .notices
        .push(Notice::Gone {
            gone_after_ms: 1,
            tabs: vec![],
        });
    // b's name ended and someone registered it again (8): b's tab is
    // the user's, its hold nobody's, its notes gone; a keeps its own.
    assert_eq!(book.registered("b", 8, 60), vec![2]);
    let t2 = book.tab(2).unwrap();
    assert_eq!(t2.owner, Owner::User);
    assert_eq!(t2.why, Some(Why::NameEnded));
    assert_eq!(t2.label, None);
    assert!(book.take_notices("b").is_empty());
    assert!(
        book.held_by_other("b").is_some(),
        "the hold keeps the new b out too"
    );
    assert_eq!(book.claim("b", 2, None), Err(Refused::UsersToGive(2)));
    assert_eq!(book.own("a").len(), 1);
    // A tab held for the earlier holder goes the same way.
    book.agents.get_mut("a").unwrap().last_at = 0;
    book.expire(10_000, 1_000, Vec::new);
    assert_eq!(book.tab(1).unwrap().owner, held("a"));
    assert_eq!(book.registered("a", 3, 20_000), vec![1]);
    assert_eq!(book.tab(1).unwrap().owner, Owner::User);
    assert_eq!(book.agents["a"].registration, Some(3));
}

#[test]
fn an_agent_registered_now_or_holding_state_outlives_the_sweep() {
    let mut book = two_agents();
    // Just registered: it counts as active now, so the gone time runs
    // from here, and its registration is kept.
    book.registered("c", 9, 1_000);
    book.expire(1_500, 1_000, Vec::new);
    assert_eq!(book.agents["c"].registration, Some(9));
    // Gone, with nothing: its entry goes.
    book.expire(2_000, 1_000, Vec::new);
    assert!(!book.agents.contains_key("c"));
    // Gone with no tab but browser-wide state it started: kept, so the
    // hold stays its own to end.
    book.registered("d", 4, 1_000);
    book.start_hold("d", HoldKind::Routes, 1);
    book.expire(5_000, 1_000, Vec::new);
    assert_eq!(book.agents["d"].registration, Some(4));
    // A hold of another agent's keeps nobody else's entry.
    book.registered("e", 5, 1_000);
    book.expire(6_000, 1_000, Vec::new);
    assert!(!book.agents.contains_key("e"));
}

#[test]
fn the_blank_tab_goes_to_the_first_agent_and_a_popup_to_its_sole_opener() {
    // a alone: its click opened a popup, which only its page can have.
    let mut alone = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    alone.default_tab("a");
    ran(&mut alone, &opens("a", 1), &seen(&[A], 0));
    ran(&mut alone, &opens("a", 1), &seen(&[A, C], 0));
    assert_eq!(alone.tabs[1].owner, agent("a"));
    assert!(alone.tabs[1].opened);
    // With b's page open too, b's page (a timer of its own) may have
    // opened it just as well: the user's, who gives it.
    let mut book = two_agents();
    assert_eq!(book.own("a").len(), 1);
    assert_eq!(book.own("b")[0].label.as_deref(), Some("mine"));
    let notes = ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
    assert_eq!(book.tabs[2].owner, Owner::User);
    assert_eq!(book.tabs[2].why, Some(Why::AppearedDuring("b".into())));
    assert_eq!(
        notes,
        [Notice::AppearedDuring {
            tab: 3,
            agent: "b".into()
        }],
        "b hears the tab waits for the user"
    );
    assert!(book.take_notices("a").is_empty());
    // A read opens nothing: a tab appearing meanwhile is the user's.
    let read = During {
        opens: false,
        ..opens("a", 1)
    };
    ran(&mut book, &read, &seen(&[A, B, C, C], 0));
    assert_eq!(book.tabs[3].owner, Owner::User);
    assert_eq!(book.tabs[3].why, Some(Why::Appeared));
    assert_eq!(book.default_tab("c"), None, "no spare left");
}

#[test]
fn only_the_spare_blank_tab_opens_no_popup() {
    // b has only a blank tab, which runs b's scripts all the same: the
    // tab that appears during a's click is the user's.
    let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), false);
    book.give(1, "a").unwrap();
    book.give(2, "b").unwrap();
    ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
    ran(&mut book, &opens("a", 1), &seen(&[A, BLANK, C], 0));
    assert_eq!(book.tabs[2].owner, Owner::User);
    // Beside connect's spare, untouched, a's popup is a's.
    let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), true);
    book.give(1, "a").unwrap();
    assert_eq!(book.tabs[1].owner, Owner::Spare);
    ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
    ran(&mut book, &opens("a", 1), &seen(&[A, BLANK, C], 0));
    assert_eq!(book.tabs[2].owner, agent("a"));
}

#[test]
fn ids_are_never_reused_and_refusals_say_why() {
    let mut book = two_agents();
    assert_eq!(book.resolve("a", &TabRef::Id(1)), Ok(1));
    assert_eq!(book.resolve("a", &TabRef::Index(0)), Ok(1));
    assert_eq!(book.resolve("b", &TabRef::Label("mine".into())), Ok(2));
    assert_eq!(
        book.resolve("a", &TabRef::Id(2)),
        Err(Refused::Foreign {
            id: 2,
            owner: agent("b")
        })
    );
    assert_eq!(
        book.resolve("a", &TabRef::Index(1)),
        Err(Refused::Unknown(TabRef::Index(1)))
    );
    // b's tab is closed by the user: b is told, once; a is not.
    let notes = book.sync(&seen(&[A], 0), None);
    assert!(notes.is_empty());
    assert_eq!(book.resolve("b", &TabRef::Id(2)), Err(Refused::Gone(2)));
    let told = words(book.take_notices("b"));
    assert_eq!(
        told,
        ["tab t2 (mine) was closed (by the user, or by its page)"]
    );
    assert!(book.take_notices("b").is_empty());
    assert!(book.take_notices("a").is_empty());
    assert_eq!(book.default_tab("b"), None, "b has no tab and no spare");
    // A new session starts after the last id.
    let next = Book::fresh("s2", book.next_id, &seen(&[BLANK], 0), true);
    assert_eq!(next.tabs[0].id, 3);
    assert_eq!(next.resolve("a", &TabRef::Id(1)), Err(Refused::Earlier(1)));
    assert_eq!(
        next.resolve("a", &TabRef::Id(9)),
        Err(Refused::Unknown(TabRef::Id(9)))
    );
}

#[test]
fn tabs_in_doubt_stay_with_the_one_agent_that_had_them_all() {
    let mut book = two_agents();
    // b opens two tabs on the same page (alone... a's page is open: the
    // user gives them to b); a third of the user's too.
    ran(&mut book, &opens("b", 2), &seen(&[A, B, C, C], 1));
    book.give(3, "b").unwrap();
    book.give(4, "b").unwrap();
    book.sync(&seen(&[A, B, C, C, C], 1), None);
    assert_eq!(book.tabs[4].owner, Owner::User);
    // One of the three C tabs closes: the first left is one of b's two
    // (still b's, under a new id); the second b's or the user's: the
    // user's, who gives it.
    book.sync(&seen(&[A, B, C, C], 1), None);
    assert_eq!(book.tabs[2].owner, agent("b"), "{book:#?}");
    assert_eq!(book.tabs[3].owner, Owner::User);
    assert_eq!(book.tabs[3].why, Some(Why::InDoubt));
    assert_eq!((book.tabs[2].id, book.tabs[3].id), (6, 7), "new ids");
    assert_eq!(book.take_notices("b").len(), 2);
}

#[test]
fn a_tab_that_may_be_an_agents_or_new_is_the_users() {
    // b's last tab goes to another site: it moved, or it closed and a
    // new tab came (a popup of a's page, say). No agent may take it:
    // not a, and not b, whose claim would take another page's tab; the
    // user gives it. An attack took ann's popup that way.
    let mut book = two_agents();
    book.sync(&seen(&[A, X], 1), None);
    let t = &book.tabs[1];
    assert_eq!(
        (t.id, &t.owner, &t.why),
        (3, &Owner::User, &Some(Why::InDoubt))
    );
    for agent in ["a", "b"] {
        assert_eq!(book.claim(agent, 3, None), Err(Refused::UsersToGive(3)));
    }
    assert_eq!(
        book.take_notices("b"),
        [Notice::InDoubt {
            tabs: vec![tab_named(2, Some("mine"))],
            now: 3,
            whose: Whose::TheUsers
        }]
    );
    assert!(book.take_notices("a").is_empty());
    book.give(3, "b").unwrap();
    assert_eq!(book.tab(3).unwrap().owner, agent("b"));
    assert_eq!(book.tab(3).unwrap().why, None);
}

#[test]
fn a_page_that_went_to_another_site_is_the_users() {
    // b's t2 sits between a's t1 and c's t3: the tab at t2's place is
    // t2 gone to another site, or t2 closed and a new tab came while
    // t3 closed and another new one showing what it showed came too
    // (an attack did that with popups). It is the user's: b hears so,
    // and neither b nor a may take it.
    let mut book = two_agents();
    book.sync(&seen(&[A, B, C], 1), None);
    book.give(3, "c").unwrap();
    book.sync(&seen(&[A, X, C], 1), None);
    assert_eq!(
        owners(&book),
        [(1, agent("a")), (4, Owner::User), (3, agent("c"))]
    );
    assert_eq!(book.tab(4).unwrap().why, Some(Why::Moved));
    for agent in ["a", "b"] {
        assert_eq!(book.claim(agent, 4, None), Err(Refused::UsersToGive(4)));
    }
    assert_eq!(
        book.take_notices("b"),
        [Notice::Moved {
            tab: tab_named(2, Some("mine")),
            now: 4
        }]
    );
    assert!(book.take_notices("c").is_empty());
}

#[test]
fn a_new_tab_is_nobodys_when_the_list_also_lost_one() {
    // tab-new by c: the daemon makes the new tab current.
    let mut book = two_agents();
    let new = During {
        acted_on: None,
        moves_current: true,
        ..opens("c", 0)
    };
    book.sync(&seen(&[A, B, BLANK], 2), Some(&new));
    book.adopt("c", 3, None).unwrap();
    assert_eq!(book.tab(1).unwrap().owner, agent("a"));
    // The user closed b's tab while c's click ran, and c's page opened
    // a popup: the popup is not c's to have (it could be a shifted tab).
    let click = opens("c", 3);
    ran(&mut book, &click, &seen(&[A, BLANK, C], 1));
    assert_eq!(book.tabs[2].owner, Owner::User, "{book:#?}");
}

#[test]
fn two_agents_tabs_of_one_site_that_trade_places_are_nobodys() {
    // a's t1 and b's t2 on one site; the extension re-attaches t1 (the
    // daemon sees it close and come back last).
    let x = "[X](https://a.test/x)";
    let y = "[Y](https://a.test/y)";
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    book.default_tab("a");
    ran(&mut book, &opens("a", 1), &seen(&[x], 0));
    let mut b = book.clone();
    b.sync(&seen(&[x, BLANK], 0), None);
    b.give(2, "b").unwrap();
    ran(&mut b, &opens("b", 2), &seen(&[x, y], 1));
    b.current = Some(1);
    b.sync(&seen(&[y, x], 0), None);
    assert!(
        b.tabs
            .iter()
            .all(|t| t.owner == Owner::User || t.owner == held("b")),
        "{b:#?}"
    );
    assert_eq!(b.tabs[0].owner, Owner::User, "t1 or t2: nobody's");
    // Each hears of its own tab, and of nobody else's.
    let told_a = words(b.take_notices("a")).join("\n");
    let told_b = words(b.take_notices("b")).join("\n");
    assert!(told_a.contains("t1") && !told_a.contains("t2"), "{told_a}");
    assert!(told_b.contains("t2") && !told_b.contains("t1"), "{told_b}");
    assert!(told_a.contains("the user's"), "{told_a}");
}

#[test]
fn twins_of_two_agents_one_of_which_closed_are_nobodys() {
    // a's and b's tabs show the same page; a's (current) closes and
    // the daemon makes b's current: the survivor may be either.
    let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), false);
    book.give(1, "a").unwrap();
    book.give(2, "b").unwrap();
    ran(&mut book, &opens("a", 1), &seen(&[A, BLANK], 0));
    book.current = Some(2);
    ran(&mut book, &opens("b", 2), &seen(&[A, A], 1));
    book.current = Some(1);
    book.sync(&seen(&[A], 0), None);
    assert_eq!(owners(&book), [(3, Owner::User)]);
    assert!(book.own("a").is_empty() && book.own("b").is_empty());
}

#[test]
fn a_current_tab_that_closed_leaves_none_current() {
    // b's tab (current) closed during b's command: the reply's lone
    // `### Page` is a's tab, which the daemon did not make current.
    let mut book = two_agents();
    book.current = Some(2);
    let mut during = During {
        opens: false,
        ..opens("b", 2)
    };
    ran(&mut book, &during, &seen(&[A], 0));
    assert_eq!(book.current, None);
    // A request that moves it (a select, a new tab) is believed.
    during.moves_current = true;
    book.sync(&seen(&[A], 0), Some(&during));
    assert_eq!(book.current, Some(1));
    // Nothing went: the list's mark stands.
    book.sync(&seen(&[A], 0), None);
    assert_eq!(book.current, Some(1));
}

#[test]
fn a_tab_closed_on_purpose_is_not_news() {
    let mut book = two_agents();
    let close = During {
        closed: Some(2),
        opens: false,
        ..opens("b", 2)
    };
    let notes = ran(&mut book, &close, &seen(&[A], 0));
    assert!(notes.is_empty());
    assert!(book.take_notices("b").is_empty());
}

#[test]
fn labels_are_one_per_tab_of_an_agent() {
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    book.default_tab("b");
    ran(&mut book, &opens("b", 1), &seen(&[B], 0));
    book.claim("b", 1, Some("mine")).unwrap();
    ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
    assert_eq!(
        book.adopt("b", 2, Some("mine")),
        Err(Refused::LabelTaken("mine".into()))
    );
    book.adopt("b", 2, Some("other")).unwrap();
    assert_eq!(book.resolve("b", &TabRef::Label("other".into())), Ok(2));
    assert_eq!(
        book.claim("a", 2, None),
        Err(Refused::Foreign {
            id: 2,
            owner: agent("b")
        })
    );
}

#[test]
fn release_closes_what_the_agent_opened_but_never_the_last_tab() {
    let mut book = two_agents();
    ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
    book.give(3, "b").unwrap();
    book.tabs[2].opened = true;
    // b was given t2 (the user's): it goes back; t3 it opened: closed.
    assert_eq!(book.release("b", None, false), vec![3]);
    assert_eq!(book.tab(2).unwrap().owner, Owner::User);
    assert_eq!(book.tab(2).unwrap().why, Some(Why::Released));
    // t3 stays b's until it is closed (a failed close leaves it b's,
    // for `release` again).
    assert_eq!(book.tab(3).unwrap().owner, Owner::Agent("b".into()));
    assert!(!book.released_all("b") && book.agents.contains_key("b"));
    book.tabs.retain(|t| t.id != 3);
    assert!(book.released_all("b"));
    assert!(book.own("b").is_empty() && !book.agents.contains_key("b"));
    // A given-back tab is the user's to give again, not an agent's to
    // take.
    assert_eq!(book.claim("a", 2, None), Err(Refused::UsersToGive(2)));
    // a alone, with the session's only tab besides the user's.
    let mut alone = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    alone.default_tab("a");
    assert_eq!(alone.release("a", None, false), Vec::<u64>::new());
    assert_eq!(alone.tabs[0].owner, Owner::User, "kept: the last tab");
    let mut kept = two_agents();
    ran(&mut kept, &opens("b", 2), &seen(&[A, B, C], 1));
    kept.give(3, "b").unwrap();
    assert!(kept.release("b", None, true).is_empty());
    assert_eq!(kept.tab(3).unwrap().owner, Owner::User);
    // What is held for it goes back to the user too.
    let mut gone = two_agents();
    gone.agents.get_mut("b").unwrap().last_at = 0;
    gone.expire(10_000, 1_000, Vec::new);
    assert_eq!(gone.tab(2).unwrap().owner, held("b"));
    assert!(
        gone.release("b", None, false).is_empty(),
        "nothing it opened"
    );
    let t2 = gone.tab(2).unwrap();
    assert_eq!((&t2.owner, &t2.why), (&Owner::User, &Some(Why::Released)));
}

#[test]
fn an_agent_at_work_is_not_gone_however_quiet_the_book_says_it_is() {
    let mut book = two_agents();
    book.agents.get_mut("a").unwrap().last_at = 1_000;
    book.agents.get_mut("b").unwrap().last_at = 1_000;
    assert_eq!(
        book.expire(6_000, 4_000, || vec!["a".into()]),
        vec!["b".to_string()]
    );
    assert_eq!(book.tab(1).unwrap().owner, Owner::Agent("a".into()));
    for name in ["a", "b"] {
        book.agents.get_mut(name).unwrap().last_at = 5_000;
    }
    book.expire(6_000, 4_000, || panic!("asked with nobody to go"));
}

#[test]
fn an_agent_gone_quiet_has_its_tabs_held_for_it() {
    let mut book = two_agents();
    book.agents.get_mut("a").unwrap().last_at = 1_000;
    book.agents.get_mut("b").unwrap().last_at = 5_000;
    assert_eq!(book.expire(6_000, 4_000, Vec::new), vec!["a".to_string()]);
    let t1 = book.tab(1).unwrap();
    assert_eq!((&t1.owner, &t1.why), (&held("a"), &Some(Why::OwnerGone)));
    assert_eq!(
        book.take_notices("a"),
        [Notice::Gone {
            gone_after_ms: 4_000,
            tabs: vec![tab_named(1, None)]
        }]
    );
    assert_eq!(book.tab(2).unwrap().owner, agent("b"));
    // No other agent takes it; its own may, and the user may give it.
    assert_eq!(
        book.resolve("b", &TabRef::Id(1)).unwrap_err(),
        Refused::Foreign {
            id: 1,
            owner: held("a")
        }
    );
    assert_eq!(book.others_with_tabs("b"), ["a"]);
    assert_eq!(
        book.resolve("a", &TabRef::Id(1)),
        Err(Refused::HeldForYou(1))
    );
    let mut claimed = book.clone();
    claimed.claim("a", 1, None).unwrap();
    assert_eq!(claimed.tab(1).unwrap().owner, agent("a"));
    book.give(1, "b").unwrap();
    assert_eq!(book.tab(1).unwrap().owner, agent("b"));
    assert_eq!(
        words(book.take_notices("a")),
        ["tab t1, held for you, was given to agent b by the user"]
    );
}

#[test]
fn the_user_gives_what_no_agent_has() {
    let mut book = two_agents();
    book.sync(&seen(&[A, B, C], 1), None);
    assert_eq!(book.tab(3).unwrap().owner, Owner::User);
    assert_eq!(
        book.give(1, "b"),
        Err(Refused::Owned {
            id: 1,
            agent: "a".into()
        })
    );
    assert_eq!(book.give(9, "b"), Err(Refused::Unknown(TabRef::Id(9))));
    let before = book.clone();
    assert_eq!(
        book.give(1, "b").unwrap_err(),
        Refused::Owned {
            id: 1,
            agent: "a".into()
        }
    );
    assert_eq!(book, before, "a refused gift changes nothing");
    book.give(3, "a").unwrap();
    let t3 = book.tab(3).unwrap();
    assert_eq!((&t3.owner, &t3.why, t3.opened), (&agent("a"), &None, false));
    assert_eq!(book.resolve("a", &TabRef::Id(3)), Ok(3));
    // An agent's own tab given to it again: nothing changes of it.
    book.claim("a", 3, Some("docs")).unwrap();
    book.give(3, "a").unwrap();
    assert_eq!(book.tab(3).unwrap().label.as_deref(), Some("docs"));
}

#[test]
fn browser_wide_state_keeps_other_agents_out_until_it_ends() {
    let mut book = two_agents();
    book.start_hold("a", HoldKind::Tracing, 1);
    book.start_hold("a", HoldKind::Routes, 1);
    book.start_hold("a", HoldKind::Routes, 1);
    assert_eq!(book.holds.len(), 2, "one hold of a kind per agent");
    assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Tracing);
    assert!(book.held_by_other("a").is_none());
    book.end_hold("a", HoldKind::Tracing);
    assert_eq!(book.held_by_other("b").unwrap().what, HoldKind::Routes);
    book.end_hold("b", HoldKind::Routes);
    assert_eq!(
        book.held_by_other("b").unwrap().what,
        HoldKind::Routes,
        "b ends no hold of a's"
    );
    book.end_hold("a", HoldKind::Routes);
    assert!(book.held_by_other("b").is_none());
}

#[test]
fn a_reconnect_tells_every_agent_its_tabs_went() {
    let book = two_agents();
    let next = Book::after(&book, 1, "s2", &seen(&[BLANK], 0), true);
    assert_eq!(next.first_id, book.next_id);
    // A later id recorded apart wins.
    let later = Book::after(&book, book.next_id + 5, "s2", &seen(&[BLANK], 0), true);
    assert_eq!(later.first_id, book.next_id + 5);
    for (agent, tab) in [("a", tab_named(1, None)), ("b", tab_named(2, Some("mine")))] {
        assert_eq!(
            next.agents[agent].notices,
            [Notice::Reconnected { tabs: vec![tab] }]
        );
    }
    // A blank tab is spare only in a book `connect` makes.
    let other = Book::fresh("s3", 9, &seen(&[BLANK], 0), false);
    assert_eq!(other.tabs[0].owner, Owner::User);
    assert_eq!(other.tabs[0].why, Some(Why::Found));
}

#[test]
fn a_book_is_checked_before_it_is_believed() {
    let book = two_agents();
    assert!(book.well_formed());
    let mut first = book.clone();
    first.version = 1;
    assert!(first.well_formed(), "a book of the release before is read");
    let mut later = book.clone();
    later.version = 3;
    assert!(!later.well_formed());
    let mut twice = book.clone();
    twice.tabs[1].id = 1;
    assert!(!twice.well_formed());
    let mut ahead = book.clone();
    ahead.tabs[0].id = ahead.next_id;
    assert!(!ahead.well_formed());
    let mut named = book.clone();
    named.tabs[0].owner = Owner::Held("a\u{1b}[31m".into());
    assert!(!named.well_formed());
    let mut labelled = book.clone();
    labelled.tabs[0].label = Some("two words".into());
    assert!(!labelled.well_formed());
    // A book written before `why` existed reads without it.
    let old = r#"{"version":1,"session":"s","first_id":1,"next_id":2,"tabs":[{"id":1,"owner":"user","label":null,"header":"[](about:blank)","opened":false}],"current":1,"agents":{},"holds":[]}"#;
    let read: Book = serde_json::from_str(old).unwrap();
    assert!(read.well_formed() && read.tabs[0].why.is_none());
}

#[test]
fn a_book_of_the_release_before_reads_its_worded_notices_as_they_are() {
    // Notices were stored as words: they are shown as they were, and a
    // new one is stored as data beside them.
    let old = r#"{"version":2,"session":"s","first_id":1,"next_id":2,"tabs":[{"id":1,"owner":{"held":"a"},"label":null,"header":"[](about:blank)","opened":false,"why":"owner-gone"}],"current":1,"agents":{"a":{"current":null,"last_command":"snapshot","last_at":5,"notices":["tab t2 (mine) was closed (by the user, or by its page)","you had no command for 4 s, so your tabs (t1) are held for you: `my-chrome tab-claim <id>` takes one again"]}},"holds":[{"agent":"a","what":"tracing"}]}"#;
    let mut read: Book = serde_json::from_str(old).unwrap();
    assert!(read.well_formed());
    assert_eq!(
        read.agents["a"].notices,
        [
            Notice::Said("tab t2 (mine) was closed (by the user, or by its page)".into()),
            Notice::Said(
                "you had no command for 4 s, so your tabs (t1) are held for you: \
                 `my-chrome tab-claim <id>` takes one again"
                    .into()
            ),
        ]
    );
    assert_eq!(
        read.holds,
        [Hold {
            agent: "a".into(),
            what: HoldKind::Tracing,
            since: 0,
        }]
    );
    // Written back unchanged.
    let again: serde_json::Value = serde_json::to_value(&read).unwrap();
    assert_eq!(
        again,
        serde_json::from_str::<serde_json::Value>(old).unwrap()
    );
    read.give(1, "b").unwrap();
    let written = serde_json::to_string(&read).unwrap();
    assert!(
        written.contains(
            r#"held for you: `my-chrome tab-claim <id>` takes one again",{"kind":"given-away","tab":1,"to":"b"}]"#
        ),
        "{written}"
    );
    assert_eq!(
        words(read.take_notices("a")),
        [
            "tab t2 (mine) was closed (by the user, or by its page)",
            "you had no command for 4 s, so your tabs (t1) are held for you: `my-chrome \
             tab-claim <id>` takes one again",
            "tab t1, held for you, was given to agent b by the user",
        ]
    );
}

#[test]
fn the_daemons_index_of_a_tab_is_its_place_now() {
    let mut book = two_agents();
    ran(&mut book, &opens("b", 2), &seen(&[A, B, C], 1));
    assert_eq!(
        (book.index_of(1), book.index_of(2), book.index_of(3)),
        (Some(0), Some(1), Some(2))
    );
    assert_eq!(book.index_of(4), None, "one past the last: no index");
    // The user closes a's t1: b's tabs move down, t1 has no index.
    book.sync(&seen(&[B, C], 0), None);
    assert_eq!(
        (book.index_of(1), book.index_of(2), book.index_of(3)),
        (None, Some(0), Some(1))
    );
}

#[test]
fn a_current_tab_no_longer_listed_as_current_was_closed() {
    // b's t2 is current; the user closes it (the daemon makes no tab
    // current, `tabs::stay`) and opens b's page again: that tab is
    // new, the user's.
    let mut book = two_agents();
    assert_eq!(book.current, Some(2));
    assert!(book.sync(&seen(&[A, B], usize::MAX), None).is_empty());
    assert_eq!(owners(&book), [(1, agent("a")), (3, Owner::User)]);
    assert_eq!(book.current, None);
    assert_eq!(book.resolve("b", &TabRef::Id(2)), Err(Refused::Gone(2)));
    assert_eq!(
        book.resolve("b", &TabRef::Id(3)),
        Err(Refused::Foreign {
            id: 3,
            owner: Owner::User
        })
    );
    assert_eq!(
        words(book.take_notices("b")),
        ["tab t2 (mine) was closed (by the user, or by its page)"]
    );
    assert!(book.take_notices("a").is_empty());
}

#[test]
fn an_agents_current_tab_stays_its_current_while_it_lives() {
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    book.default_tab("b");
    ran(&mut book, &opens("b", 1), &seen(&[B], 0));
    // b's click opened a popup (t2, b's): b's commands still run on t1.
    ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
    assert_eq!(book.tab(2).unwrap().owner, agent("b"));
    assert_eq!(book.agents["b"].current, Some(1));
    assert_eq!(book.default_tab("b"), Some(1));
    // The user closes t1 (the daemon makes t2 current): b's current is
    // forgotten, and its next command runs on its latest tab, t2.
    book.sync(&seen(&[C], 0), None);
    assert_eq!(book.agents["b"].current, None);
    assert_eq!(book.default_tab("b"), Some(2));
}

/// The book of a second session, after `two_agents`' (ids 1 and 2):
/// t3 (blank) closed, t4 the user's; `first_id` 3, `next_id` 5.
fn second_session() -> Book {
    let earlier = two_agents();
    let mut book = Book::after(&earlier, 1, "s2", &seen(&[BLANK, A], 0), true);
    book.sync(&seen(&[A], 0), None);
    assert_eq!((book.first_id, book.next_id), (3, 5));
    let ids: Vec<u64> = book.tabs.iter().map(|t| t.id).collect();
    assert_eq!(ids, vec![4]);
    book
}

#[test]
fn an_id_is_refused_as_earlier_gone_or_unknown_at_the_exact_bounds() {
    let book = second_session();
    let expected = [
        (1, Refused::Earlier(1)),
        (2, Refused::Earlier(2)),
        // The first id of this session: closed, not an earlier one's.
        (3, Refused::Gone(3)),
        // The next id: not given yet.
        (5, Refused::Unknown(TabRef::Id(5))),
        (6, Refused::Unknown(TabRef::Id(6))),
    ];
    for (id, refused) in &expected {
        assert_eq!(
            book.resolve("a", &TabRef::Id(*id)),
            Err(refused.clone()),
            "t{id}"
        );
    }
    let mut claimed = book.clone();
    for (id, refused) in expected.clone() {
        assert_eq!(
            claimed.claim("a", id, Some("x")),
            Err(refused.clone()),
            "t{id}"
        );
        assert_eq!(claimed.give(id, "a"), Err(refused), "t{id}");
        assert_eq!(claimed, book, "a refused claim changes nothing");
    }
    // t4 is the user's: the user gives it, then a labels it.
    assert_eq!(
        claimed.claim("a", 4, Some("x")),
        Err(Refused::UsersToGive(4))
    );
    claimed.give(4, "a").unwrap();
    claimed.claim("a", 4, Some("x")).unwrap();
    assert_eq!(claimed.tab(4).unwrap().owner, agent("a"));
    assert_eq!(claimed.tab(4).unwrap().label.as_deref(), Some("x"));
    assert_eq!(claimed.resolve("a", &TabRef::Id(4)), Ok(4));
}

#[test]
fn an_agent_may_claim_its_own_tab_again_to_label_it() {
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    book.default_tab("b");
    ran(&mut book, &opens("b", 1), &seen(&[B], 0));
    ran(&mut book, &opens("b", 1), &seen(&[B, C], 0));
    assert_eq!(book.claim("b", 2, Some("popup")), Ok(()));
    let tab = book.tab(2).unwrap();
    assert_eq!(tab.owner, agent("b"));
    assert_eq!(tab.label.as_deref(), Some("popup"));
    assert!(tab.opened, "still b's to close on release");
    assert_eq!(book.agents["b"].current, Some(2));
    // Without a label, the one it has stays.
    book.claim("b", 1, Some("mine")).unwrap();
    assert_eq!(book.claim("b", 1, None), Ok(()));
    assert_eq!(book.tab(1).unwrap().label.as_deref(), Some("mine"));
    assert_eq!(book.agents["b"].current, Some(1));
    assert_eq!(book.release("b", None, false), vec![1]);
}

#[test]
fn release_of_one_tab_touches_that_tab_only() {
    // (t1 is connect's spare: b's popup is b's.)
    let mut book = Book::fresh("s", 1, &seen(&[BLANK, BLANK], 0), true);
    book.give(2, "b").unwrap();
    book.claim("b", 2, Some("mine")).unwrap();
    ran(&mut book, &opens("b", 2), &seen(&[BLANK, B], 1));
    ran(&mut book, &opens("b", 2), &seen(&[BLANK, B, C], 1));
    assert_eq!(book.tab(3).unwrap().owner, agent("b"));
    // b releases its popup t3: to close (b's until it is); t2 stays
    // b's, labelled, current.
    let mut one = book.clone();
    assert_eq!(one.release("b", Some(3), false), vec![3]);
    assert_eq!(one.tab(3).unwrap().owner, agent("b"));
    assert_eq!(one.tab(2).unwrap().owner, agent("b"));
    assert_eq!(one.tab(2).unwrap().label.as_deref(), Some("mine"));
    assert_eq!(one.agents["b"].current, Some(2));
    assert_eq!(one.default_tab("b"), Some(2));
    // b releases t2, its current (given by the user: not closed),
    // keeping t3: its next command runs on t3, never on the user's t2.
    assert_eq!(book.release("b", Some(2), false), Vec::<u64>::new());
    let t2 = book.tab(2).unwrap();
    assert_eq!((&t2.owner, t2.label.as_deref()), (&Owner::User, None));
    assert_eq!(book.agents["b"].current, None);
    assert_eq!(book.default_tab("b"), Some(3));
    assert_eq!(
        book.resolve("b", &TabRef::Id(2)),
        Err(Refused::Foreign {
            id: 2,
            owner: Owner::User
        })
    );
}

#[test]
fn release_of_every_tab_of_the_session_keeps_the_last() {
    // a took the spare tab and its page opened t2: a opened both.
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    assert_eq!(book.default_tab("a"), Some(1));
    ran(&mut book, &opens("a", 1), &seen(&[A, B], 0));
    assert!(book.tabs.iter().all(|t| t.opened));
    assert_eq!(book.release("a", None, false), vec![1]);
    let got: Vec<(u64, Owner, bool)> = book
        .tabs
        .iter()
        .map(|t| (t.id, t.owner.clone(), t.opened))
        .collect();
    // t1, to close, is a's until it is; the last one left, the user's.
    assert_eq!(got, vec![(1, agent("a"), true), (2, Owner::User, false)]);
    assert!(book.agents.contains_key("a"));
    book.tabs.retain(|t| t.id != 1);
    assert!(book.released_all("a") && !book.agents.contains_key("a"));
}

#[test]
fn tabs_past_the_cap_go_to_the_user_newest_first_never_the_one_acted_on() {
    let mut book = Book::fresh("s", 1, &seen(&[BLANK], 0), true);
    assert_eq!(book.default_tab("a"), Some(1));
    ran(&mut book, &opens("a", 1), &seen(&[A, B, C], 0));
    assert_eq!(book.own("a").len(), 3);
    assert_eq!(book.cap("a", 3, Some(1)), Vec::<u64>::new());
    // The newest first; t3 is the one its command ran on: kept.
    assert_eq!(book.cap("a", 1, Some(3)), vec![2, 1]);
    assert_eq!(book.tab(3).unwrap().owner, agent("a"));
    for id in [1, 2] {
        let tab = book.tab(id).unwrap();
        assert_eq!(tab.owner, Owner::User);
        assert_eq!(tab.why, Some(Why::PastCap("a".into())));
    }
}
