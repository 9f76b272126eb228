//! A page driven in headless Chromium over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: commands in on fd 3, answers out on fd 4, each JSON followed by
//! a NUL), so a case can wait for the live page and click in it as an operator would. The
//! pipe needs no port: nothing listens, and Chromium resolves no name but loopback.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// One tab of a headless Chromium; the browser is killed when dropped.
pub(super) struct Page {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    session: String,
    profile: std::path::PathBuf,
}

impl Page {
    /// Opens `url` in a new headless Chromium.
    pub(super) fn open(chromium: &str, url: &str) -> anyhow::Result<Self> {
        let profile = std::env::temp_dir().join(format!("dplay-web-cdp-{}", std::process::id()));
        // fd 3 is our pipe in (its stdin), fd 4 our pipe out (its stdout); its own output goes
        // nowhere.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 >/dev/null 2>&1"#)
            .arg(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-pipe",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--window-size=1280,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot run chromium")?;
        let to = child.stdin.take().context("no pipe to chromium")?;
        let out = child.stdout.take().context("no pipe from chromium")?;
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut out = BufReader::new(out);
            let mut message = Vec::new();
            while out.read_until(0, &mut message).is_ok_and(|n| n > 0) {
                let text = message.strip_suffix(&[0]).unwrap_or(&message);
                if let Ok(v) = serde_json::from_slice::<Value>(text)
                    && tx.send(v).is_err()
                {
                    break;
                }
                message.clear();
            }
        });
        let mut page = Page { child, to, from, next_id: 0, session: String::new(), profile };
        let target = page.call("Target.createTarget", json!({"url": url}))?;
        let target = target["targetId"].as_str().context("no target id")?.to_owned();
        let attached = page.call("Target.attachToTarget", json!({"targetId": target, "flatten": true}))?;
        page.session = attached["sessionId"].as_str().context("no session id")?.to_owned();
        Ok(page)
    }

    /// Sends one command (to the page once attached) and waits up to 10 s for its answer.
    #[allow(clippy::disallowed_methods)] // a deadline for a real process
    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message)?;
        bytes.push(0);
        self.to.write_all(&bytes)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(answer) if answer["id"] == id => {
                    if !answer["error"].is_null() {
                        bail!("chromium: {method}: {}", answer["error"]);
                    }
                    return Ok(answer["result"].clone());
                }
                Ok(_) => {} // an event, or another command's answer
                Err(RecvTimeoutError::Timeout) => bail!("chromium did not answer {method} within 10 s"),
                Err(RecvTimeoutError::Disconnected) => bail!("chromium exited"),
            }
        }
    }

    /// The value of the JavaScript expression `js` in the page.
    pub(super) fn eval(&mut self, js: &str) -> anyhow::Result<Value> {
        let r = self.call("Runtime.evaluate", json!({"expression": js, "returnByValue": true}))?;
        if !r["exceptionDetails"].is_null() {
            bail!("the page threw on `{js}`: {}", r["exceptionDetails"]);
        }
        Ok(r["result"]["value"].clone())
    }

    /// Waits up to `limit` for `js` to be true in the page.
    #[allow(clippy::disallowed_methods)] // a deadline for a real process
    pub(super) fn wait_for(&mut self, what: &str, js: &str, limit: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.eval(js)? == Value::Bool(true) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("the page never showed {what} (`{js}` stayed false)")
    }
}

impl Drop for Page {
    /// Closes the browser (killed if it does not close within the call's wait).
    fn drop(&mut self) {
        self.session.clear();
        let _ = self.call("Browser.close", json!({}));
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
