//! The pinned CLI's argument parser, ported: its client reads a command line
//! with its own copy of minimist (`playwright-core/lib/tools/cli-client/
//! minimist.js`, booleans from `help.json`), and my-chrome must read it the
//! same way to know which word the daemon will take as which option or
//! argument. No number coercion (the pinned copy does none); a repeated
//! option becomes a list; `--no-x` is false; `--` ends the options.

use std::collections::BTreeMap;

/// An option's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Bool(bool),
    Text(String),
    List(Vec<Value>),
}

impl Value {
    /// Every text in it (a list's too).
    pub fn texts(&self) -> Vec<&str> {
        match self {
            Value::Bool(_) => Vec::new(),
            Value::Text(text) => vec![text.as_str()],
            Value::List(values) => values.iter().flat_map(Value::texts).collect(),
        }
    }
}

/// A parsed command line: positional words (`_`) and options.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub positional: Vec<String>,
    pub options: BTreeMap<String, Value>,
}

/// Why the parser refuses a line (its own error, as the CLI would print it).
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

fn looks_like_option(word: &str) -> bool {
    // minimist: /^(-|--)[^-]/
    let rest = word.strip_prefix("--").or_else(|| word.strip_prefix('-'));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('-'))
}

/// minimist's `/-?\d+(\.\d*)?(e-?\d+)?$/`, unanchored at the start: the
/// text ends in a digit, or in a digit and a dot.
fn ends_in_number(text: &str) -> bool {
    match text.as_bytes() {
        [.., last] if last.is_ascii_digit() => true,
        [.., digit, b'.'] => digit.is_ascii_digit(),
        _ => false,
    }
}

/// Parses `args` as the pinned client does, `booleans` being its boolean
/// options.
pub fn parse(args: &[String], booleans: &[&str]) -> Result<Parsed, ParseError> {
    let is_bool = |key: &str| booleans.contains(&key);
    let mut parsed = Parsed::default();
    let set = |options: &mut BTreeMap<String, Value>, key: &str, value: Value| {
        let merged = match options.remove(key) {
            None => value,
            Some(_) if is_bool(key) => value,
            Some(Value::Bool(_)) => value,
            Some(Value::List(mut values)) => {
                values.push(value);
                Value::List(values)
            }
            Some(old) => Value::List(vec![old, value]),
        };
        options.insert(key.to_string(), merged);
    };
    let (args, after_dashes) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &args[args.len()..]),
    };
    // A bare option is `true`: the pinned client declares no string option
    // but `_`, so never `""`.
    let bare = |_: &str| Value::Bool(true);
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        // minimist's /^--.+=/: an `=` after at least one character.
        let assignment = arg
            .strip_prefix("--")
            .filter(|b| b.char_indices().skip(1).any(|(_, c)| c == '='));
        if let Some(body) = assignment {
            let Some((key, value)) = body.split_once('=').filter(|(key, _)| !key.is_empty()) else {
                // `--=…=`: the pinned parser fails on it (its match is null).
                return Err(ParseError(format!("cannot parse the option {arg:?}")));
            };
            if is_bool(key) {
                return Err(ParseError(format!(
                    "boolean option '--{key}' should not be passed with '=value', use '--{key}' or '--no-{key}' instead"
                )));
            }
            set(&mut parsed.options, key, Value::Text(value.to_string()));
        } else if let Some(key) = arg.strip_prefix("--no-").filter(|k| !k.is_empty()) {
            set(&mut parsed.options, key, Value::Bool(false));
        } else if let Some(key) = arg.strip_prefix("--").filter(|k| !k.is_empty()) {
            let next = args.get(i + 1).map(String::as_str);
            match next {
                Some(next) if !looks_like_option(next) && !is_bool(key) => {
                    set(&mut parsed.options, key, Value::Text(next.to_string()));
                    i += 1;
                }
                Some(flag @ ("true" | "false")) => {
                    set(&mut parsed.options, key, Value::Bool(flag == "true"));
                    i += 1;
                }
                _ => set(&mut parsed.options, key, bare(key)),
            }
        } else if arg.len() > 1 && arg.starts_with('-') && !arg[1..].starts_with('-') {
            let chars: Vec<char> = arg.chars().collect();
            let letters = &chars[1..chars.len() - 1];
            let mut broken = false;
            for (j, letter) in letters.iter().enumerate() {
                let key = letter.to_string();
                let next: String = chars[j + 2..].iter().collect();
                if next == "-" {
                    set(&mut parsed.options, &key, Value::Text(next));
                    continue;
                }
                if letter.is_ascii_alphabetic() && next.starts_with('=') {
                    set(
                        &mut parsed.options,
                        &key,
                        Value::Text(next[1..].to_string()),
                    );
                    broken = true;
                    break;
                }
                if letter.is_ascii_alphabetic() && ends_in_number(&next) {
                    set(&mut parsed.options, &key, Value::Text(next));
                    broken = true;
                    break;
                }
                if letters
                    .get(j + 1)
                    .is_some_and(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
                {
                    set(&mut parsed.options, &key, Value::Text(next));
                    broken = true;
                    break;
                }
                set(&mut parsed.options, &key, bare(&key));
            }
            let key = chars[chars.len() - 1].to_string();
            if !broken && key != "-" {
                let next = args
                    .get(i + 1)
                    .map(String::as_str)
                    .filter(|n| !n.is_empty());
                match next {
                    Some(next) if !looks_like_option(next) && !is_bool(&key) => {
                        set(&mut parsed.options, &key, Value::Text(next.to_string()));
                        i += 1;
                    }
                    Some(flag @ ("true" | "false")) => {
                        set(&mut parsed.options, &key, Value::Bool(flag == "true"));
                        i += 1;
                    }
                    _ => set(&mut parsed.options, &key, bare(&key)),
                }
            }
        } else {
            parsed.positional.push(arg.to_string());
        }
        i += 1;
    }
    parsed.positional.extend(after_dashes.iter().cloned());
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }

    #[test]
    fn options_and_positionals_as_minimist_reads_them() {
        let parsed = parse(
            &words(&[
                "screenshot",
                "--filename",
                "/x.png",
                "e5",
                "--full-page",
                "--no-json",
                "--",
                "--raw",
            ]),
            &["full-page", "json", "raw"],
        )
        .unwrap();
        assert_eq!(parsed.positional, words(&["screenshot", "e5", "--raw"]));
        assert_eq!(parsed.options["filename"], text("/x.png"));
        assert_eq!(parsed.options["full-page"], Value::Bool(true));
        assert_eq!(parsed.options["json"], Value::Bool(false));

        // A value that looks like an option is not taken; a lone "-" is.
        let parsed = parse(&words(&["x", "--filename", "-y", "--a", "-"]), &[]).unwrap();
        assert_eq!(parsed.options["filename"], Value::Bool(true));
        assert_eq!(parsed.options["y"], Value::Bool(true));
        assert_eq!(parsed.options["a"], text("-"));
        assert_eq!(parsed.positional, words(&["x"]));
        // Repeated: a list; `=` keeps everything after the first `=`.
        let parsed = parse(&words(&["--f=a=b", "--f", "c"]), &[]).unwrap();
        assert_eq!(
            parsed.options["f"],
            Value::List(vec![text("a=b"), text("c")])
        );
        // `true`/`false` after a boolean are its value.
        let parsed = parse(&words(&["--raw", "false", "x"]), &["raw"]).unwrap();
        assert_eq!(parsed.options["raw"], Value::Bool(false));
        assert_eq!(parsed.positional, words(&["x"]));
        assert!(parse(&words(&["--json=true"]), &["json"]).is_err());
    }

    #[test]
    fn short_options_follow_minimist() {
        let parsed = parse(&words(&["-s=other", "-abc", "v", "-n5", "-x", "-"]), &[]).unwrap();
        assert_eq!(parsed.options["s"], text("other"));
        assert_eq!(parsed.options["a"], Value::Bool(true));
        assert_eq!(parsed.options["b"], Value::Bool(true));
        assert_eq!(parsed.options["c"], text("v"));
        assert_eq!(parsed.options["n"], text("5"));
        assert_eq!(parsed.options["x"], text("-"));
        assert!(parsed.positional.is_empty());
    }

    #[test]
    fn a_number_at_the_end() {
        for yes in ["5", "a5", "-5", "1.5", "1.", "2e10", "2e-3", "x.5"] {
            assert!(ends_in_number(yes), "{yes}");
        }
        for no in ["", "a", "5a", "e", ".", "a.", "5e"] {
            assert!(!ends_in_number(no), "{no}");
        }
    }
}
