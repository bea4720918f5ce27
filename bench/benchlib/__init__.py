"""Pure helpers of the benchmark harness (bench/run.sh); test infrastructure, never shipped."""
