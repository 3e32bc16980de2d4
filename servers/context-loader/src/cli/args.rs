//! The binary's command line: the global flags ([`GlobalArgs`]), the server modes,
//! and the tools as subcommands. The tools' subcommands are not declared here: each
//! is its tool's parameters type (`clap::Args`), added from the one tool list.

use clap::builder::Command as ClapCommand;
use clap::{ArgAction, ArgMatches, FromArgMatches, Parser, Subcommand};

use crate::config::GlobalArgs;
use crate::tool::{Register, Tool};
use crate::{http, stdio};

/// The exit codes, the same for every command (shown by `--help`).
pub const EXIT_CODES: &str = "Exit codes: 0 success; 1 a tool's error (bad input, nothing found; printed \
like the tool's, or as JSON with --json) or a server that failed while running; 2 a usage or \
configuration error (a flag, or a file a flag names).";

/// `--version`: the binary's version and the date of the model catalog built into
/// it, since the catalog (windows, prices) dates faster than the code.
pub fn version() -> &'static str {
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "{} (model catalog as of {})",
            env!("CARGO_PKG_VERSION"),
            context_budget::Catalog::builtin().as_of
        )
    });
    &VERSION
}

#[derive(Debug, Parser)]
#[command(name = "context-loader", version = version(), about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (for Claude Desktop, Claude Code, other agents).
    Stdio(stdio::StdioArgs),
    /// Serve MCP over streamable HTTP (default http://127.0.0.1:8787/mcp).
    Http(http::HttpArgs),
    #[command(flatten)]
    Tool(ToolCommand),
}

/// A tool run as a shell command: which one, and its parsed flags (turned into the
/// tool's parameters when it runs, see `cli::run`).
#[derive(Debug, Clone)]
pub struct ToolCommand {
    pub name: String,
    pub matches: ArgMatches,
}

/// Each tool's subcommand: its parameters' flags, and `--json`.
struct Subcommands(Vec<ClapCommand>);

impl Register for Subcommands {
    fn tool<T: Tool>(&mut self) {
        let command = ClapCommand::new(T::COMMAND)
            .about(T::ABOUT)
            // `--budget -5` is a bad value to name, not an unknown flag.
            .allow_negative_numbers(true)
            .after_help(examples(T::EXAMPLES))
            .args(server_flags());
        let mut command = <T::Params as clap::Args>::augment_args(command).arg(
            clap::Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help(T::JSON_HELP),
        );
        if crate::app::has_view(T::NAME) {
            command = command.arg(
                clap::Arg::new(crate::cli::report::HTML_FLAG)
                    .long(crate::cli::report::HTML_FLAG)
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(std::path::PathBuf))
                    .help(
                        "Also write the result as a standalone HTML report (the page the MCP \
                         App shows) to FILE",
                    ),
            );
        }
        self.0.push(command);
    }
}

/// The global flags a tool's help leaves out (limits, logging, the Anthropic client):
/// still accepted there, shown under `stdio`, `http` and the top-level help. A
/// subcommand that has an argument of a global's id keeps its own copy (clap does
/// not propagate the global over it), so a hidden copy hides it from that help alone.
fn server_flags() -> Vec<clap::Arg> {
    let globals = <GlobalArgs as clap::Args>::augment_args(ClapCommand::new("globals"));
    globals
        .get_arguments()
        .filter(|arg| arg.get_help_heading() != Some(crate::config::TOOL_FLAGS_HEADING))
        .map(|arg| arg.clone().hide(true))
        .collect()
}

/// The `Examples:` block of a tool command's help.
fn examples(lines: &str) -> String {
    let lines: Vec<String> = lines.lines().map(|line| format!("  {line}")).collect();
    format!(
        "Examples (from a clone of this repository):\n{}",
        lines.join("\n")
    )
}

fn subcommands() -> Vec<ClapCommand> {
    let mut commands = Subcommands(Vec::new());
    crate::tools::register(&mut commands);
    commands.0
}

impl FromArgMatches for ToolCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        match matches.subcommand() {
            Some((name, matches)) if Self::has_subcommand(name) => Ok(ToolCommand {
                name: name.to_string(),
                matches: matches.clone(),
            }),
            _ => Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for ToolCommand {
    fn augment_subcommands(command: ClapCommand) -> ClapCommand {
        command.subcommands(subcommands())
    }

    fn augment_subcommands_for_update(command: ClapCommand) -> ClapCommand {
        command.subcommands(subcommands())
    }

    fn has_subcommand(name: &str) -> bool {
        subcommands()
            .iter()
            .any(|command| command.get_name() == name)
    }
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;
    use context_budget::Strategy;
    use context_budget::spec::SortOrder;

    use super::*;
    use crate::tools::fit_messages::FitMessagesParams;
    use crate::tools::spec_tokens::SpecTokensParams;

    /// The parameters a tool's subcommand was parsed into.
    fn tool_params<P: FromArgMatches>(cli: Cli, name: &str) -> P {
        let Command::Tool(tool) = cli.command else {
            panic!("a tool command");
        };
        assert_eq!(tool.name, name);
        P::from_arg_matches(&tool.matches).expect("parameters")
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn version_names_the_release_and_the_catalog_date() {
        let error = Cli::try_parse_from(["context-loader", "--version"]).expect_err("version");
        assert_eq!(error.kind(), ErrorKind::DisplayVersion);
        let as_of = &context_budget::Catalog::builtin().as_of;
        assert_eq!(
            error.to_string().trim(),
            format!(
                "context-loader {} (model catalog as of {as_of})",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(as_of.len(), "YYYY-MM-DD".len(), "{as_of}");
    }

    #[test]
    fn enum_flags_take_the_wire_names_and_refuse_others_listing_the_choices() {
        let parsed = Cli::try_parse_from(["context-loader", "fit-messages", "--strategy", "first"])
            .expect("valid");
        let args: FitMessagesParams = tool_params(parsed, "fit-messages");
        assert_eq!(args.strategy, Some(Strategy::First));
        assert_eq!(args.keep_system, Some(true), "no --no-keep-system: keep it");

        let parsed = Cli::try_parse_from(["context-loader", "spec-tokens", "--sort", "name"])
            .expect("valid");
        let args: SpecTokensParams = tool_params(parsed, "spec-tokens");
        assert_eq!(args.sort, Some(SortOrder::Name));

        let error = Cli::try_parse_from(["context-loader", "fit-messages", "--strategy", "middle"])
            .expect_err("unknown strategy");
        assert_eq!(error.kind(), ErrorKind::InvalidValue);
        assert_eq!(error.exit_code(), 2);
        let text = error.to_string();
        assert!(
            text.contains("middle") && text.contains("last, first"),
            "{text}"
        );
    }
}
