//! `--config FILE` on `dplay host` and `dplay fs host`: a TOML file of the command's own long
//! options (docs/host-config.md, docs/host.example.toml). The file adds to the command line
//! whatever the command line did not set, so the command line wins; a key that is not one of
//! the command's options is refused, naming the key and the file.
//!
//! Nothing is mapped by hand: each key is looked up among the command's clap arguments, and
//! becomes `--key=value` appended to the arguments before the real parse, unless
//! [`clap::ArgMatches::value_source`] says the command line gave it. A new option of the
//! command is a key of the file at once.

use std::ffi::OsString;
use std::path::Path;

use anyhow::Context;
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};

/// The option that names the file.
pub(crate) const CONFIG: &str = "config";

/// `argv` with the options of a `--config` file appended, or `argv` as it is when no command
/// in it has `--config` (or it does not parse: the real parse then says why).
pub(crate) fn expand(top: &Command, argv: Vec<OsString>) -> anyhow::Result<Vec<OsString>> {
    let Ok(matches) = top.clone().try_get_matches_from(&argv) else { return Ok(argv) };
    // The innermost subcommand: `host`, or `fs host`.
    let (mut command, mut m, mut path) = (top, &matches, top.get_name().to_owned());
    while let Some((name, sub)) = m.subcommand() {
        let Some(c) = command.find_subcommand(name) else { break };
        (command, m) = (c, sub);
        path = format!("{path} {name}");
    }
    if !command.get_arguments().any(|a| a.get_id() == CONFIG) {
        return Ok(argv);
    }
    let given = m.value_source(CONFIG) == Some(ValueSource::CommandLine);
    let Some(file) = m.get_one::<std::path::PathBuf>(CONFIG).filter(|_| given) else { return Ok(argv) };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let extra = options(command, &path, m, file, &text)?;
    let mut argv = argv;
    argv.extend(extra.into_iter().map(OsString::from));
    Ok(argv)
}

/// The `--key=value` arguments the file `text` adds to what `matches` got from the command line.
/// `path` names the command for errors (`dplay fs host`).
fn options(
    command: &Command,
    path: &str,
    matches: &ArgMatches,
    file: &Path,
    text_of_file: &str,
) -> anyhow::Result<Vec<String>> {
    let table: toml::Table = text_of_file
        .parse()
        .map_err(|e: toml::de::Error| anyhow::anyhow!("{}: {}", file.display(), e.message().trim_end()))?;
    let mut out = Vec::new();
    for (key, value) in &table {
        let long = key.replace('_', "-");
        let arg = command.get_arguments().find(|a| {
            a.get_long() == Some(long.as_str()) && !matches!(long.as_str(), CONFIG | "help" | "version")
        });
        let Some(arg) = arg else {
            anyhow::bail!("{}: unknown key `{key}` (not an option of `{path}`)", file.display());
        };
        if matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine) {
            continue;
        }
        let flag = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::Count);
        let values: Vec<&toml::Value> = match value {
            toml::Value::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        for v in values {
            let text = match v {
                toml::Value::Boolean(true) if flag => {
                    out.push(format!("--{long}"));
                    continue;
                }
                toml::Value::Boolean(false) if flag => continue,
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => anyhow::bail!(
                    "{}: key `{key}`: give a string, number, boolean or list of them",
                    file.display()
                ),
            };
            // Checked here, where the file and line are known, rather than by the real parse.
            let option = format!("--{long}={text}");
            if let Err(e) = command.clone().no_binary_name(true).try_get_matches_from([&option])
                && matches!(e.kind(), ErrorKind::InvalidValue | ErrorKind::ValueValidation)
            {
                let at = line_of(text_of_file, key).map_or_else(String::new, |n| format!(":{n}"));
                anyhow::bail!("{}{at}: key `{key}`: {}", file.display(), clap_reason(&e));
            }
            out.push(option);
        }
    }
    Ok(out)
}

/// The 1-based line where `key` is set in `text` (a top-level `key = ...`), if found.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix(key).or_else(|| l.strip_prefix(&format!("\"{key}\"")));
            rest.is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// clap's one-line reason, without its `error: ` and usage lines.
fn clap_reason(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    fn expanded(args: &[&str], file: &str) -> anyhow::Result<Vec<String>> {
        // One file per call: tests run in parallel and several expand the same command.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("dplay-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}-{call}.toml", args.join("-").replace('/', "_")));
        std::fs::write(&path, file).unwrap();
        let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        argv.extend([OsString::from("--config"), path.clone().into()]);
        let n = argv.len();
        let out = expand(&crate::Cli::command(), argv);
        let _ = std::fs::remove_file(&path);
        Ok(out?.into_iter().skip(n).map(|a| a.into_string().unwrap()).collect())
    }

    #[test]
    fn the_file_fills_what_the_command_line_did_not_set() {
        let file = "session = \"From file\"\nmax_players = 8\nno-migration = true\nclient_server = false\n\
                    name = \"host\"\n";
        let extra = expanded(&["dplay", "host", "--name", "me"], file).unwrap();
        // Keys in name order.
        assert_eq!(extra, ["--max-players=8", "--no-migration", "--session=From file"]);
    }

    #[test]
    fn fs_host_takes_its_own_options() {
        let extra = expanded(&["dplay", "fs", "host"], "sim = \"fs98\"\nenum_port = 47625\n").unwrap();
        assert_eq!(extra, ["--enum-port=47625", "--sim=fs98"]);
        let e = expanded(&["dplay", "fs", "host"], "client_server = true\n").unwrap_err().to_string();
        assert!(e.ends_with("unknown key `client_server` (not an option of `dplay fs host`)"), "{e}");
    }

    /// The FS98 host's dashboard comes from the file as the DirectPlay 8 add-on host's does.
    #[test]
    fn fs98_host_takes_the_dashboard_keys() {
        let file = "dp4 = true\nweb = \"127.0.0.1:8080\"\nweb_token = \"t\"\nbans = \"bans.txt\"\n";
        let extra = expanded(&["dplay", "fs", "host"], file).unwrap();
        assert_eq!(extra, ["--bans=bans.txt", "--dp4", "--web=127.0.0.1:8080", "--web-token=t"]);
        let mut argv = vec!["dplay".to_owned(), "fs".to_owned(), "host".to_owned()];
        argv.extend(extra);
        crate::Cli::try_parse_from(&argv).map_err(|e| e.to_string()).unwrap();
    }

    #[test]
    fn unknown_keys_and_bad_files_are_one_line_errors_naming_the_file() {
        let e = expanded(&["dplay", "host"], "sesion = \"x\"\n").unwrap_err().to_string();
        assert!(e.ends_with(".toml: unknown key `sesion` (not an option of `dplay host`)"), "{e}");
        assert!(!e.contains('\n'));
        for bad in ["config = \"other.toml\"\n", "help = true\n"] {
            let e = expanded(&["dplay", "host"], bad).unwrap_err().to_string();
            assert!(e.contains("unknown key"), "{e}");
        }
        let e = expanded(&["dplay", "host"], "session = [\n").unwrap_err().to_string();
        assert!(e.contains(".toml: "), "{e}");
        let e = expanded(&["dplay", "host"], "[web]\nport = 1\n").unwrap_err().to_string();
        assert!(e.contains("unknown key `web`") || e.contains("key `web`"), "{e}");
    }

    /// Issue 25 item 18: a value the option refuses is an error naming the file and line.
    #[test]
    fn bad_values_name_the_file_and_line() {
        let e = expanded(&["dplay", "host"], "session = \"x\"\n\nmax_players = \"many\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains(".toml:3: key `max_players`: invalid value 'many'"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = expanded(&["dplay", "host"], "echo = \"sideways\"\n").unwrap_err().to_string();
        assert!(e.contains(".toml:1: key `echo`"), "{e}");
    }

    #[test]
    fn without_config_nothing_changes() {
        let argv: Vec<OsString> = ["dplay", "host", "--session", "x"].iter().map(OsString::from).collect();
        assert_eq!(expand(&crate::Cli::command(), argv.clone()).unwrap(), argv);
    }

    /// The documented example is a valid configuration of `dplay host`.
    #[test]
    fn the_documented_example_parses() {
        let example = include_str!("../../../docs/host.example.toml");
        let extra = expanded(&["dplay", "host"], example).unwrap();
        let mut argv = vec!["dplay".to_owned(), "host".to_owned()];
        argv.extend(extra.iter().cloned());
        let cli = crate::Cli::try_parse_from(&argv).map_err(|e| e.to_string()).unwrap();
        let crate::Command::Host(host) = cli.command else { panic!("not host") };
        assert_eq!(host.session, "Friday night flights");
        assert_eq!(host.max_players, 16);
        assert!(extra.iter().any(|a| a.starts_with("--web=")), "{extra:?}");
    }
}
