//! Text from the network at the operator's terminal (issue 25 items 1, 2 and 18): a joiner's
//! hostile name, chat and rename reach the host's text output and its log escaped, renames obey
//! the join limits, and a refused join is said once.

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::second_contact::{ended, run_here};
use super::{Suite, WAIT, free_addr};

/// A name that clears the screen, rings the bell and forges a whole log line.
const FORGED_NAME: &str = "x\n[ 9.999s] player left: host (0x00000000), left\x1b[2J\x07";

/// A thread reading a stream to its end.
type Reader = JoinHandle<Vec<u8>>;

/// A `dplay` whose standard output and error are kept whole as text; killed when dropped.
pub(super) struct Texted {
    child: Child,
    readers: Option<(Reader, Reader)>,
}

impl Texted {
    /// Starts `dplay args...` with `RUST_LOG=debug`, so that its log shows what it was told.
    pub(super) fn start(s: &Suite, args: &[&str]) -> anyhow::Result<Self> {
        let mut child = Command::new(&s.bin)
            .args(args)
            .env("RUST_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start dplay {}", args.join(" ")))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let stderr = child.stderr.take().context("no stderr")?;
        let readers = (read_all(stdout), read_all(stderr));
        Ok(Texted { child, readers: Some(readers) })
    }

    /// Waits for its end (within `limit`); its whole output.
    #[allow(clippy::disallowed_methods)] // the case's own clock: a bound on a real process
    pub(super) fn finish(mut self, s: &Suite, limit: Duration) -> anyhow::Result<Output> {
        let until = (Instant::now() + limit).min(s.deadline);
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if Instant::now() >= until {
                bail!("dplay did not end in time");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let (out, err) = self.readers.take().context("finished twice")?;
        let join = |h: Reader| h.join().unwrap_or_default();
        Ok(Output { status, stdout: join(out), stderr: join(err) })
    }
}

impl Drop for Texted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `from` to its end on a thread.
fn read_all(mut from: impl Read + Send + 'static) -> Reader {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = from.read_to_end(&mut all);
        all
    })
}

/// Runs `dplay args...` here with `RUST_LOG=debug` to its end.
fn run_logged(s: &Suite, args: &[&str]) -> anyhow::Result<Output> {
    Command::new(&s.bin)
        .args(args)
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run dplay {}", args.join(" ")))
}

/// Items 1, 2 and 18 against one text-mode host (`--max-name 64`, debug log):
/// - a joiner named [`FORGED_NAME`] chats with escape sequences and renames itself to another
///   forged line: neither the host's output nor its log, nor the joiner's, has a raw control
///   character or a line that starts as the forged one; the name is shown escaped;
/// - a rename of 100,000 units (the joiner raised its own limit) is ignored by the host: no
///   rename, no line of the host over 1,000 bytes, the request counted as malformed; an empty
///   rename is refused by the joiner with DPNERR_INVALIDPARAM and exit 1;
/// - a join with a 70-unit name is refused, said once on the host's output and not also in a
///   WARN line of its log (at debug level the session's own DEBUG line stays), and said once
///   by the joiner (its error line).
pub(super) fn hostile_text(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = Texted::start(s, &["host", "--bind", &addr, "--max-name", "64", "--duration", "6", "--echo"])?;
    std::thread::sleep(Duration::from_millis(700));
    let rename = "y\x1b[31m\n[ 9.999s] forged rename";
    let chat = "hi\x1b]0;owned\x07\nthere";
    let args =
        ["join", &addr, "--name", FORGED_NAME, "--send", chat, "--set-name", rename, "--duration", "1"];
    let forged = run_logged(s, &args)?;
    ensure!(forged.status.success(), "the forged joiner: {:?}", ended(&forged));

    let long = "x".repeat(100_000);
    let args =
        ["join", &addr, "--name", "long", "--max-name", "100000", "--set-name", &long, "--duration", "1"];
    let out = run_here(s, &args)?;
    ensure!(out.status.success(), "the long rename's joiner: {:?}", ended(&out));
    let args = ["join", &addr, "--json", "--name", "empty", "--set-name", "", "--duration", "1"];
    let out = run_here(s, &args)?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.code() == Some(1)
            && text.contains("\"command_failed\"")
            && text.contains("DPNERR_INVALIDPARAM"),
        "an empty rename: exit {:?}: {text}",
        out.status.code()
    );
    let refused = run_here(s, &["join", &addr, "--name", &"n".repeat(70), "--timeout", "3"])?;
    ensure!(refused.status.code() == Some(1), "a 70-unit name got in: {:?}", ended(&refused));
    // Said once by the joiner too: its error line, not also a `session ended` line.
    let said = [&refused.stdout, &refused.stderr]
        .map(|b| String::from_utf8_lossy(b).matches("DPNERR_INVALIDPARAM").count());
    ensure!(said == [0, 1], "the joiner said its refusal {said:?} times: {:?}", ended(&refused));

    let host = host.finish(s, WAIT)?;
    for (who, out) in [("host", &host), ("joiner", &forged)] {
        for (stream, bytes) in [("output", &out.stdout), ("log", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            ensure!(!text.contains(['\x1b', '\x07']), "the {who}'s {stream} has a raw control: {text}");
            ensure!(
                !text.lines().any(|l| l.starts_with("[ 9.999s]")),
                "the {who}'s {stream} has a forged line: {text}"
            );
        }
    }
    let (out, log) = (String::from_utf8_lossy(&host.stdout), String::from_utf8_lossy(&host.stderr));
    ensure!(out.contains(r"x\n[ 9.999s] player left"), "the name is not shown escaped: {out}");
    ensure!(out.contains(r"forged rename"), "the good rename is not shown: {out}");
    ensure!(!out.contains("xxxxxxxxxx"), "the host took the long rename: {out:.2000}");
    let longest = out.lines().chain(log.lines()).map(str::len).max().unwrap_or(0);
    ensure!(longest < 1000, "a line of the host is {longest} bytes long");
    ensure!(out.contains("malformed"), "the long rename was not counted: {out}");
    ensure!(!out.contains("unknown_dpnid"), "a normal session's summary counts unknown_dpnid: {out}");
    ensure!(out.contains("join refused: nnnnnnnn"), "the refusal is not said: {out}");
    let warned = log.lines().find(|l| l.contains("WARN") && l.contains("join refused"));
    ensure!(warned.is_none(), "the refusal is said twice: {warned:?}");
    Ok(())
}
