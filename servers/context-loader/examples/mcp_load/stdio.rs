//! Sequential round trips over stdio from rmcp's client: spawn the server command,
//! initialize, then one `count-tokens` call at a time, each checked.

use std::process::Stdio;
use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::stats::Run;
use crate::texts::Sample;

pub struct StdioRoundTrips {
    /// The server command line, e.g. `context-loader stdio` or `node server.mjs stdio`.
    pub command: Vec<String>,
    pub warmup_calls: usize,
    pub calls: usize,
    pub model: String,
    pub samples: Vec<Sample>,
}

pub async fn run(load: StdioRoundTrips) -> Run {
    let mut run = Run::default();
    let Some((program, args)) = load.command.split_first() else {
        run.error("no server command given".into());
        return run;
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args).stderr(Stdio::null());
    let transport = match TokioChildProcess::new(command) {
        Ok(transport) => transport,
        Err(e) => {
            run.error(format!("cannot start {program}: {e}"));
            return run;
        }
    };
    let client = match ().serve(transport).await {
        Ok(client) => client,
        Err(e) => {
            run.error(format!("initialize: {e}"));
            return run;
        }
    };
    let mut measure_from = Instant::now();
    for i in 0..load.warmup_calls + load.calls {
        if i == load.warmup_calls {
            measure_from = Instant::now();
        }
        let sample = &load.samples[i % load.samples.len()];
        let mut arguments = JsonObject::new();
        arguments.insert("text".into(), json!(sample.text));
        arguments.insert("model".into(), json!(load.model));
        let started = Instant::now();
        let outcome = client
            .call_tool(CallToolRequestParams::new("count-tokens").with_arguments(arguments))
            .await;
        let latency = started.elapsed();
        let checked = match outcome {
            Err(e) => Err(format!("call failed: {e}")),
            Ok(result) if result.is_error == Some(true) => {
                Err(format!("tool error: {:?}", result.content))
            }
            Ok(result) => {
                let counted = result
                    .structured_content
                    .as_ref()
                    .and_then(|s| s.get("token_count"))
                    .and_then(Value::as_u64);
                if counted == Some(sample.expected_tokens) {
                    Ok(())
                } else {
                    Err(format!(
                        "wrong count: got {counted:?}, want {}",
                        sample.expected_tokens
                    ))
                }
            }
        };
        match checked {
            Ok(()) if i >= load.warmup_calls => {
                run.calls += 1;
                run.latencies_us.push(latency.as_micros() as u64);
            }
            Ok(()) => {}
            Err(e) => run.error(e),
        }
    }
    run.elapsed = measure_from.elapsed();
    let _ = client.cancel().await;
    run
}
