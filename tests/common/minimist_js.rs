//! The pinned client's own `minimist.js`, run by node with the client's
//! boolean options: the reference the port (src/minimist.rs) and every
//! reading of a command line are held to.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use my_chrome::pinned_commands::booleans;

/// A node process that parses one JSON array of words per line with the
/// pinned minimist.js, as program.js calls it.
pub struct Reference {
    _child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Reference {
    pub fn start() -> Reference {
        let minimist = super::golden_runtime()
            .join("cli/node_modules/playwright-core/lib/tools/cli-client/minimist.js");
        let script = r#"
            const { minimist } = require(process.argv[1]);
            const boolean = JSON.parse(process.argv[2]);
            const lines = require('readline').createInterface({ input: process.stdin });
            lines.on('line', line => {
              let out;
              try { out = minimist(JSON.parse(line), { boolean, string: ['_'] }); }
              catch (e) { out = { thrown: e.message }; }
              process.stdout.write(JSON.stringify(out) + '\n');
            });
        "#;
        let mut child = Command::new(super::system_node())
            .arg("-e")
            .arg(script)
            .arg(minimist)
            .arg(serde_json::to_string(booleans()).unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Reference {
            _child: child,
            input,
            output,
        }
    }

    /// `JSON.stringify` of minimist.js's answer, or `None` when it throws.
    pub fn parse(&mut self, words: &[String]) -> Option<String> {
        writeln!(self.input, "{}", serde_json::to_string(words).unwrap()).unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        let line = line.trim_end_matches('\n');
        let thrown = serde_json::from_str::<serde_json::Value>(line)
            .unwrap()
            .get("thrown")
            .is_some();
        (!thrown).then(|| line.to_string())
    }
}
