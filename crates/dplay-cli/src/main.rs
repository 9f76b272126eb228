//! `dplay`: look at DirectPlay traffic from the command line.
//!
//! `dplay decode --hex '88 01 ...'` and `dplay decode capture.pcap` print every DirectPlay 8
//! and DirectPlay 4 message found, with its family, its name as the spec spells it and every
//! field, as a tree or (`--json`) one JSON object per line. The protocol knowledge is all in
//! `dplay-wire`; this crate only finds datagrams in captures and renders what it parsed.

mod addon_view;
mod address;
mod admin;
mod capture;
mod config;
mod decode;
mod decode_command;
mod demo;
mod dp4;
mod dp4_print;
mod duration;
mod enumerate;
mod escape;
mod events;
mod flows;
mod fs;
mod host;
mod internet;
mod join;
mod join_opts;
mod limits;
mod live;
mod message;
mod net;
mod other_protocol;
mod protocol_options;
mod reassembly;
mod relay;
mod render;
mod resolver;
mod stats_signal;
mod stream;
mod voice;
mod web;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
    Decode(decode_command::DecodeArgs),
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
    /// Answer NAT resolver queries (MC-DPLNAT): tell hosts the public address their queries
    /// come from, so they can show players where to join.
    NatResolver(resolver::ResolverArgs),
    /// Administer a running `dplay host --web` through its JSON API: kick, ban, unban, chat,
    /// max players, password (the token from --token or DPLAY_WEB_TOKEN).
    Admin(admin::AdminArgs),
    /// A host, two clients and an add-on flight on loopback, with a timeline of every message.
    Demo(demo::DemoArgs),
    /// Print a shell completion script (such as `dplay completions bash >
    /// /etc/bash_completion.d/dplay`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), such as `dplay manpage > dplay.1; man ./dplay.1`.
    Manpage {
        /// A command's own page instead (dplay-host(1) for `host`).
        command: Option<String>,
    },
}

fn main() -> ExitCode {
    stats_signal::block();
    live::init_logging();
    // `--config FILE` adds the file's options to those of the command line (docs/host-config.md).
    let argv = match config::expand(&Cli::command(), std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "dplay: {e:#}");
            return ExitCode::from(2);
        }
    };
    let matches = Cli::command().get_matches_from(argv);
    if let Some(line) = protocol_options::ignored(&Cli::command(), &matches) {
        let _ = writeln!(std::io::stderr(), "dplay: {line}");
    }
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Decode(args) => decode_command::run(args),
        Command::Host(args) => host::run(args),
        Command::Enum(args) => enumerate::run(args),
        Command::Join(args) => join::run(args),
        Command::Fs(command) => fs::run(command),
        Command::Demo(args) => demo::run(args),
        Command::Admin(args) => admin::run(args),
        Command::NatResolver(args) => resolver::run(args),
        Command::Completions { shell } => completions(shell),
        Command::Manpage { command } => manpage(command),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // An error may quote the network (a refusal's name): escaped as every line is.
            let _ = writeln!(std::io::stderr(), "dplay: {}", escape::escaped(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// `dplay completions SHELL`.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut Cli::command(), "dplay", &mut out);
    out.flush().context("writing the completions")?;
    Ok(true)
}

/// `dplay manpage [COMMAND]`: dplay(1), or with a command its own page (dplay-host(1), ...).
fn manpage(command: Option<String>) -> anyhow::Result<bool> {
    let top = Cli::command();
    let page = match &command {
        None => clap_mangen::Man::new(top),
        Some(name) => {
            // `fs-host` (as the page is named) or `fs host`: a nested command's page.
            let nested = name.split_once(['-', ' ']).and_then(|(parent, child)| {
                top.find_subcommand(parent).and_then(|p| p.find_subcommand(child)).cloned()
            });
            let sub = nested.or_else(|| top.find_subcommand(name).cloned()).with_context(|| {
                let names: Vec<&str> = top.get_subcommands().map(clap::Command::get_name).collect();
                format!("no command `{name}`: give one of {}", names.join(", "))
            })?;
            // Named as man pages for subcommands are (dplay-host(1)), run as `dplay host`.
            let sub = sub.display_name(format!("dplay-{name}")).bin_name(format!("dplay {name}"));
            let source = format!("dplay {}", top.get_version().unwrap_or_default());
            clap_mangen::Man::new(sub).source(source)
        }
    };
    let mut out = std::io::stdout().lock();
    page.render(&mut out).context("writing the manual page")?;
    out.flush().context("writing the manual page")?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Command};

    /// docs/decisions.md: `--max-name` and `--max-player-data` serve both protocols; the old
    /// DirectPlay 4 spellings still parse (hidden aliases), so scripts keep working.
    #[test]
    fn old_dp4_limit_spellings_still_parse() {
        let host = Cli::try_parse_from([
            "dplay",
            "host",
            "--dp4",
            "--dp4-max-name",
            "10",
            "--dp4-max-player-data",
            "5",
        ]);
        let Ok(Cli { command: Command::Host(args), .. }) = host else { panic!("dplay host did not parse") };
        assert_eq!((args.limits.names.max_name, args.limits.names.max_player_data), (Some(10), Some(5)));
        let join = Cli::try_parse_from(["dplay", "join", "--dp4", "127.0.0.1", "--max-name", "7"]);
        let Ok(Cli { command: Command::Join(args), .. }) = join else { panic!("dplay join did not parse") };
        assert_eq!(args.dp4_args.names.max_name, Some(7));
        let fs = Cli::try_parse_from([
            "dplay",
            "fs",
            "host",
            "--dp4",
            "--dp4-max-name",
            "9",
            "--memory-budget",
            "8MiB",
        ]);
        assert!(fs.is_ok(), "dplay fs host takes the host's limits");
        let join = Cli::try_parse_from([
            "dplay",
            "join",
            "127.0.0.1",
            "--memory-budget",
            "1MiB",
            "--player-data",
            "01 02",
        ]);
        let Ok(Cli { command: Command::Join(args), .. }) = join else { panic!("dplay join did not parse") };
        assert_eq!(args.budget.memory_budget, Some(1 << 20));
        assert_eq!(args.player_data, Some(super::join_opts::PlayerData(vec![1, 2])));
        let fs =
            Cli::try_parse_from(["dplay", "fs", "join", "--player", "127.0.0.1", "--memory-budget", "64k"]);
        assert!(fs.is_ok(), "dplay fs join takes a memory budget");
        let bad = Cli::try_parse_from(["dplay", "join", "127.0.0.1", "--player-data", "0x"]);
        assert!(bad.is_err_and(|e| e.to_string().contains("`x` is not a hex digit")));
    }
}
