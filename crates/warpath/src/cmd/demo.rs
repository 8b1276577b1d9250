//! `warpath demo`: every algorithm on a built-in input, verified, in one table.

use std::time::Instant;

use anyhow::Result;

use super::DEMOS;
use crate::report::{AlreadyReported, DemoSize, Rows};

/// Arguments of `warpath demo`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Input sizes.
    #[arg(long, value_enum, default_value_t = DemoSize::Small)]
    size: DemoSize,
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let started = Instant::now();
    // Rows print as they finish (the table under --json waits for the end).
    let mut sink = Rows::new(json);
    for demo in DEMOS {
        demo(args.size, &mut sink);
    }
    let rows = sink.rows;
    let failed = rows.iter().filter(|r| !r.verified).count();
    if json {
        crate::cli_io::print_json!({
            "rows": rows,
            "verified": failed == 0,
            "seconds": started.elapsed().as_secs_f64(),
        });
    } else {
        println!(
            "demo: {} algorithm runs, {} verified, {} failed, {:.1} s",
            rows.len(),
            rows.len() - failed,
            failed,
            started.elapsed().as_secs_f64()
        );
    }
    if failed > 0 {
        return Err(AlreadyReported(format!("{failed} demo run(s) failed verification")).into());
    }
    Ok(())
}
