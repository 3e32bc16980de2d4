//! The `context-loader` binary: parse the command line, wire the service
//! (`config`), and either serve MCP (stdio, HTTP) or run one tool as a shell command.

use std::process::ExitCode;

use clap::Parser;
use context_loader::cli::args::{Cli, Command};
use context_loader::config::ConfigError;
use context_loader::service::Service;
use context_loader::{cli, http, stdio};
use mcp_common::transport::runtime;

/// Exit code for a configuration error (as clap uses for usage errors).
const CONFIG_ERROR_EXIT: u8 = 2;

fn main() -> ExitCode {
    let Cli { global, command } = Cli::parse();
    // Over HTTP nothing is served from the disk unless an operator says where.
    let cwd_by_default = !matches!(command, Command::Http(_));
    let service = match global.service(cwd_by_default) {
        Ok(service) => service,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(CONFIG_ERROR_EXIT);
        }
    };
    match command {
        Command::Tool(tool) => {
            let cache =
                cli::file_cache::FileCache::locate(global.cache_dir.as_deref(), global.no_cache);
            // Measures no cache file will hold are not kept in memory either.
            let service = if cache.is_none() {
                service.without_measure_cache()
            } else {
                service
            };
            let code = cli::run(&service, tool, cache);
            // The answer is out and the cache saved: the process ends here, and the
            // kernel takes its memory back at once. Freeing the measurement cache entry
            // by entry took ~7 ms after `files` over 16k files. Nothing the service
            // holds has work to do when dropped (no child, no file to flush).
            std::mem::forget(service);
            code
        }
        Command::Stdio(args) => serve(
            &service,
            stdio::run(service.clone(), global.tools.clone(), args),
            global.log_format,
        ),
        Command::Http(args) => serve(
            &service,
            http::run(service.clone(), global.tools.clone(), args),
            global.log_format,
        ),
    }
}

/// Run a server on a multi-threaded runtime; logs (and a fatal error) go to stderr.
fn serve(
    service: &Service,
    server: impl Future<Output = anyhow::Result<()>>,
    log_format: mcp_common::transport::LogFormat,
) -> ExitCode {
    // rmcp logs several lines per request at info: under load, megabytes a second.
    mcp_common::transport::init_logging_as("info,rmcp=warn", log_format);
    if let Some(refused) = service.refused_root() {
        tracing::warn!(
            "file tools have no root: the working directory {refused} is not served unless \
             named; start with --root DIR"
        );
    }
    // Compile the tokenizers' regexes and build the estimates' weight table (a few
    // ms; the vocabularies themselves are read in place) beside start-up rather than
    // in it: `initialize` is answered at once, and the first count finds them ready.
    let warm = service.clone();
    std::thread::spawn(move || {
        yield_cpu_to_other_threads();
        warm.warm_up();
    });
    let Some(runtime) = runtime(None) else {
        return ExitCode::FAILURE;
    };
    let served = runtime.block_on(server);
    // Dropping a runtime waits for its blocking pool: a call still running there
    // (a shutdown grace that ran out) would keep the process alive. Exit promptly.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<ConfigError>() => {
            eprintln!("error: {e:#}");
            ExitCode::from(CONFIG_ERROR_EXIT)
        }
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Lower the calling thread's priority to the lowest (nice 19). The warm-up only saves
/// later calls a few ms, and a process's threads share one scheduling group's CPU: at
/// normal priority it slowed start-up and the first count 2-3x on a busy machine
/// (bench section `server-first-count`).
fn yield_cpu_to_other_threads() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take no pointers; on Linux, PRIO_PROCESS with a
    // thread id sets that thread's nice value. Failure leaves the priority as it was.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, 19);
    }
}
