//! The pinned CLI's documented commands, one entry each, and all that
//! my-chrome decides by a command's name: whether it is forwarded (or
//! refused, and why), what it reaches, whether it is a tab command, only
//! reads, navigates, starts or ends browser-wide state, and which of its
//! options and arguments name a file and whether it writes them. build.rs
//! makes the table from `skill/cli/commands.txt` (generated from the
//! pinned package's own `help.json` by `scripts/cli-commands.sh`) and
//! my-chrome's review of each command (`skill/cli/reviewed.txt`), so that a
//! pin move cannot widen what my-chrome forwards without a visible change
//! here (a test compares commands.txt with the installed CLI). No code
//! outside this table compares a command's name (tests/layout.rs).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

// What the pinned client's own `help.json` (skill/cli/help.json) says of its
// options and commands, made a table by build.rs: `HELP_BOOLEANS` and
// `HELP_COMMANDS`.
include!(concat!(env!("OUT_DIR"), "/help-table.rs"));
// One `Row` per documented command, and the refused ones in the review's
// order: `COMMANDS` and `REFUSED`.
include!(concat!(env!("OUT_DIR"), "/command-table.rs"));

/// One command of `help.json`, as build.rs writes it.
struct HelpRow {
    name: &'static str,
    help: &'static str,
    flags: &'static [&'static str],
    args: usize,
    raw: bool,
    variadic: bool,
}
/// Options the pinned client adds to `help.json`'s booleans (`program.js`).
const CLIENT_BOOLEANS: [&str; 6] = ["all", "g", "help", "json", "raw", "version"];

/// Whether my-chrome forwards a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Forward,
    /// Refused whatever its options: why, and what to use instead.
    Refuse(&'static str),
    /// A name of `my-chrome disconnect` (`close`, `detach`).
    Disconnect,
    /// New with the pin, not reviewed yet: refused until it is.
    Undecided,
}

/// What a forwarded command reaches, read from the pinned tool's own code
/// (tests/scope.rs): a command defined on the current tab (`defineTabTool`)
/// acts on one page; one defined on the browser context (`defineTool`)
/// reaches every tab of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Acts on, or reads, the current tab only.
    Page,
    /// The tab commands: my-chrome answers them from the agent's own tabs.
    Tabs,
    /// Reaches every tab of the session: cookies of every site, routes and
    /// network state, storage state, tracing and video.
    Context,
    /// Acts on the session's debugger, whoever's tab it is paused in.
    Session,
    /// Needs no session (`list`).
    None,
}

/// Which tab command a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TabCommand {
    List,
    New,
    Select,
    Close,
}

/// Browser-wide state a command leaves on for every tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldKind {
    /// `tracing-start` (records every tab) until `tracing-stop`.
    Tracing,
    /// `route` (rewrites every tab's requests) until a bare `unroute`.
    Routes,
    /// `network-state-set offline` until `network-state-set online`.
    Network,
}

/// What a command does to a hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldChange {
    /// It may start one: the hold is recorded before it is sent, and stays
    /// whatever its reply (a command that timed out, failed or was killed
    /// may have started it all the same).
    Starts(HoldKind),
    /// It ends one, once its reply says it ran.
    Ends(HoldKind),
}

/// How a command changes a hold, by its first argument as the daemon reads
/// it ([`HoldRule::change`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldRule {
    Starts(HoldKind),
    Ends(HoldKind),
    /// Ends it without an argument (or an empty one); with one, changes
    /// nothing (`unroute <pattern>` removes some routes only).
    EndsWhenBare(HoldKind),
    /// Ends it when its argument is this word, else starts it
    /// (`network-state-set online`).
    StartsOrEndsIf(HoldKind, &'static str),
}

impl HoldRule {
    /// What a command of this rule does to its hold, given its first
    /// argument as the daemon gets it.
    pub fn change(self, argument: Option<&str>) -> Option<HoldChange> {
        Some(match self {
            HoldRule::Starts(kind) => HoldChange::Starts(kind),
            HoldRule::Ends(kind) => HoldChange::Ends(kind),
            // A pattern removes some routes only; an empty one is no
            // pattern to the daemon (it removes them all).
            HoldRule::EndsWhenBare(kind) => match argument {
                Some(pattern) if !pattern.is_empty() => return None,
                _ => HoldChange::Ends(kind),
            },
            HoldRule::StartsOrEndsIf(kind, word) if argument == Some(word) => {
                HoldChange::Ends(kind)
            }
            HoldRule::StartsOrEndsIf(kind, _) => HoldChange::Starts(kind),
        })
    }
}

/// One entry of the table, as build.rs writes it.
struct Row {
    name: &'static str,
    decision: Decision,
    scope: Scope,
    tab: Option<TabCommand>,
    only_reads: bool,
    on_context: bool,
    navigates: bool,
    in_front: bool,
    hold: Option<HoldRule>,
    file_flags: &'static [&'static str],
    file_args: &'static [usize],
    file_rest: Option<usize>,
    writes: &'static [&'static str],
    reads: &'static [&'static str],
}

/// One documented command, and my-chrome's decisions about it.
#[derive(Debug, PartialEq, Eq)]
pub struct CliCommand {
    pub name: &'static str,
    pub decision: Decision,
    pub scope: Scope,
    pub tab: Option<TabCommand>,
    /// A page command that only reads: a tab that appears while it runs was
    /// not opened by it, so it goes to the user.
    pub only_reads: bool,
    /// Defined on the browser context in the pinned code, yet acting on the
    /// current tab alone (`goto` takes the current tab and navigates it).
    pub on_context: bool,
    /// Its first argument is an address (its scheme is checked).
    pub navigates: bool,
    /// It waits for its tab's frames (an element to hold still, a
    /// picture), which Chromium draws only for the tab in front: it steps
    /// aside (another agent's command brings its own tab there) only past
    /// the daemon's action timeout.
    pub in_front: bool,
    /// A tab that appears while it runs is its own: a page it acted on
    /// opened it (a popup, a link to a new window). A page command that
    /// does more than read.
    pub opens_tabs: bool,
    pub hold: Option<HoldRule>,
    /// Options that name a file, without their `--`.
    pub file_flags: Vec<&'static str>,
    /// Positional arguments (from 0) that name a file.
    pub file_args: Vec<usize>,
    /// A variadic argument that names files: every positional word from
    /// this one on (`N...` in the table).
    pub file_rest: Option<usize>,
    /// The file slots it writes, as commands.txt names them (`--filename`,
    /// `0`); every other one it reads.
    pub writes: Vec<&'static str>,
    /// The file slots it reads (or, `pause-at`, names as a source place).
    pub reads: Vec<&'static str>,
}

impl CliCommand {
    pub fn forwarded(&self) -> bool {
        self.decision == Decision::Forward
    }

    /// Whether `--label` goes with it: a tab is labelled when it opens.
    pub fn takes_label(&self) -> bool {
        self.tab == Some(TabCommand::New)
    }
}

/// Every documented command, in the order of the CLI's `--help`.
pub fn table() -> &'static [CliCommand] {
    static BUILT: OnceLock<Vec<CliCommand>> = OnceLock::new();
    BUILT.get_or_init(|| {
        COMMANDS
            .iter()
            .map(|row| CliCommand {
                name: row.name,
                decision: row.decision,
                scope: row.scope,
                tab: row.tab,
                only_reads: row.only_reads,
                on_context: row.on_context,
                navigates: row.navigates,
                in_front: row.in_front,
                opens_tabs: row.scope == Scope::Page && !row.only_reads,
                hold: row.hold,
                file_flags: row.file_flags.to_vec(),
                file_args: row.file_args.to_vec(),
                file_rest: row.file_rest,
                writes: row.writes.to_vec(),
                reads: row.reads.to_vec(),
            })
            .collect()
    })
}

/// The refused commands, in the order the review gives them.
pub fn refused() -> impl Iterator<Item = &'static CliCommand> {
    REFUSED.iter().filter_map(|name| find(name))
}

/// The options the pinned client parses as booleans (never taking the next
/// word as their value).
pub fn booleans() -> &'static [&'static str] {
    static BOOLEANS: OnceLock<Vec<&'static str>> = OnceLock::new();
    BOOLEANS.get_or_init(|| {
        HELP_BOOLEANS
            .iter()
            .copied()
            .chain(CLIENT_BOOLEANS)
            .collect()
    })
}

/// A command as the pinned client's `help.json` describes it: what its
/// client checks before anything is sent.
#[derive(Debug)]
pub struct HelpEntry {
    /// The command's help text (printed after a refusal).
    pub help: &'static str,
    /// Its options, without `--`.
    pub flags: Vec<&'static str>,
    /// How many positional arguments it takes at most.
    pub args: usize,
    /// Whether the client always asks for raw output.
    pub raw: bool,
    /// Whether its last argument takes any number of words (the client does
    /// not count them).
    pub variadic: bool,
}

/// `help.json`'s entry for `name`.
pub fn help_entry(name: &str) -> Option<HelpEntry> {
    let row = HELP_COMMANDS.iter().find(|row| row.name == name)?;
    Some(HelpEntry {
        help: row.help,
        flags: row.flags.to_vec(),
        args: row.args,
        raw: row.raw,
        variadic: row.variadic,
    })
}

/// The command that loads an address in the current tab: `tab-new <url>`
/// opens a blank tab, then loads its address there with it.
pub fn goto() -> &'static CliCommand {
    find("goto").expect("the pin has goto (a unit test)")
}

pub fn find(name: &str) -> Option<&'static CliCommand> {
    table().iter().find(|c| c.name == name)
}

/// The name among `candidates` closest to a mistyped `name`, when one is
/// close enough to be a likely meaning.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_with_its_file_arguments() {
        assert!(table().len() > 50);
        let screenshot = find("screenshot").unwrap();
        assert_eq!(screenshot.file_flags, vec!["filename"]);
        assert!(screenshot.file_args.is_empty());
        assert_eq!(find("state-save").unwrap().file_args, vec![0]);
        assert_eq!(find("drop").unwrap().file_flags, vec!["path"]);
        // A cookie's path is no file.
        assert!(find("cookie-set").unwrap().file_flags.is_empty());
        // Undocumented commands of the pinned CLI are not in it.
        assert!(find("config-print").is_none() && find("tray").is_none());
        assert!(booleans().contains(&"full-page") && booleans().contains(&"json"));
    }

    #[test]
    fn a_variadic_file_argument_reads_as_every_word_from_its_place() {
        let upload = find("upload").unwrap();
        assert_eq!(upload.file_rest, Some(0));
        assert!(upload.file_args.is_empty() && upload.file_flags.is_empty());
        assert_eq!(upload.reads, ["0..."]);
        let save = find("state-save").unwrap();
        assert_eq!((save.file_args.clone(), save.file_rest), (vec![0], None));
        assert_eq!(save.writes, ["0"]);
    }

    /// Every command of the pin is decided: a pin move fails here until
    /// each new command has its line in skill/cli/reviewed.txt.
    #[test]
    fn every_command_of_the_pin_is_decided() {
        let undecided: Vec<&str> = table()
            .iter()
            .filter(|c| c.decision == Decision::Undecided)
            .map(|c| c.name)
            .collect();
        assert!(
            undecided.is_empty(),
            "undecided commands of the pin: {undecided:?}"
        );
    }

    /// What the review says, entry by entry where it decides something.
    #[test]
    fn the_built_table_is_the_review() {
        let goto = super::goto();
        assert!(goto.forwarded() && goto.navigates && goto.on_context);
        assert_eq!(goto.scope, Scope::Page);
        assert!(goto.opens_tabs && !goto.takes_label());
        let new = find("tab-new").unwrap();
        assert_eq!((new.scope, new.tab), (Scope::Tabs, Some(TabCommand::New)));
        assert!(new.navigates && new.takes_label() && !new.opens_tabs);
        assert!(!find("snapshot").unwrap().opens_tabs);
        assert_eq!(find("cookie-list").unwrap().scope, Scope::Context);
        assert_eq!(find("resume").unwrap().scope, Scope::Session);
        assert_eq!(find("list").unwrap().scope, Scope::None);
        assert_eq!(
            find("network-state-set").unwrap().hold,
            Some(HoldRule::StartsOrEndsIf(HoldKind::Network, "online"))
        );
        assert_eq!(
            find("unroute").unwrap().hold,
            Some(HoldRule::EndsWhenBare(HoldKind::Routes))
        );
        assert_eq!(find("close").unwrap().decision, Decision::Disconnect);
        let Decision::Refuse(why) = find("run-code").unwrap().decision else {
            panic!("run-code is refused");
        };
        assert!(why.starts_with("it runs arbitrary JavaScript") && why.ends_with("in the page"));
        assert_eq!(refused().next().unwrap().name, "open");
        assert!(refused().all(|c| matches!(c.decision, Decision::Refuse(_))));
    }

    /// build.rs's table says what `help.json` says, entry by entry.
    #[test]
    fn the_built_table_is_help_json() {
        let help: serde_json::Value =
            serde_json::from_str(include_str!("../skill/cli/help.json")).unwrap();
        let listed: Vec<&str> = help["booleanOptions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(HELP_BOOLEANS, listed.as_slice());
        let commands = help["commands"].as_object().unwrap();
        assert_eq!(HELP_COMMANDS.len(), commands.len());
        for (name, json) in commands {
            let entry = help_entry(name).unwrap();
            assert_eq!(entry.help, json["help"].as_str().unwrap(), "{name}");
            let mut flags: Vec<&str> = json["flags"]
                .as_object()
                .map(|f| f.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut built = entry.flags.clone();
            flags.sort();
            built.sort();
            assert_eq!(built, flags, "{name}");
            assert_eq!(entry.args, json["args"].as_array().map_or(0, Vec::len));
            assert_eq!(entry.raw, json["raw"] == true, "{name}");
            assert_eq!(entry.variadic, json["variadicArg"] == true, "{name}");
        }
        assert!(
            HELP_COMMANDS.iter().any(|c| c.variadic),
            "a variadic command is in it"
        );
    }

    #[test]
    fn help_json_says_what_the_client_checks() {
        let screenshot = help_entry("screenshot").unwrap();
        assert!(screenshot.flags.contains(&"filename") && screenshot.args == 1);
        assert!(screenshot.help.starts_with("playwright-cli screenshot"));
        assert!(help_entry("cookie-list").unwrap().raw && !screenshot.raw);
        assert!(help_entry("no-such-command").is_none());
    }

    #[test]
    fn a_typo_finds_its_command() {
        let names = || table().iter().map(|c| c.name);
        assert_eq!(nearest("snapshto", names()), Some("snapshot"));
        assert_eq!(nearest("tablist", names()), Some("tab-list"));
        assert_eq!(nearest("frobnicate", names()), None);
    }
}
