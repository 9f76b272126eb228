//! Options of the other protocol (issue 25 item 18): `host --dp4 --join-timeout 5s` or
//! `host --enum-port 47625` (without `--dp4`) used to be ignored without a word. They are
//! still ignored (a configuration file may serve both protocols), but said so, in one line.
//!
//! Nothing is listed by hand: an option is of one protocol when its help begins with
//! "DirectPlay 8:" or "DirectPlay 4:", as the help of every such option does.

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

/// The line to print when the command line gave options of the protocol not in use, if any.
pub(crate) fn ignored(top: &Command, matches: &ArgMatches) -> Option<String> {
    // The innermost subcommand: `host`, or `fs host`.
    let (mut command, mut m) = (top, matches);
    while let Some((name, sub)) = m.subcommand() {
        let Some(c) = command.find_subcommand(name) else { break };
        (command, m) = (c, sub);
    }
    let has = |id: &str| command.get_arguments().any(|a| a.get_id() == id);
    if !has("dp4") {
        return None;
    }
    let fs98 = has("sim") && m.get_raw("sim").into_iter().flatten().any(|v| v == "fs98");
    let dp4 = m.get_flag("dp4") || fs98;
    let (other, in_use) =
        if dp4 { ("DirectPlay 8:", "DirectPlay 4") } else { ("DirectPlay 4:", "DirectPlay 8") };
    let given: Vec<String> = command
        .get_arguments()
        .filter(|a| a.get_help().is_some_and(|h| h.to_string().starts_with(other)))
        .filter(|a| m.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let (what, are) = match given.len() {
        0 => return None,
        1 => ("option", "is a"),
        _ => ("options", "are"),
    };
    let protocol = other.trim_end_matches(':');
    Some(format!(
        "{} {are} {protocol} {what}, ignored: this session is {in_use}{}",
        given.join(", "),
        if dp4 { "" } else { " (add --dp4 for DirectPlay 4)" }
    ))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::ignored;

    fn line(args: &[&str]) -> Option<String> {
        let top = crate::Cli::command();
        let matches = top.clone().try_get_matches_from(args).expect("the arguments parse");
        ignored(&top, &matches)
    }

    #[test]
    fn options_of_the_other_protocol_are_said_once() {
        assert_eq!(
            line(&["dplay", "host", "--enum-port", "47625", "--tcp-idle", "5s"]).as_deref(),
            Some(
                "--enum-port, --tcp-idle are DirectPlay 4 options, ignored: this session is DirectPlay 8 (add --dp4 for DirectPlay 4)"
            )
        );
        assert_eq!(
            line(&["dplay", "host", "--dp4", "--join-timeout", "5s"]).as_deref(),
            Some("--join-timeout is a DirectPlay 8 option, ignored: this session is DirectPlay 4")
        );
        assert_eq!(line(&["dplay", "host", "--dp4", "--enum-port", "47625"]), None);
        assert_eq!(line(&["dplay", "host", "--join-timeout", "5s"]), None);
        assert_eq!(line(&["dplay", "enum", "127.0.0.1"]), None);
    }
}
