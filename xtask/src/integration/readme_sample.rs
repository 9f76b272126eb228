//! README.md's `dplay enum` and `dplay join` sample stays what the commands print (issue 25
//! item 18: samples shorter than the real output). The commands run as the sample shows them,
//! against `dplay host --bind 127.0.0.1:6073 --session "Test Session"` in a private network
//! namespace (6073 is a fixed port); their lines are compared with the sample's, with times,
//! numbers and addresses masked, in any order (a name table's rows follow random DPNIDs).

use anyhow::{Context, ensure};

use super::second_contact::{ended, lan, run_in};
use super::{Suite, WAIT, is};

/// The commands of the sample: each `$ dplay ...` line with the lines it printed.
fn sample() -> anyhow::Result<Vec<(Vec<String>, Vec<String>)>> {
    let readme = include_str!("../../../README.md");
    let start = readme.find("```text\n$ dplay enum localhost:6073").context("no enum sample in README.md")?;
    let block = readme.get(start + "```text\n".len()..).unwrap_or_default();
    let block = block.get(..block.find("```").unwrap_or(block.len())).unwrap_or_default();
    let mut commands: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match (line.strip_prefix("$ dplay "), commands.last_mut()) {
            (Some(command), _) => commands.push((words(command), Vec::new())),
            (None, Some((_, printed))) => printed.push(line.to_owned()),
            (None, None) => {}
        }
    }
    Ok(commands)
}

/// A command line's words, double quotes grouping.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut word: Option<String> = None;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            ' ' if !quoted => out.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// A line with its time dropped and every word that has a digit (ids, addresses, GUIDs) as `#`.
fn masked(line: &str) -> String {
    let line = if line.starts_with('[') { line.split_once("s] ").map_or(line, |(_, l)| l) } else { line };
    let indent = line.len() - line.trim_start().len();
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|w| if w.contains(|c: char| c.is_ascii_digit()) { "#" } else { w })
        .collect();
    format!("{}{}", " ".repeat(indent), words.join(" "))
}

/// The lines, masked and sorted.
fn shape<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut shape: Vec<String> = lines.map(masked).collect();
    shape.sort();
    shape
}

/// Runs each command of the sample in the namespace; its output has the sample's lines.
pub(super) fn enum_and_join(s: &Suite) -> anyhow::Result<()> {
    let commands = sample()?;
    ensure!(commands.len() == 2, "README.md's sample has {} commands, not enum and join", commands.len());
    let Some(net) = lan("dpreadme")? else { return Ok(()) };
    let args =
        ["host", "--json", "--bind", "127.0.0.1:6073", "--session", "Test Session", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "host", &args)?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    for (command, printed) in commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let out = run_in(s, &net, "a", &args)?;
        let (code, err) = ended(&out);
        ensure!(code == Some(0), "{command:?}: exit {code:?}: {err}");
        let real = String::from_utf8_lossy(&out.stdout);
        let (want, got) = (shape(printed.iter().map(String::as_str)), shape(real.lines()));
        ensure!(want == got, "README.md's sample of {command:?} is not what it prints:\n{real}");
    }
    Ok(())
}
