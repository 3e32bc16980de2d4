//! What a run measured, and the one-line summary the xtask harness parses.

use std::time::Duration;

#[derive(Default)]
pub struct Run {
    /// Calls made in the measured window (after warm-up), all answered correctly.
    pub calls: usize,
    /// Every failure, warm-up included: transport, HTTP status, JSON-RPC error,
    /// `isError`, or a wrong count. Any error fails a load test.
    pub errors: usize,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// Latency of each measured call, microseconds.
    pub latencies_us: Vec<u64>,
    /// The first few errors, for the report.
    pub error_samples: Vec<String>,
}

impl Run {
    pub fn error(&mut self, message: String) {
        self.errors += 1;
        if self.error_samples.len() < 5 {
            self.error_samples.push(message);
        }
    }

    pub fn merge(&mut self, other: Run) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.latencies_us.extend(other.latencies_us);
        for sample in other.error_samples {
            if self.error_samples.len() < 5 {
                self.error_samples.push(sample);
            }
        }
    }

    /// `key=value` pairs on one line (stdout), e.g. `calls=1000 errors=0 calls_per_s=…`.
    pub fn summary_line(&mut self) -> String {
        self.latencies_us.sort_unstable();
        let seconds = self.elapsed.as_secs_f64();
        let rate = if seconds > 0.0 {
            self.calls as f64 / seconds
        } else {
            0.0
        };
        format!(
            "calls={} errors={} seconds={seconds:.3} calls_per_s={rate:.1} \
             p50_ms={:.3} p90_ms={:.3} p99_ms={:.3} max_ms={:.3}",
            self.calls,
            self.errors,
            self.percentile_ms(0.50),
            self.percentile_ms(0.90),
            self.percentile_ms(0.99),
            self.percentile_ms(1.0),
        )
    }

    /// Nearest-rank percentile of the (sorted) latencies, in milliseconds.
    fn percentile_ms(&self, p: f64) -> f64 {
        let n = self.latencies_us.len();
        if n == 0 {
            return f64::NAN;
        }
        let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
        self.latencies_us[rank - 1] as f64 / 1e3
    }
}
