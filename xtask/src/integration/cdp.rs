//! The dashboard cases' browser: headless Chromium (Debian's `chromium`, installed with apt-get
//! when missing) driven over the Chrome DevTools Protocol on a pipe
//! (`--remote-debugging-pipe`: commands in on fd 3, answers and events out on fd 4, each JSON
//! followed by a NUL). The pipe needs no port: nothing listens, and Chromium resolves no name
//! but loopback, so the page never leaves the machine (the map then draws its built-in
//! coastline instead of OpenStreetMap's tiles).
//!
//! Before the page loads, `alert`, `confirm` and `prompt` are replaced by a hook that counts
//! their calls in `window.__dialogs`: markup from the network that ran as script shows there
//! ([`Page::dialogs`]).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::util::{have, root, step};

/// How long one DevTools command may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// Runs before any script of the page: counts dialogs instead of opening them.
const DIALOG_HOOK: &str = "window.__dialogs = 0; \
     for (const f of ['alert', 'confirm', 'prompt']) window[f] = () => { window.__dialogs += 1; };";

/// One tab of a headless Chromium; the browser is closed (killed if need be) when dropped.
pub(super) struct Page {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    /// The tab's DevTools session, once attached.
    session: Option<String>,
    profile: PathBuf,
}

impl Page {
    /// Opens `url` in a new headless Chromium window of `size` pixels, with the dialog hook.
    pub(super) fn open(url: &str, size: (u32, u32)) -> anyhow::Result<Self> {
        static OPENED: AtomicU32 = AtomicU32::new(0);
        let n = OPENED.fetch_add(1, Ordering::Relaxed);
        let profile = std::env::temp_dir().join(format!("dplay-web-cdp-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        // fd 3 is our pipe in (its stdin), fd 4 our pipe out (its stdout); its own output goes
        // nowhere.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 >/dev/null 2>&1"#)
            .arg(chromium()?)
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
            ])
            .arg(format!("--window-size={},{}", size.0, size.1))
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
        let mut page = Page { child, to, from, next_id: 0, session: None, profile };
        let target = page.call("Target.createTarget", json!({"url": "about:blank"}))?;
        let target = target["targetId"].as_str().context("no target id")?.to_owned();
        let attached = page.call("Target.attachToTarget", json!({"targetId": target, "flatten": true}))?;
        page.session = Some(attached["sessionId"].as_str().context("no session id")?.to_owned());
        page.call("Page.enable", json!({}))?;
        page.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": DIALOG_HOOK}))?;
        page.call("Page.navigate", json!({"url": url}))?;
        page.wait_for("the page loaded", "document.readyState === 'complete'", ANSWER_WITHIN)?;
        Ok(page)
    }

    /// Sends one command (to the tab once attached) and waits for its answer; events that
    /// come meanwhile are skipped.
    #[allow(clippy::disallowed_methods)] // a deadline for a real process
    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message)?;
        bytes.push(0);
        self.to.write_all(&bytes)?;
        let deadline = Instant::now() + ANSWER_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(answer) if answer["id"] == id => {
                    if !answer["error"].is_null() {
                        bail!("chromium: {method}: {}", answer["error"]);
                    }
                    return Ok(answer["result"].clone());
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => bail!("chromium did not answer {method} within 10 s"),
                Err(RecvTimeoutError::Disconnected) => bail!("chromium exited"),
            }
        }
    }

    /// The value of the JavaScript expression `js` in the page (promises awaited).
    pub(super) fn eval(&mut self, js: &str) -> anyhow::Result<Value> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        )?;
        if !r["exceptionDetails"].is_null() {
            bail!("the page threw on `{js}`: {}", r["exceptionDetails"]);
        }
        Ok(r["result"]["value"].clone())
    }

    /// Waits up to `limit` for `js` to be true in the page.
    #[allow(clippy::disallowed_methods)] // a deadline for a real process
    pub(super) fn wait_for(&mut self, what: &str, js: &str, limit: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        while self.eval(js)? != Value::Bool(true) {
            ensure!(Instant::now() < deadline, "the page never showed {what} (`{js}` stayed false)");
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// A left click, as a mouse makes it, in the middle of the element the expression
    /// `element_js` gives, once that point shows the element itself (a page redrawing its
    /// rows may have moved it since it was found).
    #[allow(clippy::disallowed_methods)] // a deadline for a real process
    pub(super) fn click(&mut self, what: &str, element_js: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let (x, y) = loop {
            let at = self.eval(&format!(
                "(() => {{ const e = {element_js}; if (!e) return null; e.scrollIntoView({{block: 'center'}}); \
                 const r = e.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2; \
                 return e.contains(document.elementFromPoint(x, y)) ? [x, y] : 'covered'; }})()"
            ))?;
            match (at[0].as_f64(), at[1].as_f64()) {
                (Some(x), Some(y)) => break (x, y),
                _ if at.is_null() => bail!("the page has no {what} to click"),
                _ => {
                    ensure!(Instant::now() < deadline, "the page's {what} stayed covered by another element");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )?;
        }
        Ok(())
    }

    /// The rendered DOM, serialized.
    pub(super) fn html(&mut self) -> anyhow::Result<String> {
        let html = self.eval("document.documentElement.outerHTML")?;
        Ok(html.as_str().context("no document")?.to_owned())
    }

    /// Dialogs the page's scripts opened (counted by the hook, none shown).
    pub(super) fn dialogs(&mut self) -> anyhow::Result<u64> {
        self.eval("window.__dialogs")?.as_u64().context("the dialog hook is missing")
    }

    /// A PNG of the page as it is now, written to target/`name` (a test artifact).
    pub(super) fn screenshot(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}))?;
        let png = base64(shot["data"].as_str().context("no screenshot data")?)?;
        let dir = root().join("target");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(name);
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        self.session = None;
        let _ = self.call("Browser.close", json!({}));
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Standard base64 (RFC 4648 section 4), as DevTools sends binary data.
fn base64(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut n) = (0u32, 0u32);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => bail!("not base64: {:?}", char::from(c)),
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push(u8::try_from((bits >> n) & 0xFF)?);
        }
    }
    Ok(out)
}

/// Chromium, installed from Debian's packages when missing.
fn chromium() -> anyhow::Result<&'static str> {
    if !have("chromium") {
        println!(
            "==> chromium is missing: installing Debian's chromium package (the dashboard cases need it)"
        );
        step("apt-get update", Command::new("apt-get").args(["update", "-qq"]))?;
        step(
            "install chromium",
            Command::new("apt-get")
                .args(["install", "-y", "-qq", "--no-install-recommends", "chromium"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
        ensure!(
            have("chromium"),
            "chromium is still missing after apt-get; install Debian's chromium package"
        );
    }
    Ok("chromium")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_padded_and_unpadded() {
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGk").unwrap(), b"hi");
        assert_eq!(base64("iVBORw0KGgo=").unwrap(), b"\x89PNG\r\n\x1a\n");
        assert!(base64("a*b").is_err());
    }
}
