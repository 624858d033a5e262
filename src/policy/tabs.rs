//! What a forwarded command reaches, and the tab it names, from the line
//! alone (docs/DESIGN.md, "Agents side by side"). No I/O.
//!
//! Every forwarded command's scope is its table entry's
//! (`pinned_commands`), read from the pinned tool's own code
//! (tests/scope.rs checks the table against it).

use crate::exit::Exit;
use crate::pinned_commands;
pub use crate::pinned_commands::Scope;
use crate::token_shape::redact_runs;

/// The scope of a command by its name (`None` for `list`; a page for a
/// name the pin does not document, which is never forwarded).
pub fn scope_of(command: &str) -> Scope {
    pinned_commands::find(command).map_or(Scope::Page, |c| c.scope)
}

/// Whether `command` is defined on the context in the pinned code although
/// it acts on one page (the table's exceptions, for tests/scope.rs).
pub fn page_despite_context_tool(command: &str) -> bool {
    pinned_commands::find(command).is_some_and(|c| c.on_context)
}

/// Whether a tab that appears while `command` runs is the command's: a page
/// it acted on opened it (a popup, a link to a new window).
pub fn may_open_tabs(command: &str) -> bool {
    pinned_commands::find(command).is_some_and(|c| c.opens_tabs)
}

/// How a command names a tab: an id (`t7`), the agent's own index (`0`),
/// or a label the agent gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TabRef {
    Id(u64),
    Index(usize),
    Label(String),
}

impl TabRef {
    pub fn parse(raw: &str) -> Result<TabRef, TabArgError> {
        if let Some(n) = raw.strip_prefix('t').filter(|n| all_digits(n)) {
            return n
                .parse()
                .map(TabRef::Id)
                .map_err(|_| TabArgError::BadRef(raw.into()));
        }
        if all_digits(raw) {
            return raw
                .parse()
                .map(TabRef::Index)
                .map_err(|_| TabArgError::BadRef(raw.into()));
        }
        label(raw)
            .map(TabRef::Label)
            .map_err(|_| TabArgError::BadRef(raw.into()))
    }
}

impl std::fmt::Display for TabRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TabRef::Id(id) => write!(f, "t{id}"),
            TabRef::Index(i) => write!(f, "index {i}"),
            TabRef::Label(l) => write!(f, "label {l:?}"),
        }
    }
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A label: 1–32 letters, digits, '.', '_' or '-', starting with a letter,
/// and not shaped like an id (`t7`).
pub fn label(raw: &str) -> Result<String, TabArgError> {
    let ok = (1..=32).contains(&raw.len())
        && raw.starts_with(|c: char| c.is_ascii_alphabetic())
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !(raw.starts_with('t') && all_digits(&raw[1..]));
    if ok {
        Ok(raw.to_string())
    } else {
        Err(TabArgError::BadLabel(raw.into()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TabArgError {
    #[error(
        "{:?} names no tab: a tab is named by its id (`t7`), your own index in `my-chrome \
         tab-list` (`0`), or a label you gave it",
        redact_runs(.0)
    )]
    BadRef(String),
    #[error(
        "{:?} is not a tab label: 1 to 32 letters, digits, '.', '_' or '-', starting with a \
         letter, and not an id such as `t7`",
        redact_runs(.0)
    )]
    BadLabel(String),
    #[error("`{0}` is given twice; name one")]
    Twice(&'static str),
    #[error("`{0}` needs a value")]
    Missing(&'static str),
    #[error(
        "`--label` only goes with `tab-new` (a tab is labelled when it opens, or when claimed)"
    )]
    LabelWithout,
}

impl TabArgError {
    pub fn exit(&self) -> Exit {
        Exit::Usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_forwarded_command_has_one_scope() {
        assert_eq!(scope_of("cookie-list"), Scope::Context);
        assert_eq!(scope_of("video-show-actions"), Scope::Context);
        assert_eq!(scope_of("resume"), Scope::Session);
        assert_eq!(scope_of("goto"), Scope::Page);
        assert_eq!(scope_of("tab-close"), Scope::Tabs);
        assert_eq!(scope_of("list"), Scope::None);
        assert!(may_open_tabs("click") && may_open_tabs("eval"));
        assert!(!may_open_tabs("snapshot") && !may_open_tabs("tab-new"));
        assert!(page_despite_context_tool("goto") && !page_despite_context_tool("click"));
        // What only reads is a page command.
        for command in pinned_commands::table().iter().filter(|c| c.only_reads) {
            assert_eq!(command.scope, Scope::Page, "{}", command.name);
        }
    }

    #[test]
    fn tab_references_are_ids_indexes_or_labels() {
        assert_eq!(TabRef::parse("t7"), Ok(TabRef::Id(7)));
        assert_eq!(TabRef::parse("0"), Ok(TabRef::Index(0)));
        assert_eq!(TabRef::parse("cart"), Ok(TabRef::Label("cart".into())));
        assert_eq!(TabRef::parse("tab2"), Ok(TabRef::Label("tab2".into())));
        for bad in ["", "-1", "a b", "t99999999999999999999999", "2x", "é"] {
            assert!(TabRef::parse(bad).is_err(), "{bad:?}");
        }
        assert!(label("t12").is_err(), "an id is no label");
        assert!(label(&"a".repeat(33)).is_err());
    }

    #[test]
    fn a_tab_reference_is_shown_as_what_it_names() {
        assert_eq!(TabRef::Id(7).to_string(), "t7");
        assert_eq!(TabRef::Index(0).to_string(), "index 0");
        assert_eq!(TabRef::Label("cart".into()).to_string(), "label \"cart\"");
    }
}
