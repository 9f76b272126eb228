//! `dplay decode`: its options, its input (hex, a capture file or standard input), the filter
//! and the output (one line per message, the tree, or JSON).

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use dplay_addon::Dialect;

use crate::decode::{self, Options, Record};
use crate::message::Carrier;
use crate::{capture, reassembly, render};

/// `dplay decode` options.
#[derive(Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["hex", "file"]))]
pub(crate) struct DecodeArgs {
    /// One datagram as hex (spaces, `0x`, `:` and `,` are ignored); repeat for several.
    #[arg(long, value_name = "BYTES", value_parser = parse_hex)]
    hex: Vec<Vec<u8>>,
    /// A pcap or pcapng capture (Ethernet, Linux SLL, loopback or raw IP; UDP and TCP), or `-`
    /// for standard input.
    file: Option<PathBuf>,
    /// Print one JSON object per message.
    #[arg(long)]
    json: bool,
    /// Print every field as a tree (the default for --hex); a capture otherwise prints one line
    /// per message.
    #[arg(short, long)]
    verbose: bool,
    /// Only messages whose name, MS-DPDX name or add-on packet name contains TEXT (any case),
    /// or sent from or to TEXT when it is an address (IP or IP:PORT). Repeat for several: a
    /// message shows when any matches.
    #[arg(long, value_name = "TEXT")]
    filter: Vec<String>,
    /// Only frames from or to this port; repeat for several.
    #[arg(long, value_name = "PORT", conflicts_with = "hex")]
    port: Vec<u16>,
    /// Take DirectPlay 8 lead bytes as DirectPlay 8 on every UDP port. Without it, a flow is
    /// DirectPlay 8 when it carries a CONNECT, CONNECTED or enumeration, or uses UDP 6073 or
    /// 2302-2400.
    #[arg(long, conflicts_with = "hex")]
    any_port: bool,
    /// With --hex: each is one message cut from a DirectPlay 4 TCP stream (without 'play' at
    /// offset 20, a player message in its stream form).
    #[arg(long, conflicts_with = "file")]
    tcp: bool,
    /// With --hex: each is a DirectPlay 4 UDP datagram (without 'play' at offset 20, a player
    /// message in its datagram form).
    #[arg(long, conflicts_with_all = ["file", "tcp"])]
    dp4: bool,
    /// With --hex: DirectPlay 8 DFRAMEs are from a signed connection, with ullSignature after
    /// the header (MC-DPL8R 2.2.2; in a capture, a CONNECTED_SIGNED says so).
    #[arg(long, conflicts_with_all = ["file", "tcp", "dp4"])]
    signed: bool,
    /// With --hex: DirectPlay 4 player messages carry no idFrom/idTo (a session with
    /// DPSESSION_NOMESSAGEID; in a capture, its session description says so).
    #[arg(long, conflicts_with = "file")]
    no_message_ids: bool,
    /// The Flight Simulator add-on dialect of application data (default: FS2004 when the
    /// capture carries FS2004's application GUID, FS98 otherwise).
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,
    /// Also show the bytes our encoder writes for each parsed message (`reemitted`): the
    /// input again when the decode is faithful.
    #[arg(long)]
    reemit: bool,
}

/// `--dialect`.
#[derive(Clone, Copy, ValueEnum)]
enum DialectArg {
    Fs98,
    Fs2004,
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    match dplay_wire::hexdump::parse_hex(text)? {
        bytes if bytes.is_empty() => Err("no bytes given".into()),
        bytes => Ok(bytes),
    }
}

/// A `--filter` term.
enum Filter {
    Addr(SocketAddr),
    Ip(IpAddr),
    Name(String),
}

impl Filter {
    fn new(text: &str) -> Self {
        if let Ok(a) = text.parse() {
            Self::Addr(a)
        } else if let Ok(ip) = text.parse() {
            Self::Ip(ip)
        } else {
            Self::Name(text.to_ascii_lowercase())
        }
    }

    fn matches(&self, record: &Record) -> bool {
        let ends = record.origin.map(|o| [o.src, o.dst]);
        match self {
            Self::Addr(a) => ends.is_some_and(|e| e.contains(a)),
            Self::Ip(ip) => ends.is_some_and(|e| e.iter().any(|a| a.ip() == *ip)),
            Self::Name(text) => {
                let found = |name: &str| name.to_ascii_lowercase().contains(text.as_str());
                record.result.as_ref().is_ok_and(|m| found(m.name()) || m.alias().is_some_and(found))
                    || record.addon.iter().any(|a| found(&a.name()))
            }
        }
    }
}

/// Decodes and prints; returns whether every message was well formed.
pub(crate) fn run(args: DecodeArgs) -> anyhow::Result<bool> {
    let dialect = args.dialect.map(|d| match d {
        DialectArg::Fs98 => Dialect::Fs98,
        DialectArg::Fs2004 => Dialect::Fs2004,
    });
    let (records, summary) = match &args.file {
        Some(path) => {
            let options = Options { any_port: args.any_port, ports: args.port.clone(), dialect };
            let (records, summary) = decode_capture(path, &options)?;
            (records, Some(summary))
        }
        None => {
            let carrier = match (args.tcp, args.dp4, args.signed) {
                (true, ..) => Carrier::Dp4Stream,
                (_, true, _) => Carrier::Dp4Datagram,
                (.., true) => Carrier::Dp8Signed,
                _ => Carrier::Datagram,
            };
            let dialect = dialect.unwrap_or_default();
            let ids = !args.no_message_ids;
            (args.hex.iter().map(|h| decode::decode_bytes(h.clone(), carrier, dialect, ids)).collect(), None)
        }
    };
    let filters: Vec<Filter> = args.filter.iter().map(|f| Filter::new(f)).collect();
    let shown: Vec<&Record> =
        records.iter().filter(|r| filters.is_empty() || filters.iter().any(|f| f.matches(r))).collect();
    let style = match (args.json, args.verbose || summary.is_none()) {
        (true, _) => Style::Json,
        (false, true) => Style::Tree,
        (false, false) => Style::Line,
    };
    match print(&shown, style, args.reemit) {
        // A reader that stops early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.context("writing the output")?,
    }
    let malformed = records.iter().filter(|r| r.result.is_err()).count();
    if let Some(summary) = summary {
        let filtered = if filters.is_empty() { String::new() } else { format!(", {} shown", shown.len()) };
        let _ = writeln!(std::io::stderr(), "{summary}, {malformed} malformed{filtered}");
    }
    Ok(malformed == 0)
}

/// Reads and decodes a capture file (`-`: standard input), warning about what fell short;
/// returns the messages and the summary line.
fn decode_capture(path: &Path, options: &Options) -> anyhow::Result<(Vec<Record>, String)> {
    let stdin = path.as_os_str() == "-";
    let name = if stdin { "standard input".to_owned() } else { path.display().to_string() };
    let mut bytes = Vec::new();
    if stdin {
        std::io::stdin().read_to_end(&mut bytes).context("cannot read standard input")?;
    } else {
        bytes = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
    }
    let capture = capture::read(&bytes).with_context(|| format!("cannot read {name}"))?;
    if let Some(cut) = &capture.cut {
        warn(&format!("{name} ends early ({cut}): decoding the {} frames before", capture.frames.len()));
    }
    let (records, stats) = decode::decode_frames(&capture.frames, options);
    if stats.gaps > 0 {
        warn(&format!("{} TCP segments follow bytes missing from the capture", stats.gaps));
    }
    if stats.signing_unknown > 0 {
        warn(&format!(
            "{} DirectPlay 8 flows show no CONNECTED, CONNECTED_SIGNED, SACK or HARD_DISCONNECT: \
             their DFRAMEs were read as unsigned, but they may be signed (MC-DPL8R 2.2.1.3)",
            stats.signing_unknown
        ));
    }
    let dropped = stats.reassembly;
    if dropped.over_cap + dropped.incomplete > 0 {
        warn(&format!(
            "{} pieces of multi-frame messages were not put back together ({} incomplete, {} over \
             the caps of {} MiB per direction and {} MiB in all)",
            dropped.over_cap + dropped.incomplete,
            dropped.incomplete,
            dropped.over_cap,
            reassembly::PER_DIRECTION >> 20,
            reassembly::TOTAL >> 20
        ));
    }
    if stats.unfinished > 0 {
        warn(&format!("the capture ends inside DirectPlay 4 messages ({} bytes)", stats.unfinished));
    }
    if records.is_empty() && stats.frames > 0 && !options.any_port {
        warn(
            "no DirectPlay found; a capture that starts after the CONNECT, on a port other than \
             6073 or 2302-2400, needs --any-port",
        );
    }
    let summary = format!(
        "{} frames, {} DirectPlay messages, {} other frames skipped",
        stats.frames,
        records.len(),
        stats.skipped
    );
    Ok((records, summary))
}

fn warn(text: &str) {
    let _ = writeln!(std::io::stderr(), "warning: {text}");
}

#[derive(Clone, Copy)]
enum Style {
    Line,
    Tree,
    Json,
}

fn print(records: &[&Record], style: Style, reemit: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for (i, record) in records.iter().enumerate() {
        match style {
            Style::Json => writeln!(out, "{}", render::json(record, reemit))?,
            Style::Line => writeln!(out, "{}", render::line(record))?,
            Style::Tree => {
                if i > 0 {
                    writeln!(out)?;
                }
                write!(out, "{}", render::tree(record, reemit))?;
            }
        }
    }
    out.flush()
}
