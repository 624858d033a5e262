//! The port of the pinned client's argument parser (src/minimist.rs) against
//! the real thing: the pinned `minimist.js`, run by node with the client's
//! own boolean options, over a fixed corpus and random command lines.

mod common;

use std::sync::Mutex;

use common::minimist_js::Reference;

use my_chrome::minimist;
use my_chrome::pinned_commands::booleans;
use proptest::prelude::*;

/// The port's answer as `JSON.stringify` would write it: keys in
/// JavaScript's order (the native client sends exactly these bytes).
fn ported(words: &[String]) -> Option<String> {
    minimist::parse(words, booleans())
        .ok()
        .map(|parsed| parsed.to_js_json())
}

fn same(reference: &mut Reference, words: &[String]) -> Result<(), String> {
    let expected = reference.parse(words);
    let got = ported(words);
    if got == expected {
        Ok(())
    } else {
        Err(format!("{words:?}: minimist.js {expected:?}, port {got:?}"))
    }
}

fn reference() -> &'static Mutex<Reference> {
    static REFERENCE: std::sync::OnceLock<Mutex<Reference>> = std::sync::OnceLock::new();
    REFERENCE.get_or_init(|| Mutex::new(Reference::start()))
}

#[test]
fn the_port_reads_every_corpus_line_as_minimist_js_does() {
    let corpus: &[&[&str]] = &[
        &["screenshot", "--filename", "/tmp/x.png", "e5"],
        &["screenshot", "--filename=/tmp/x.png", "--full-page"],
        &["--json", "tab-list"],
        &["--raw", "false", "eval", "1"],
        &["--json=true", "tab-list"],
        &["--no-json", "x"],
        &["--filename", "-", "x"],
        &["--filename", "--", "x"],
        &["--filename", "-x", "y"],
        &["video-start", "--size", "800x600", "v.webm"],
        &["a", "--", "--filename=x", "-s", "b"],
        &["-s=mychrome", "tab-list"],
        &["-smychrome", "tab-list"],
        &["-abc", "value"],
        &["-n5", "-x-", "-y=", "-z", "true"],
        &["-a.b", "c"],
        &["-ab1.", "c"],
        &["-", "--", "-"],
        &["--f=a", "--f", "b", "--f=c"],
        &["--f", "x", "--no-f", "--f", "y"],
        &["--full-page=1"],
        &["--headed", "true", "--mobile", "x"],
        &["eval", "() => 1", "--filename", ""],
        &["--a=", "--b", "", "c"],
        &["upload", "/a", "/b", "--", "--c"],
        &["-é", "x"],
        &["--==", "x"],
        &["--=a=b"],
        &["--a==b", "--="],
        &["state-save", "--_", "/x", "--_=/y", "-_", "/z", "--no-_"],
        &["response-body", "1", "--filename\n", "/p"],
        &["--\n/../bootstrap.json", "--a\u{2028}=b", "-\n", "x"],
        &["screenshot", "--filename", "/tmp/😀.png", "x😀y", "--a=😀"],
        // Keys JavaScript orders apart (array indices first), and quoting.
        &["mousewheel", "0", "-100", "--b", "x", "--2", "--10", "--a"],
        &[
            "type",
            "a\"b\\c\u{1}\t\u{7f}\u{2028}",
            "--01",
            "y",
            "--4294967295",
        ],
    ];
    let mut reference = reference().lock().unwrap();
    for line in corpus {
        let words: Vec<String> = line.iter().map(|w| w.to_string()).collect();
        same(&mut reference, &words).unwrap();
    }
}

/// Words made of the pieces that matter to the parser.
fn word() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("-".to_string()),
        Just("--".to_string()),
        Just("=".to_string()),
        Just("no-".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just(".".to_string()),
        Just(" ".to_string()),
        Just("_".to_string()),
        Just("\n".to_string()),
        Just("\u{2028}".to_string()),
        Just("é".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\u{1}".to_string()),
        "[a-c]{1,2}",
        "[0-9]{1,2}",
        prop::sample::select(vec![
            "json".to_string(),
            "raw".to_string(),
            "filename".to_string(),
            "full-page".to_string(),
            "s".to_string(),
            "e".to_string(),
        ]),
    ];
    prop::collection::vec(pieces, 0..5).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn the_port_agrees_with_minimist_js_on_random_lines(line in prop::collection::vec(word(), 0..7)) {
        let mut reference = reference().lock().unwrap();
        prop_assert!(same(&mut reference, &line).is_ok(), "{}", same(&mut reference, &line).unwrap_err());
    }
}
