//! The pinned CLI's documented commands, and which of their options and
//! arguments name a file: `skill/cli/commands.txt`, generated from the
//! pinned package's own `help.json` by `scripts/cli-commands.sh` and
//! embedded like the lock, so that a pin move cannot widen what my-chrome
//! forwards without a visible change here (a test compares it with the
//! installed CLI).

use std::sync::OnceLock;

const TABLE: &str = include_str!("../skill/cli/commands.txt");
// What the pinned client's own `help.json` (skill/cli/help.json) says of its
// options and commands, made a table by build.rs: `HELP_BOOLEANS` and
// `HELP_COMMANDS`.
include!(concat!(env!("OUT_DIR"), "/help-table.rs"));

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

/// One documented command.
#[derive(Debug, PartialEq, Eq)]
pub struct CliCommand {
    pub name: &'static str,
    /// Options that name a file, without their `--`.
    pub file_flags: Vec<&'static str>,
    /// Positional arguments (from 0) that name a file.
    pub file_args: Vec<usize>,
    /// A variadic argument that names files: every positional word from
    /// this one on (`N...` in the table).
    pub file_rest: Option<usize>,
}

/// Every documented command, in the order of the CLI's `--help`.
pub fn table() -> &'static [CliCommand] {
    static PARSED: OnceLock<Vec<CliCommand>> = OnceLock::new();
    PARSED.get_or_init(|| parse(TABLE))
}

fn parse(text: &'static str) -> Vec<CliCommand> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next().expect("a line starts with a name");
            let (mut file_flags, mut file_args, mut file_rest) = (Vec::new(), Vec::new(), None);
            for word in words {
                let index = |w: &str| w.parse::<usize>().expect("a positional index");
                match (word.strip_prefix("--"), word.strip_suffix("...")) {
                    (Some(flag), _) => file_flags.push(flag),
                    (None, Some(from)) => file_rest = Some(index(from)),
                    (None, None) => file_args.push(index(word)),
                }
            }
            CliCommand {
                name,
                file_flags,
                file_args,
                file_rest,
            }
        })
        .collect()
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
        let parsed = parse("# a comment\nupload 0...\nfind --filename\nstate-save 0\n");
        assert_eq!(parsed[0].file_rest, Some(0));
        assert!(parsed[0].file_args.is_empty());
        assert_eq!(parsed[1].file_flags, vec!["filename"]);
        assert_eq!(
            (parsed[2].file_args.clone(), parsed[2].file_rest),
            (vec![0], None)
        );
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
