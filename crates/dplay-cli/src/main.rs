//! `dplay`: look at DirectPlay traffic from the command line.
//!
//! `dplay decode --hex '88 01 ...'` and `dplay decode capture.pcap` print every DirectPlay 8
//! and DirectPlay 4 message found, with its family, its name as the spec spells it and every
//! field, as a tree or (`--json`) one JSON object per line. The protocol knowledge is all in
//! `dplay-wire`; this crate only finds datagrams in captures and renders what it parsed.

mod capture;
mod decode;
mod demo;
mod dp4;
mod dp4_print;
mod enumerate;
mod fs;
mod host;
mod join;
mod limits;
mod live;
mod net;
mod pcap_tap;
mod pcap_tcp;
mod render;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use crate::decode::Record;

#[derive(Parser)]
#[command(name = "dplay", version, about = "DirectPlay 8 and DirectPlay 4 tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode DirectPlay messages from hex bytes or a pcap/pcapng capture.
    ///
    /// Exit status: 0 when every message decoded, 1 when some were malformed (each is reported
    /// and decoding goes on) or the input could not be read, 2 for bad arguments.
    Decode(DecodeArgs),
    /// Host a DirectPlay 8 (or, with --dp4, DirectPlay 4) session; log players joining and
    /// leaving and every message.
    Host(host::HostArgs),
    /// List the DirectPlay 8 (or, with --dp4, DirectPlay 4) sessions answering at an address
    /// (exit 0 when one answers).
    Enum(enumerate::EnumArgs),
    /// Join a DirectPlay 8 (or, with --dp4, DirectPlay 4) session; print the players and events.
    Join(join::JoinArgs),
    /// The Flight Simulator add-on protocol over DirectPlay 8 (or, with --dp4, the FS98 dialect
    /// over DirectPlay 4).
    #[command(subcommand)]
    Fs(fs::FsCommand),
    /// A host, two clients and an add-on flight on loopback, with a timeline of every message.
    Demo(demo::DemoArgs),
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["hex", "file"]))]
struct DecodeArgs {
    /// One datagram as hex (spaces, `0x`, `:` and `,` are ignored); repeat for several.
    #[arg(long, value_name = "BYTES", value_parser = parse_hex)]
    hex: Vec<Vec<u8>>,
    /// A pcap or pcapng capture (Ethernet, Linux SLL, loopback or raw IP; UDP and TCP).
    file: Option<PathBuf>,
    /// Print one JSON object per message instead of a tree.
    #[arg(long)]
    json: bool,
    /// Look for DirectPlay 8 on every UDP port, not only 6073 and 2302-2400.
    #[arg(long)]
    any_port: bool,
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    match dplay_wire::hexdump::parse_hex(text)? {
        bytes if bytes.is_empty() => Err("no bytes given".into()),
        bytes => Ok(bytes),
    }
}

fn main() -> ExitCode {
    live::init_logging();
    let result = match Cli::parse().command {
        Command::Decode(args) => run_decode(args),
        Command::Host(args) => host::run(args),
        Command::Enum(args) => enumerate::run(args),
        Command::Join(args) => join::run(args),
        Command::Fs(command) => fs::run(command),
        Command::Demo(args) => demo::run(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "dplay: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Decodes and prints; returns whether every message was well formed.
fn run_decode(args: DecodeArgs) -> anyhow::Result<bool> {
    let (records, summary) = match &args.file {
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            let frames = capture::read(&bytes).with_context(|| format!("cannot read {}", path.display()))?;
            let (records, stats) = decode::decode_frames(&frames, args.any_port);
            let summary = format!(
                "{} frames, {} DirectPlay messages, {} other frames skipped",
                stats.frames,
                records.len(),
                stats.skipped
            );
            (records, Some(summary))
        }
        None => (args.hex.into_iter().map(decode::decode_bytes).collect(), None),
    };
    print(&records, args.json).context("writing the output")?;
    let malformed = records.iter().filter(|r| r.result.is_err()).count();
    if let Some(summary) = summary {
        let _ = writeln!(std::io::stderr(), "{summary}, {malformed} malformed");
    }
    Ok(malformed == 0)
}

fn print(records: &[Record], json: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for (i, record) in records.iter().enumerate() {
        if json {
            writeln!(out, "{}", render::json(record))?;
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "{}", render::tree(record))?;
        }
    }
    out.flush()
}
