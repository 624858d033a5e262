//! The pinned CLI's argument parser, ported: its client reads a command line
//! with its own copy of minimist (`playwright-core/lib/tools/cli-client/
//! minimist.js`, booleans from `help.json`), and my-chrome must read it the
//! same way to know which word the daemon will take as which option or
//! argument. No number coercion (the pinned copy does none); a repeated
//! option becomes a list; `--no-x` is false; `--` ends the options; `_` is
//! the positional list; a JavaScript `.` stops at line terminators. One
//! known difference: JavaScript splits a short option made of a character
//! outside the Basic Multilingual Plane (`-😀`) into two surrogate keys,
//! where this keeps one; the words each takes are the same, and no such
//! key names a file.

/// An option's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Bool(bool),
    Text(String),
    List(Vec<Value>),
}

impl Value {
    /// JavaScript's truthiness of the value (an empty text is false).
    pub fn truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Text(text) => !text.is_empty(),
            Value::List(_) => true,
        }
    }

    /// Every text in it (a list's too).
    pub fn texts(&self) -> Vec<&str> {
        match self {
            Value::Bool(_) => Vec::new(),
            Value::Text(text) => vec![text.as_str()],
            Value::List(values) => values.iter().flat_map(Value::texts).collect(),
        }
    }
}

/// A parsed command line: positional words (`_`: texts, or a boolean that
/// `--no-_` put there) and options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub positional: Vec<Value>,
    pub options: Options,
}

/// Options in the order JavaScript keeps an object's keys: where each was
/// first set (a later value takes the first one's place).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options(Vec<(String, Value)>);

impl Options {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, in its first place when it was set before.
    pub fn insert(&mut self, key: &str, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => *old = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// In insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for Options {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or_else(|| panic!("no option {key:?}"))
    }
}

/// Whether JavaScript treats `key` as an array index, which an object
/// lists before its other keys, in numeric order.
fn is_array_index(key: &str) -> bool {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    canonical
        && key.bytes().all(|b| b.is_ascii_digit())
        && key.parse::<u64>().is_ok_and(|n| n < u32::MAX as u64)
}

impl Value {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Text(t) => serde_json::Value::String(t.clone()),
            Value::List(values) => values.iter().map(Value::to_json).collect(),
        }
    }
}

impl Parsed {
    /// The keys of minimist's result object as JavaScript orders them:
    /// array indices first (ascending), then `_` (set when the object is
    /// made), then the others where they were first set.
    pub fn keys_in_js_order(&self) -> Vec<&str> {
        let mut indices: Vec<&str> = self
            .options
            .iter()
            .map(|(k, _)| k)
            .filter(|k| is_array_index(k))
            .collect();
        indices.sort_by_key(|k| k.parse::<u64>().unwrap_or(0));
        let others = self
            .options
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !is_array_index(k));
        indices.into_iter().chain(["_"]).chain(others).collect()
    }

    /// `JSON.stringify` of minimist's result object, byte for byte.
    pub fn to_js_json(&self) -> String {
        let fields: Vec<String> = self
            .keys_in_js_order()
            .into_iter()
            .map(|key| {
                let value = match key {
                    "_" => self.positional.iter().map(Value::to_json).collect(),
                    _ => self.options[key].to_json(),
                };
                format!("{}:{}", serde_json::Value::String(key.to_string()), value)
            })
            .collect();
        format!("{{{}}}", fields.join(","))
    }
}

impl Parsed {
    /// Words that this parser reads back into exactly this form, when
    /// every key is a [`plain_key`] and every positional a text: each
    /// option in its place (`--key=text`, `--key`, `--no-key`; a text of a
    /// one-letter boolean as `-k=text`, the only spelling that gives a
    /// boolean a text), then `--` and the positional words. A positional
    /// that is no text (`--no-_` puts `false` there) has no spelling after
    /// `--` and is left out: `policy::line` refuses such a line first.
    pub fn to_words(&self, booleans: &[&str]) -> Vec<String> {
        let mut words = Vec::new();
        for (key, value) in self.options.iter() {
            let values = match value {
                Value::List(values) => values.as_slice(),
                single => std::slice::from_ref(single),
            };
            for value in values {
                words.push(match value {
                    Value::Bool(true) => format!("--{key}"),
                    Value::Bool(false) => format!("--no-{key}"),
                    Value::Text(text) if booleans.contains(&key) => format!("-{key}={text}"),
                    Value::Text(text) => format!("--{key}={text}"),
                    // A list holds no list (`set` never nests one).
                    Value::List(_) => continue,
                });
            }
        }
        words.push("--".into());
        words.extend(self.positional.iter().filter_map(|value| match value {
            Value::Text(text) => Some(text.clone()),
            _ => None,
        }));
        words
    }
}

/// An option name made of ASCII letters, digits, `-`, `_` and `.`, not
/// starting with `-`: every option the pinned CLI has is one, and only such
/// a name has a long spelling that reads back as itself (a line break, say,
/// has none; nor has `-`, which a group of short flags like `-n-` makes:
/// `---` is no option to minimist, so a flag before it would take it as
/// its value).
pub fn plain_key(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with('-')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
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

/// JavaScript's line terminators, which a regex `.` does not match.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// What a JavaScript `.+` at the start of `text` can take: up to the first
/// line terminator.
fn first_line(text: &str) -> &str {
    &text[..text.find(is_line_terminator).unwrap_or(text.len())]
}

impl Parsed {
    /// minimist's `setArg`. `_` is the client's one string option and
    /// already a list: whatever is set to it joins the positional words.
    fn set(&mut self, key: &str, value: Value, is_bool: bool) {
        if key == "_" {
            self.positional.push(value);
            return;
        }
        let merged = match self.options.get(key).cloned() {
            None => value,
            Some(_) if is_bool => value,
            Some(Value::Bool(_)) => value,
            Some(Value::List(mut values)) => {
                values.push(value);
                Value::List(values)
            }
            Some(old) => Value::List(vec![old, value]),
        };
        self.options.insert(key, merged);
    }
}

/// A bare option: `""` for the client's one string option (`_`), else true.
fn bare(key: &str) -> Value {
    if key == "_" {
        Value::Text(String::new())
    } else {
        Value::Bool(true)
    }
}

/// Parses `args` as the pinned client does, `booleans` being its boolean
/// options (`program.js`: `minimist(argv, { boolean, string: ["_"] })`).
pub fn parse(args: &[String], booleans: &[&str]) -> Result<Parsed, ParseError> {
    let is_bool = |key: &str| booleans.contains(&key);
    let mut parsed = Parsed::default();
    let (args, after_dashes) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &args[args.len()..]),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let long = arg.strip_prefix("--");
        // /^--.+=/: an `=` after at least one character, on the first line.
        let assignment =
            long.filter(|b| first_line(b).char_indices().skip(1).any(|(_, c)| c == '='));
        // /^--no-.+/ and /^--.+/ take the key up to a line terminator.
        let negated = long
            .and_then(|b| b.strip_prefix("no-"))
            .map(first_line)
            .filter(|k| !k.is_empty());
        let flag = long.map(first_line).filter(|k| !k.is_empty());
        if let Some(body) = assignment {
            // /^--([^=]+)=([\s\S]*)$/; null (a TypeError) for `--=…`.
            let Some((key, value)) = body.split_once('=').filter(|(key, _)| !key.is_empty()) else {
                return Err(ParseError(format!("cannot parse the option {arg:?}")));
            };
            if is_bool(key) {
                return Err(ParseError(format!(
                    "boolean option '--{key}' should not be passed with '=value', use '--{key}' or '--no-{key}' instead"
                )));
            }
            parsed.set(key, Value::Text(value.to_string()), false);
        } else if let Some(key) = negated {
            parsed.set(key, Value::Bool(false), is_bool(key));
        } else if let Some(key) = flag {
            let next = args.get(i + 1).map(String::as_str);
            match next {
                Some(next) if !looks_like_option(next) && !is_bool(key) => {
                    parsed.set(key, Value::Text(next.to_string()), false);
                    i += 1;
                }
                Some(word @ ("true" | "false")) => {
                    parsed.set(key, Value::Bool(word == "true"), is_bool(key));
                    i += 1;
                }
                _ => parsed.set(key, bare(key), is_bool(key)),
            }
        } else if arg.starts_with('-') && arg.as_bytes().get(1).is_some_and(u8::is_ascii_alphabetic)
        {
            // minimist: /^-[A-Za-z]/ (so `-100` and `-_` are arguments)
            short(
                &mut parsed,
                arg,
                args.get(i + 1).map(String::as_str),
                &is_bool,
                &mut i,
            );
        } else {
            parsed.positional.push(Value::Text(arg.to_string()));
        }
        i += 1;
    }
    parsed
        .positional
        .extend(after_dashes.iter().map(|w| Value::Text(w.clone())));
    Ok(parsed)
}

/// `-abc [next]`: minimist's short options.
fn short(
    parsed: &mut Parsed,
    arg: &str,
    following: Option<&str>,
    is_bool: &dyn Fn(&str) -> bool,
    i: &mut usize,
) {
    let chars: Vec<char> = arg.chars().collect();
    let letters = &chars[1..chars.len() - 1];
    for (j, letter) in letters.iter().enumerate() {
        let key = letter.to_string();
        let next: String = chars[j + 2..].iter().collect();
        if next == "-" {
            parsed.set(&key, Value::Text(next), is_bool(&key));
            continue;
        }
        let alphabetic = letter.is_ascii_alphabetic();
        let followed_by_symbol = letters
            .get(j + 1)
            .is_some_and(|c| !(c.is_ascii_alphanumeric() || *c == '_'));
        if (alphabetic && (next.starts_with('=') || ends_in_number(&next))) || followed_by_symbol {
            let value = if alphabetic && next.starts_with('=') {
                next[1..].to_string()
            } else {
                next
            };
            parsed.set(&key, Value::Text(value), is_bool(&key));
            return;
        }
        parsed.set(&key, bare(&key), is_bool(&key));
    }
    let key = chars[chars.len() - 1].to_string();
    if key == "-" {
        return;
    }
    match following.filter(|n| !n.is_empty()) {
        Some(next) if !looks_like_option(next) && !is_bool(&key) => {
            parsed.set(&key, Value::Text(next.to_string()), false);
            *i += 1;
        }
        Some(word @ ("true" | "false")) => {
            parsed.set(&key, Value::Bool(word == "true"), is_bool(&key));
            *i += 1;
        }
        _ => parsed.set(&key, bare(&key), is_bool(&key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn texts(line: &[&str]) -> Vec<Value> {
        line.iter().map(|s| text(s)).collect()
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
        assert_eq!(parsed.positional, texts(&["screenshot", "e5", "--raw"]));
        assert_eq!(parsed.options["filename"], text("/x.png"));
        assert_eq!(parsed.options["full-page"], Value::Bool(true));
        assert_eq!(parsed.options["json"], Value::Bool(false));

        // A value that looks like an option is not taken; a lone "-" is.
        let parsed = parse(&words(&["x", "--filename", "-y", "--a", "-"]), &[]).unwrap();
        assert_eq!(parsed.options["filename"], Value::Bool(true));
        assert_eq!(parsed.options["y"], Value::Bool(true));
        assert_eq!(parsed.options["a"], text("-"));
        assert_eq!(parsed.positional, texts(&["x"]));
        // Repeated: a list; `=` keeps everything after the first `=`.
        let parsed = parse(&words(&["--f=a=b", "--f", "c"]), &[]).unwrap();
        assert_eq!(
            parsed.options["f"],
            Value::List(vec![text("a=b"), text("c")])
        );
        // `true`/`false` after a boolean are its value.
        let parsed = parse(&words(&["--raw", "false", "x"]), &["raw"]).unwrap();
        assert_eq!(parsed.options["raw"], Value::Bool(false));
        assert_eq!(parsed.positional, texts(&["x"]));
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
        // Only a letter after one dash makes short options.
        let parsed = parse(&words(&["mousewheel", "0", "-100", "-é", "-\n"]), &[]).unwrap();
        assert_eq!(
            parsed.positional,
            texts(&["mousewheel", "0", "-100", "-é", "-\n"])
        );
        assert!(parsed.options.is_empty());
    }

    #[test]
    fn the_underscore_and_line_breaks_follow_javascript() {
        // `_` is the positional list itself.
        let parsed = parse(
            &words(&["state-save", "--_", "/x", "--_=/y", "-_", "/z"]),
            &[],
        )
        .unwrap();
        assert_eq!(
            parsed.positional,
            texts(&["state-save", "/x", "/y", "-_", "/z"])
        );
        // A key ends at a line terminator, which `.` does not match.
        let parsed = parse(&words(&["x", "--filename\n", "/p"]), &[]).unwrap();
        assert_eq!(parsed.options["filename"], text("/p"));
        let parsed = parse(&words(&["--\n/../a", "b"]), &[]).unwrap();
        assert_eq!(parsed.positional, texts(&["--\n/../a", "b"]));
        let parsed = parse(&words(&["--a\u{2028}=b"]), &[]).unwrap();
        assert_eq!(parsed.options["a"], Value::Bool(true));
    }

    /// The whole parse: positional words and options in their order.
    fn exact(positional: &[&str], options: &[(&str, Value)]) -> Parsed {
        Parsed {
            positional: texts(positional),
            options: Options(
                options
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
        }
    }

    #[test]
    fn options_contains_exactly_the_keys_set() {
        // minimist.js: {"_":["x"],"a":false}
        let parsed = parse(&words(&["x", "--no-a"]), &[]).unwrap();
        assert_eq!(parsed, exact(&["x"], &[("a", Value::Bool(false))]));
        // A key set to false is still there; one never set is not.
        assert!(parsed.options.contains("a"));
        assert!(!parsed.options.contains("x"));
        assert!(!parsed.options.contains("b"));
    }

    #[test]
    fn options_are_empty_only_when_none_is_set() {
        // minimist.js: {"_":["x"],"a":false} and {"_":["x"]}
        let parsed = parse(&words(&["x", "--no-a"]), &[]).unwrap();
        assert!(!parsed.options.is_empty());
        let parsed = parse(&words(&["x"]), &[]).unwrap();
        assert_eq!(parsed, exact(&["x"], &[]));
        assert!(parsed.options.is_empty());
    }

    #[test]
    fn a_repeated_boolean_keeps_its_last_value_even_a_text() {
        // A short boolean can still be given a text (`-r5`); set again, it
        // is replaced, never made a list. minimist.js, boolean ["r"]:
        // {"_":["x"],"r":"6"}; not boolean: {"_":["x"],"r":["5","6"]}.
        let parsed = parse(&words(&["-r5", "-r6", "x"]), &["r"]).unwrap();
        assert_eq!(parsed, exact(&["x"], &[("r", text("6"))]));
        let parsed = parse(&words(&["-r5", "-r6", "x"]), &[]).unwrap();
        let list = Value::List(vec![text("5"), text("6")]);
        assert_eq!(parsed, exact(&["x"], &[("r", list)]));
    }

    #[test]
    fn a_short_boolean_takes_true_or_false_after_it() {
        // minimist.js, boolean ["r"]: {"_":["x"],"r":false} and
        // {"_":["x"],"a":true,"r":true}: the word is taken, not positional.
        let parsed = parse(&words(&["-r", "false", "x"]), &["r"]).unwrap();
        assert_eq!(parsed, exact(&["x"], &[("r", Value::Bool(false))]));
        let parsed = parse(&words(&["-ar", "true", "x"]), &["r"]).unwrap();
        assert_eq!(
            parsed,
            exact(
                &["x"],
                &[("a", Value::Bool(true)), ("r", Value::Bool(true))]
            )
        );
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

    #[test]
    fn written_back_a_line_reads_the_same() {
        let booleans = ["json", "raw", "full-page", "g", "no-shell"];
        for line in [
            &["--json", "snapshot", "--tab", "t3", "--depth", "2"][..],
            &[
                "-g=5",
                "x",
                "--no-full-page",
                "--f=a",
                "--f",
                "--f=b",
                "--",
                "--raw",
            ],
            &["x", "--raw", "false", "--=", "-ab", "v", "-n5"],
            &["--\n/x", "--a\u{2028}=b", "-_", "-é", "-100"],
        ] {
            let parsed = parse(&words(line), &booleans).unwrap_or_default();
            let back = parse(&parsed.to_words(&booleans), &booleans).unwrap();
            assert_eq!(back, parsed, "{line:?} -> {:?}", parsed.to_words(&booleans));
        }
        // Found by the property below: a group of short flags can make the
        // key `-`, whose long spelling `---` is no option to minimist (a
        // flag written before it takes it as its value): no plain key.
        let parsed = parse(&words(&["-no-0", "---", "-no-"]), &booleans).unwrap();
        assert!(
            parsed.options.iter().any(|(key, _)| key == "-"),
            "{parsed:?}"
        );
        assert!(!plain_key("-") && !plain_key("-x") && plain_key("x-"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        #[test]
        fn any_line_written_back_reads_the_same(
            line in proptest::collection::vec(
                "(--?(no-)?)?(json|raw|g|h|x|tab|[a-z_]{1,3})?(=|\\n)?[a-z0-9=. -]{0,4}",
                0..8,
            ),
        ) {
            let booleans = ["json", "raw", "g", "h"];
            if let Ok(parsed) = parse(&line, &booleans)
                && parsed.positional.iter().all(|v| matches!(v, Value::Text(_)))
                && parsed.options.iter().all(|(key, _)| plain_key(key))
            {
                let back = parse(&parsed.to_words(&booleans), &booleans).unwrap();
                proptest::prop_assert_eq!(back, parsed);
            }
        }
    }
}
